"""tf.compat.v1.estimator.tpu: TPUEstimator programs with use_tpu=False.

What the real TPUEstimator (tensorflow-estimator 2.15) did without a TPU:
params['batch_size'] per mode for input_fn and model_fn, TPUEstimatorSpec's
eval_metrics / host_call / scaffold_fn / hooks honoured; the BERT-shaped
golden (tests/golden_programs/tpu_bert.py) compares the numbers.
"""

import glob
import json
import logging
import os

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.util import event_pb2

import estimator_compat
from estimator_compat import tpu
from tests import models

X = np.random.RandomState(0).normal(size=(64, 4)).astype(np.float32)
Y = (X.sum(axis=1) > 0).astype(np.int32)


def _input_fn(params):
  """Reads params['batch_size'], as TPU input_fns did."""
  return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(
      params["batch_size"], drop_remainder=True)


def _eval_input_fn(params):
  return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(
      params["batch_size"])


def _model_fn(features, labels, mode, params):
  logits = tf.compat.v1.layers.dense(features["x"], 2, name="out")
  predictions = {"classes": tf.argmax(logits, axis=1, output_type=tf.int32),
                 "batch": tf.fill([tf.shape(logits)[0]],
                                  params.get("batch_size", -1))}
  if mode == estimator_compat.ModeKeys.PREDICT:
    return tpu.TPUEstimatorSpec(mode, predictions=predictions)
  per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(
      labels=labels, logits=logits)
  loss = tf.reduce_mean(per_example)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())

  def metric_fn(labels, classes, batch):
    return {"accuracy": tf.compat.v1.metrics.accuracy(labels, classes),
            "batch": tf.compat.v1.metrics.mean(batch)}

  return tpu.TPUEstimatorSpec(
      mode, loss=loss, train_op=train_op,
      eval_metrics=(metric_fn, {"labels": labels,
                                "classes": predictions["classes"],
                                "batch": predictions["batch"]}))


def _estimator(model_dir, model_fn=_model_fn, iterations=2,
               log_step_count_steps=100, **kwargs):
  config = tpu.RunConfig(
      model_dir=str(model_dir), tf_random_seed=1, save_checkpoints_steps=4,
      log_step_count_steps=log_step_count_steps,
      tpu_config=tpu.TPUConfig(iterations_per_loop=iterations))
  kwargs.setdefault("use_tpu", False)
  return tpu.TPUEstimator(model_fn=model_fn, config=config,
                          train_batch_size=8, eval_batch_size=16,
                          predict_batch_size=4, **kwargs)


def _tags(directory):
  tags = set()
  for path in glob.glob(os.path.join(str(directory), "events.*")):
    for record in tf.compat.v1.io.tf_record_iterator(path):
      tags.update(v.tag for v in event_pb2.Event.FromString(record)
                  .summary.value)
  return tags


def test_use_tpu_true_builds_and_refuses_each_call_on_the_tpu(tmp_path):
  # As the real TPUEstimator without a TPU: built (its TPU argument checks
  # made), and each call that needs the TPU fails after the checks it made
  # first; here the failure names use_tpu=False, before anything is written.
  est = _estimator(tmp_path / "m", use_tpu=True)
  with pytest.raises(TypeError, match="Train steps must be int"):
    est.train(_input_fn, steps=1.5)
  with pytest.raises(ValueError, match="Must specify steps > 0"):
    est.train(_input_fn, steps=-1)
  with pytest.raises(ValueError, match="use_tpu=False"):
    est.train(_input_fn, steps=1)
  with pytest.raises(ValueError, match="use_tpu=False"):
    est.evaluate(_input_fn, steps=1)
  with pytest.raises(ValueError, match="use_tpu=False"):
    next(est.predict(_input_fn))
  assert not os.path.exists(tmp_path / "m")
  with pytest.raises(ValueError, match="`train_batch_size` cannot be `None`"):
    tpu.TPUEstimator(model_fn=_model_fn, config=tpu.RunConfig(
        model_dir=str(tmp_path / "n")))
  with pytest.raises(TypeError, match="train_batch_size must be int"):
    tpu.TPUEstimator(model_fn=_model_fn, train_batch_size=1.0,
                     config=tpu.RunConfig(model_dir=str(tmp_path / "n")))
  # eval_on_tpu=False: the real one evaluated on CPU/GPU; so does this.
  on_cpu = _estimator(tmp_path / "e", use_tpu=True, eval_on_tpu=False)
  metrics = on_cpu.evaluate(_input_fn, steps=1)
  assert metrics["global_step"] == 0 and 0.0 <= metrics["accuracy"] <= 1.0
  without_eval_size = tpu.TPUEstimator(
      model_fn=_model_fn, train_batch_size=8,
      config=tpu.RunConfig(model_dir=str(tmp_path / "n")))
  with pytest.raises(ValueError, match="eval_batch_size in TPUEstimator "
                     "constructor cannot be `None`"):
    without_eval_size.evaluate(_input_fn, steps=1)


