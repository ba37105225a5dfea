"""estimator_compat.adapters: a legacy model_fn/input_fn in TF2 code."""

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf

import estimator_compat
from estimator_compat import adapters
from estimator_compat.errors import GUARD_WARNING
from examples.mlp_classifier import model as mlp

estimator_compat.install()

PARAMS = {"hidden_units": [16], "learning_rate": 0.01, "batch_size": 16}
X, Y = mlp.make_data(64, seed=3)


def _module(**kwargs):
  return adapters.ModelFnModule(mlp.model_fn, params=PARAMS, **kwargs)


def test_outputs_eagerly_and_in_tf_function_agree():
  module = _module()
  eager = module({"image": X})["predictions"]["probabilities"]
  traced = tf.function(lambda f: module(f))({"image": X})
  np.testing.assert_allclose(traced["predictions"]["probabilities"], eager,
                             rtol=1e-6)
  assert set(module.variables_by_legacy_name()) == {
      "dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias",
      "global_step"}


def test_train_step_runs_the_v1_optimizer_and_advances_global_step():
  module = _module()
  first = float(module.train_step({"image": X}, Y))
  step = tf.function(module.train_step)
  for _ in range(20):
    last = float(step({"image": X}, Y))
  assert last < first
  assert int(module.global_step.numpy()) == 21
  names = module.variables_by_legacy_name()
  assert "dense/kernel/Adam" in names and "beta1_power" in names


def test_eval_metrics_accumulate_like_evaluate_and_reset():
  module = _module()
  first = module({"image": X[:32]}, Y[:32], mode="eval")["metrics"]
  both = module({"image": X[32:]}, Y[32:], mode="eval")["metrics"]
  module.reset_metrics()
  whole = module({"image": X}, Y, mode="eval")["metrics"]
  assert set(whole) == {"accuracy", "loss"}
  np.testing.assert_allclose(both["accuracy"], whole["accuracy"], rtol=1e-6)
  np.testing.assert_allclose(both["loss"], whole["loss"], rtol=1e-5)
  assert first["accuracy"] != both["accuracy"] or first["loss"] != both["loss"]


def test_loss_fn_with_a_keras_optimizer():
  module = _module()
  module.build({"image": X}, Y)
  optimizer = tf.keras.optimizers.SGD(0.1)

  @tf.function
  def step(features, labels):
    with tf.GradientTape() as tape:
      loss = module.loss_fn(features, labels)
    grads = tape.gradient(loss, module.trainable_variables)
    optimizer.apply_gradients(zip(grads, module.trainable_variables))
    return loss

  first = float(step({"image": X}, Y))
  for _ in range(20):
    last = float(step({"image": X}, Y))
  assert last < first
  assert len(module.trainable_variables) == 4
  assert int(module.global_step.numpy()) == 0  # No train_op ran.


def test_under_strategy_run():
  strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
  with strategy.scope():
    module = _module()
    module.build({"image": X}, Y)
  assert all(isinstance(v, tf.distribute.DistributedValues)
             for v in module.trainable_variables)
  dataset = strategy.experimental_distribute_dataset(
      tf.data.Dataset.from_tensor_slices(({"image": X}, Y)).batch(16))

  @tf.function
  def step(features, labels):
    return strategy.run(module.train_step, args=(features, labels))

  losses = [float(strategy.reduce("sum", step(f, l), None))
            for f, l in dataset]
  assert len(losses) == 4 and int(module.global_step.numpy()) == 4

  @tf.function
  def predict(features):
    return strategy.run(lambda f: module(f)["predictions"]["classes"],
                        args=(features,))

  classes = predict({"image": tf.constant(X)})
  np.testing.assert_array_equal(
      strategy.experimental_local_results(classes)[0],
      module({"image": X})["predictions"]["classes"])


def test_keras_fit_under_a_strategy():
  strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
  with strategy.scope():
    model = adapters.model_fn_to_keras(mlp.model_fn, params=PARAMS)
  train = adapters.input_fn_to_dataset_fn(mlp.input_fn, "train",
                                          params=PARAMS)()
  history = model.fit(train, steps_per_epoch=20, epochs=2, verbose=0)
  assert history.history["loss"][1] < history.history["loss"][0]
  assert int(model.module.global_step.numpy()) == 40