def test_use_tpu_true_makes_the_real_ones_graph_checks_first(tmp_path):
  # As the real TPUEstimator building its TPU graph: the input's static
  # shapes, model_fn's labels, the spec's chief hooks and predictions.
  est = _estimator(tmp_path / "m", use_tpu=True)
  with pytest.raises(ValueError, match="features to the model returned by "
                     "input_fn must have static shape"):
    est.train(lambda params: tf.data.Dataset.from_tensor_slices(
        ({"x": X}, Y)).repeat().batch(params["batch_size"]), steps=1)

  def without_labels(features, mode, params):
    del features, mode, params

  est = _estimator(tmp_path / "m", model_fn=without_labels, use_tpu=True)
  with pytest.raises(ValueError, match="model_fn does not take labels, but "
                     "input_fn returns labels"):
    est.train(_input_fn, steps=1)

  def with_chief_hooks(features, labels, mode, params):
    spec = _model_fn(features, labels, mode, params).as_estimator_spec()
    return spec._replace(training_chief_hooks=[
        estimator_compat.SessionRunHook()])

  est = _estimator(tmp_path / "m", model_fn=with_chief_hooks, use_tpu=True)
  with pytest.raises(ValueError, match="training_chief_hooks returned by "
                     "EstimatorSpec is not supported in TPUEstimator"):
    est.train(_input_fn, steps=1)

  def dynamic_predictions(features, labels, mode, params):
    del labels, params
    return tpu.TPUEstimatorSpec(mode, predictions={
        "x": tf.compat.v1.placeholder(tf.float32, [None, 4]),
        "y": features["x"]})

  est = _estimator(tmp_path / "m", model_fn=dynamic_predictions, use_tpu=True)
  with pytest.raises(ValueError, match=r"key \(x\) in TPUEstimatorSpec."
                     "predictions has dynamic shape"):
    next(est.predict(_input_fn))
  assert not os.path.exists(tmp_path / "m")


def test_config_must_be_the_tpu_run_config(tmp_path):
  with pytest.raises(ValueError, match="tpu_config.RunConfig"):
    tpu.TPUEstimator(model_fn=_model_fn, use_tpu=False,
                     config=estimator_compat.RunConfig(str(tmp_path)))


def test_reserved_params_and_model_fn_without_params_refused(tmp_path):
  with pytest.raises(ValueError, match="reserved keys"):
    _estimator(tmp_path, params={"batch_size": 3})
  with pytest.raises(ValueError, match="does not include params"):
    _estimator(tmp_path, model_fn=lambda features, labels, mode: None)


def test_input_fn_without_params_refused_before_training(tmp_path):
  est = _estimator(tmp_path / "m")
  with pytest.raises(ValueError, match="input_fn .* does not include params"):
    est.train(lambda: _input_fn({"batch_size": 8}), steps=1)
  assert not glob.glob(str(tmp_path / "m" / "model.ckpt-*"))


def test_batch_size_per_mode_and_eval_metrics_dict(engine, tmp_path):
  est = _estimator(tmp_path)
  est.train(_input_fn, steps=6)
  assert est.get_variable_value("global_step") == 6
  metrics = est.evaluate(_eval_input_fn)
  assert metrics["batch"] == 16.0
  assert 0.0 <= metrics["accuracy"] <= 1.0
  predictions = list(est.predict(_eval_input_fn))
  assert len(predictions) == 64
  assert {int(p["batch"]) for p in predictions} == {4}


def test_iterations_per_loop_leaves_every_step_to_the_hooks(engine, tmp_path):
  # Without a TPU the real TPUEstimator ran one step per session call, so a
  # hook saw every step whatever iterations_per_loop said.
  config = tpu.RunConfig(tpu_config=tpu.TPUConfig(iterations_per_loop=4))
  assert config.steps_per_loop is None and not config.steps_per_loop_required
  replaced = config.replace(tpu_config=tpu.TPUConfig(iterations_per_loop=3))
  assert replaced.tpu_config.iterations_per_loop == 3
  assert replaced.steps_per_loop is None
  assert tpu.RunConfig(steps_per_loop=2).steps_per_loop_required
  recorder = models.GlobalStepRecorder()
  est = _estimator(tmp_path, iterations=4)
  est.train(_input_fn, steps=6, hooks=[recorder])
  assert len(recorder.steps) == 6  # One after_run per step.
  if engine == "function":
    assert recorder.steps == [0, 1, 2, 3, 4, 5]
  else:  # TF1 itself may read the step after its increment under load.
    assert all(s in (i, i + 1) for i, s in enumerate(recorder.steps))


def test_graph_engine_runs_a_large_iterations_per_loop(engine, tmp_path):
  est = _estimator(tmp_path, iterations=100)
  est.train(_input_fn, steps=5)
  assert est.get_variable_value("global_step") == 5


def test_every_config_field_is_accepted():
  resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
      tf.train.ClusterSpec({}), master="grpc://somewhere:8470")
  config = tpu.RunConfig(
      cluster=resolver, evaluation_master="grpc://eval:8470",
      tpu_config=tpu.TPUConfig(
          iterations_per_loop="2m", num_shards=8, num_cores_per_replica=2,
          per_host_input_for_training=tpu.InputPipelineConfig.PER_HOST_V2,
          tpu_job_name="tpu_worker", initial_infeed_sleep_secs=3,
          input_partition_dims=[[1, 2], None],
          eval_training_input_configuration=tpu.InputPipelineConfig.SLICED,
          experimental_host_call_every_n_steps=2,
          experimental_allow_per_host_v2_parallel_get_next=True,
          experimental_feed_hook=object),
      save_summary_steps=7)
  assert config.master == "grpc://somewhere:8470"
  assert config.evaluation_master == "grpc://eval:8470"
  assert config.tpu_config.num_shards == 8
  assert config.save_summary_steps == 7
  assert tpu.TPUConfig(per_host_input_for_training=False).per_host_input_for_training == (
      tpu.InputPipelineConfig.PER_SHARD_V1)


@pytest.mark.parametrize("kwargs, match", [
    (dict(iterations_per_loop=0), "iterations_per_loop"),
    (dict(iterations_per_loop="10x"), "iterations_per_loop"),
    # Leading zeros are refused, as by the real TPUConfig.
    (dict(iterations_per_loop="012"), "iterations_per_loop"),
    (dict(iterations_per_loop="01s"), "iterations_per_loop"),
    (dict(num_cores_per_replica=3), "num_cores_per_replica"),
    (dict(eval_training_input_configuration=3),
     "eval_training_input_configuration"),
    (dict(input_partition_dims=[[1]]), "PER_HOST_V2"),
])
def test_tpu_config_validates_as_the_real_one(kwargs, match):
  with pytest.raises(ValueError, match=match):
    tpu.TPUConfig(**kwargs)