_TWO_DEVICES = """
import json
import numpy as np
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(
    cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
import estimator_compat
estimator_compat.install()
from estimator_compat import adapters
from examples.mlp_classifier import model as mlp
x, y = mlp.make_data(64, seed=3)
dataset = tf.data.Dataset.from_tensor_slices(({"image": x}, y)).batch(64)

def train(devices):
  strategy = tf.distribute.MirroredStrategy(devices)
  with strategy.scope():
    module = adapters.ModelFnModule(
        mlp.model_fn, params={"hidden_units": [8]},
        config=estimator_compat.RunConfig(tf_random_seed=1))
    module.build(*dataset.element_spec)
    optimizer = tf.keras.optimizers.SGD(0.5)

  def replica_step(features, labels):
    with tf.GradientTape() as tape:
      loss = module.loss_fn(features, labels) / len(devices)
    grads = tape.gradient(loss, module.trainable_variables)
    optimizer.apply_gradients(zip(grads, module.trainable_variables))
    return loss

  @tf.function
  def step(features, labels):
    return strategy.run(replica_step, args=(features, labels))

  batches = strategy.experimental_distribute_dataset(dataset.repeat(5))
  for features, labels in batches:
    step(features, labels)
  kernel = module.variables_by_legacy_name()["dense/kernel"].numpy()
  copies = [[c.numpy().tolist() for c in v.values]
            for v in module.trainable_variables]
  refused = ""
  if len(devices) > 1:
    try:
      strategy.run(tf.function(module.train_step),
                   args=next(iter(batches)))
    except ValueError as e:
      refused = str(e)
  return kernel, copies, refused

one, _, _ = train(["/cpu:0"])
two, copies, refused = train(["/cpu:0", "/cpu:1"])
print("RESULT " + json.dumps({
    "max_diff": float(np.abs(one - two).max()),
    "copies_equal": all(c[0] == c[1] for c in copies),
    "refused": refused}))
"""


def test_two_devices_per_worker_train_like_one_with_loss_fn():
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  env = dict(os.environ, PYTHONPATH=root, TF_CPP_MIN_LOG_LEVEL="3")
  done = subprocess.run([sys.executable, "-c", _TWO_DEVICES], env=env,
                        capture_output=True, text=True, timeout=180,
                        check=False)
  lines = [l for l in done.stdout.splitlines() if l.startswith("RESULT ")]
  assert lines, done.stderr[-3000:]
  result = json.loads(lines[-1][len("RESULT "):])
  # Each replica reads and updates its own copies; the gradients averaged
  # over the two half batches are the full batch's.
  assert result["copies_equal"]
  assert result["max_diff"] < 1e-5
  assert "module.train_step runs the model_fn's v1 optimizer" in (
      result["refused"])


def test_legacy_checkpoints_go_back_and_forth_with_the_estimator(tmp_path):
  model_dir = str(tmp_path / "model")
  config = estimator_compat.RunConfig(model_dir=model_dir, tf_random_seed=3)
  estimator = estimator_compat.Estimator(mlp.model_fn, params=PARAMS,
                                         config=config)
  input_fn = lambda: tf.data.Dataset.from_tensor_slices(  # pylint: disable=g-long-lambda
      ({"image": X}, Y)).repeat().batch(16)
  estimator.train(input_fn, steps=5)
  module = _module()
  module.build({"image": X}, Y)
  assert module.load_legacy_checkpoint(model_dir).endswith("model.ckpt-5")
  assert int(module.global_step.numpy()) == 5
  expected = estimator.get_variable_value("dense/kernel/Adam")
  np.testing.assert_array_equal(
      module.variables_by_legacy_name()["dense/kernel/Adam"].numpy(), expected)
  for _ in range(3):
    module.train_step({"image": X[:16]}, Y[:16])
  written = module.save_legacy_checkpoint(model_dir)
  assert written == os.path.join(model_dir, "model.ckpt-8")
  assert tf.train.latest_checkpoint(model_dir) == written
  estimator.train(input_fn, steps=2)
  assert estimator.get_variable_value("global_step") == 10


def test_slots_created_after_loading_come_from_the_checkpoint(tmp_path):
  trained = _module()
  for _ in range(3):
    trained.train_step({"image": X}, Y)
  path = trained.save_legacy_checkpoint(str(tmp_path / "ckpt"))
  module = _module()
  module({"image": X})  # PREDICT: no slots yet.
  module.load_legacy_checkpoint(path)
  module.build({"image": X}, Y)  # TRAIN creates the slots...
  np.testing.assert_array_equal(  # ...restored from the same checkpoint.
      module.variables_by_legacy_name()["dense/kernel/Adam"].numpy(),
      trained.variables_by_legacy_name()["dense/kernel/Adam"].numpy())


def test_tf_train_checkpoint_tracks_the_legacy_variables(tmp_path):
  module = _module()
  module.train_step({"image": X}, Y)
  path = tf.train.Checkpoint(model=module).save(str(tmp_path / "ck"))
  other = _module()
  other.train_step({"image": X}, Y)
  other.train_step({"image": X}, Y)
  tf.train.Checkpoint(model=other).restore(path).assert_consumed()
  for name, variable in module.variables_by_legacy_name().items():
    np.testing.assert_array_equal(
        other.variables_by_legacy_name()[name].numpy(), variable.numpy())


def test_load_before_any_variable_is_a_clear_error(tmp_path):
  with pytest.raises(ValueError, match="no variables yet.*build"):
    _module().load_legacy_checkpoint(str(tmp_path))


def _seed_like_model_fn(features, labels, mode):
  """The seed program's bug: minimize() without global_step."""
  logits = tf.compat.v1.layers.dense(features["image"], 10)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss)
  return estimator_compat.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                        predictions=logits)


def test_train_op_without_global_step_still_advances_it(caplog):
  module = adapters.ModelFnModule(_seed_like_model_fn)
  step = tf.function(module.train_step)
  for _ in range(3):
    step({"image": X}, Y)
  assert int(module.global_step.numpy()) == 3
  assert GUARD_WARNING in caplog.text


def test_keras_model_fit_evaluate_predict():
  model = adapters.model_fn_to_keras(mlp.model_fn, params=PARAMS)
  train = adapters.input_fn_to_dataset_fn(mlp.input_fn, "train",
                                          params=PARAMS)()
  history = model.fit(train, steps_per_epoch=30, epochs=2, verbose=0)
  assert history.history["loss"][1] < history.history["loss"][0]
  assert int(model.module.global_step.numpy()) == 60
  evaluation = adapters.input_fn_to_dataset_fn(mlp.input_fn, "eval",
                                               params=PARAMS)()
  first = model.evaluate(evaluation, verbose=0, return_dict=True)
  again = model.evaluate(evaluation, verbose=0, return_dict=True)
  assert first == again and set(first) == {"accuracy", "loss"}
  predictions = model.predict(evaluation.map(lambda f, l: f), verbose=0)
  assert predictions["probabilities"].shape == (500, 10)


def _count(dataset_fn):
  return sum(int(tf.shape(tf.nest.flatten(b)[0])[0]) for b in dataset_fn())


def _batches():
  return tf.data.Dataset.from_tensor_slices(({"image": X}, Y)).batch(10)


@pytest.mark.parametrize("kind", ["dataset", "tuple", "features", "one_shot",
                                  "initializable", "numpy", "pandas"])
def test_every_input_fn_shape(kind):
  def tensors_input_fn():
    if kind == "dataset":
      return _batches()
    if kind == "tuple":
      return {"image": tf.constant(X)}, tf.constant(Y)
    if kind == "features":
      return {"image": tf.constant(X)}
    iterator = (tf.compat.v1.data.make_one_shot_iterator(_batches())
                if kind == "one_shot" else
                tf.compat.v1.data.make_initializable_iterator(_batches()))
    return iterator.get_next()
  input_fn = tensors_input_fn
  if kind == "numpy":
    input_fn = estimator_compat.inputs.numpy_input_fn(
        {"image": X}, Y, batch_size=10, shuffle=False, num_epochs=1)
  if kind == "pandas":
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1]})
    input_fn = estimator_compat.inputs.pandas_input_fn(
        frame, pd.Series(Y), batch_size=10, shuffle=False, num_epochs=1)
  dataset_fn = adapters.input_fn_to_dataset_fn(input_fn, "eval")
  if kind in ("tuple", "features"):  # Constant tensors repeat, as a Session.
    first = next(iter(dataset_fn()))
    assert tf.nest.flatten(first)[0].shape[0] == 64
  else:
    assert _count(dataset_fn) == 64