def _host_call_model_fn(model_dir):
  """A model_fn whose host_call writes `host_loss` with tf.summary writers."""

  def model_fn(features, labels, mode, params):
    del params
    logits = tf.compat.v1.layers.dense(features["x"], 2)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))
    global_step = tf.compat.v1.train.get_global_step()
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=global_step)

    def host_call_fn(gs, loss):
      with tf.compat.v2.summary.create_file_writer(
          os.path.join(model_dir, "host")).as_default():
        with tf.compat.v2.summary.record_if(True):
          tf.compat.v2.summary.scalar("host_loss", loss[0], step=gs[0])
          return tf.compat.v1.summary.all_v2_summary_ops()

    host_call = (host_call_fn, [tf.reshape(global_step, [1]),
                                tf.reshape(loss, [1])])
    return tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op,
                                host_call=host_call)

  return model_fn


@pytest.mark.parametrize("engine_name", ["graph", None])
def test_host_call_summaries_are_written(engine_name, tmp_path, monkeypatch,
                                         caplog):
  if engine_name:
    monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", engine_name)
  else:
    monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE", raising=False)
  model_dir = str(tmp_path)
  est = _estimator(tmp_path, model_fn=_host_call_model_fn(model_dir),
                   iterations=5)
  with caplog.at_level(logging.WARNING):
    est.train(_input_fn, steps=3)
  if engine_name is None:  # the default engine moved the call
    assert any("host_call" in r.getMessage() and "graph engine" in
               r.getMessage() for r in caplog.records)
  steps = []
  for path in glob.glob(os.path.join(model_dir, "host", "events.*")):
    for record in tf.compat.v1.io.tf_record_iterator(path):
      event = event_pb2.Event.FromString(record)
      if any(v.tag == "host_loss" for v in event.summary.value):
        steps.append(event.step)
  # The host call reads global_step in the same run as the train op, with
  # nothing ordering the read and the increment (so in the real
  # TPUEstimator too): step i's summary is at step i or, read late, i + 1.
  # Two reads may land on one step ([0, 2, 2]: step 1's read late).
  steps = sorted(steps)
  assert len(steps) == 3, steps
  assert all(step in (i, i + 1) for i, step in enumerate(steps)), steps


def test_host_call_on_the_function_engine_names_the_graph_engine(
    tmp_path, monkeypatch):
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "function")
  est = _estimator(tmp_path, model_fn=_host_call_model_fn(str(tmp_path)))
  with pytest.raises(Exception, match="host_call.*engine='graph'"):
    est.train(_input_fn, steps=3)


def test_spec_hooks_and_scaffold_fn_run(engine, tmp_path):
  calls = []

  class Hook(tf.compat.v1.train.SessionRunHook):

    def __init__(self, name):
      self._name = name

    def end(self, session):
      calls.append(self._name)

  def model_fn(features, labels, mode, params):
    del params
    logits = tf.compat.v1.layers.dense(features["x"], 2)
    if mode == estimator_compat.ModeKeys.PREDICT:
      return tpu.TPUEstimatorSpec(mode, predictions={"logits": logits},
                                  prediction_hooks=[Hook("predict")])
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())

    def scaffold_fn():
      calls.append(f"scaffold_fn:{mode}")
      return tf.compat.v1.train.Scaffold()

    return tpu.TPUEstimatorSpec(
        mode, loss=loss, train_op=train_op, scaffold_fn=scaffold_fn,
        training_hooks=[Hook("train")], evaluation_hooks=[Hook("eval")])

  est = _estimator(tmp_path, model_fn=model_fn)
  est.train(_input_fn, steps=2)
  est.evaluate(_eval_input_fn)
  list(est.predict(_eval_input_fn))
  assert {"train", "eval", "predict", "scaffold_fn:train",
          "scaffold_fn:eval"} <= set(calls)