def test_input_fn_takes_params_mode_and_input_context():
  seen = {}

  def input_fn(params, mode, input_context):
    seen.update(params=params, mode=mode, context=input_context)
    return _batches().batch(params["batch_size"])

  strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
  dataset_fn = adapters.input_fn_to_dataset_fn(input_fn, "train",
                                               params={"batch_size": 2})
  dataset = strategy.distribute_datasets_from_function(dataset_fn)
  next(iter(dataset))
  assert seen["mode"] == "train" and seen["params"] == {"batch_size": 2}
  assert seen["context"].num_replicas_in_sync == 1


def test_placeholder_input_fn_is_refused_clearly():
  def input_fn():
    return {"image": tf.compat.v1.placeholder(tf.float32, [None, 64])}
  with pytest.raises(ValueError, match="placeholder.*Fix: return a tf.data"):
    adapters.input_fn_to_dataset_fn(input_fn, "infer")()


@pytest.mark.slow
def test_multi_worker_mirrored_loop_with_loss_fn(tmp_path):
  """Two worker processes: loss_fn + a tf-keras optimizer stay in sync."""
  from estimator_compat.distribute import cluster_tasks  # pylint: disable=g-import-not-at-top
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  cluster = cluster_tasks.loopback_cluster(workers=2, chief=0)
  processes = []
  for index in range(2):
    env = dict(os.environ, PYTHONPATH=root, TF_CPP_MIN_LOG_LEVEL="3",
               TF_CONFIG=cluster_tasks.tf_config(cluster, "worker", index))
    processes.append(subprocess.Popen(
        [sys.executable, os.path.join(root, "tests",
                                      "adapters_mwms_program.py")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True))
  results = []
  try:
    for process in processes:
      out, _ = process.communicate(timeout=240)
      lines = [l for l in out.splitlines() if l.startswith("RESULT ")]
      assert process.returncode == 0 and lines, out[-3000:]
      results.append(json.loads(lines[-1][len("RESULT "):]))
  finally:
    for process in processes:
      if process.poll() is None:
        process.kill()
  assert results[0]["checksum"] == pytest.approx(results[1]["checksum"],
                                                 rel=1e-6)
  assert results[0]["losses"] != results[1]["losses"]  # Different data.
  assert results[0]["losses"][-1] < results[0]["losses"][0]
  assert "module.train_step runs the model_fn's v1 optimizer" in (
      results[0]["refused"])


def _scaffold_model_fn(features, labels, mode):
  logits = tf.compat.v1.layers.dense(features["image"], 10)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  scaffold = tf.compat.v1.train.Scaffold(init_fn=lambda scaffold, sess: None)
  return estimator_compat.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                        scaffold=scaffold)


def test_scaffold_that_needs_a_session_is_refused_with_the_fix():
  module = adapters.ModelFnModule(_scaffold_model_fn)
  with pytest.raises(ValueError, match="Scaffold.init_fn.*TF1 Session.*Fix"):
    module.train_step({"image": X}, Y)


def _hooks_model_fn(features, labels, mode):
  spec = _seed_like_model_fn(features, labels, mode)
  return spec._replace(training_hooks=[
      tf.compat.v1.train.LoggingTensorHook({"loss": spec.loss},
                                           every_n_iter=1)])


def test_hooks_are_not_run_and_say_so(caplog):
  module = adapters.ModelFnModule(_hooks_model_fn)
  module.train_step({"image": X}, Y)
  assert "does not run the EstimatorSpec's training_hooks" in caplog.text