def test_examples_per_second_replaces_the_step_counter(engine, tmp_path):
  # Every ceil(2 / iterations_per_loop) = 1 step, as the real one.
  est = _estimator(tmp_path, log_step_count_steps=2)
  assert est.config.log_step_count_steps is None
  est.train(_input_fn, steps=4)
  tf.compat.v1.summary.FileWriterCache.clear()
  assert {"examples/sec", "global_step/sec"} <= _tags(tmp_path)


def test_export_ignores_export_to_tpu_with_one_log_line(tmp_path, caplog):
  est = _estimator(tmp_path / "m")
  est.train(_input_fn, steps=1)

  def receiver():
    return estimator_compat.export.build_raw_serving_input_receiver_fn(
        {"x": tf.zeros([1, 4])})()

  with caplog.at_level(logging.INFO):
    path = est.export_saved_model(str(tmp_path / "export"), receiver)
  lines = [r.getMessage() for r in caplog.records
           if "export_to_tpu" in r.getMessage()]
  assert len(lines) == 1
  loaded = tf.saved_model.load(path.decode())
  assert list(loaded.signatures) == ["serving_default"]


def test_export_to_cpu_false_is_refused(tmp_path):
  est = _estimator(tmp_path / "m", export_to_cpu=False)
  est.train(_input_fn, steps=1)
  with pytest.raises(ValueError, match="export_to_cpu=True"):
    est.export_saved_model(
        str(tmp_path / "export"),
        estimator_compat.export.build_raw_serving_input_receiver_fn(
            {"x": tf.zeros([1, 4])}))
  assert not glob.glob(str(tmp_path / "export" / "*" / "saved_model.pb"))


def test_runs_under_a_strategy(tmp_path):
  config = tpu.RunConfig(
      model_dir=str(tmp_path), tf_random_seed=1,
      train_distribute=tf.distribute.MirroredStrategy(["/cpu:0"]),
      tpu_config=tpu.TPUConfig(iterations_per_loop=2))
  est = tpu.TPUEstimator(model_fn=_model_fn, config=config, use_tpu=False,
                         train_batch_size=8, eval_batch_size=16)
  est.train(_input_fn, steps=4)
  assert est.get_variable_value("global_step") == 4
  assert est.evaluate(_eval_input_fn)["batch"] == 16.0


def test_module_paths_and_namespaces_after_install():
  estimator_compat.install()
  # pylint: disable=g-import-not-at-top
  from tensorflow_estimator.python.estimator.tpu import tpu_config
  from tensorflow_estimator.python.estimator.tpu import tpu_estimator
  assert tpu_estimator.TPUEstimator is tpu.TPUEstimator
  assert tpu_estimator.TPUEstimatorSpec is tpu.TPUEstimatorSpec
  assert tpu_config.RunConfig is tpu.RunConfig
  assert tf.compat.v1.estimator.tpu.TPUEstimator is tpu.TPUEstimator
  assert tf.estimator.tpu.InputPipelineConfig.PER_HOST_V2 == 3


def test_cross_shard_optimizer_is_tensorflows_own():
  # Not ours: TF 2.21's class, as in TF 2.15 (it needs a TPU to run; BERT
  # wraps its optimizer only when use_tpu).
  optimizer = tf.compat.v1.tpu.CrossShardOptimizer(
      tf.compat.v1.train.GradientDescentOptimizer(0.1))
  assert type(optimizer).__module__.startswith("tensorflow.")


def test_no_between_graph_session_config_in_a_cluster(monkeypatch):
  # As the real tpu.RunConfig: TF_CONFIG's cluster gives no device filters.
  monkeypatch.setenv("TF_CONFIG", json.dumps({
      "cluster": {"chief": ["host3:3"], "worker": ["host3:4"]},
      "task": {"type": "chief", "index": 0}}))
  assert tpu.RunConfig().session_config is None
  assert estimator_compat.RunConfig().session_config is not None
