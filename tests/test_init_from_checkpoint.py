"""tf.compat.v1.train.init_from_checkpoint inside model_fn, as under TF 2.15.

What the real Estimator (TF 2.15.1 + tensorflow-estimator 2.15.0) did with
these programs, run there by hand: a variable named in the assignment map
starts from the checkpoint's value whenever it is initialized (a fresh
model_dir, or evaluate()/predict() with no checkpoint); a model_dir's own
checkpoint, once there, is restored instead; a warm start wins over it; a
local variable takes it on every call. The function engine once made the
variables eagerly and left the request unrun: the variables silently kept
their initializers' values.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat import adapters
from estimator_compat.errors import NeedsGraphEngine


def _model_fn(features, labels, mode, params):
  del labels
  w = tf.compat.v1.get_variable(
      "enc/w", [2], initializer=tf.compat.v1.constant_initializer(
          params["init"]))
  local = tf.compat.v1.get_local_variable(
      "state/local", [2], initializer=tf.compat.v1.constant_initializer(
          params["init"]))
  if params.get("source"):
    tf.compat.v1.train.init_from_checkpoint(params["source"], params["map"])
  loss = tf.reduce_sum(w * features["x"])
  row = 0.0 * features["x"][:, :1]
  return tfe.EstimatorSpec(
      mode, loss=loss, predictions={"w": w + row, "local": local + row},
      eval_metric_ops={"w_plus_local": tf.compat.v1.metrics.mean(w + local)},
      train_op=tf.group(
          tf.compat.v1.assign_add(w, [1.0, 1.0]),
          tf.compat.v1.assign_add(tf.compat.v1.train.get_global_step(), 1)))


def _train_input():
  return tf.data.Dataset.from_tensor_slices(
      ({"x": [[1.0, 2.0]]}, [0])).repeat().batch(1)


def _eval_input():
  return tf.data.Dataset.from_tensor_slices(({"x": [[1.0, 2.0]]}, [0])).batch(1)


def _predict_input():
  return tf.data.Dataset.from_tensor_slices({"x": [[1.0, 2.0]]}).batch(1)


def _estimator(model_dir, init, source=None, mapping=None, **kwargs):
  params = {"init": init, "source": source, "map": mapping}
  return tfe.Estimator(_model_fn, model_dir=str(model_dir), params=params,
                       **kwargs)


@pytest.fixture
def source(tmp_path):
  """A model_dir whose model.ckpt-1 holds enc/w = [6, 6]."""
  est = _estimator(tmp_path / "source", 5.0)
  est.train(_train_input, steps=1)
  np.testing.assert_array_equal(est.get_variable_value("enc/w"), [6.0, 6.0])
  return tmp_path / "source"


@pytest.mark.usefixtures("engine")
def test_a_fresh_model_dir_starts_from_the_checkpoint(tmp_path, source):
  scope = _estimator(tmp_path / "scope", 1.0, str(source), {"enc/": "enc/"})
  scope.train(_train_input, steps=1)
  np.testing.assert_array_equal(scope.get_variable_value("enc/w"),
                                [7.0, 7.0])
  one = _estimator(tmp_path / "one", 1.0, str(source / "model.ckpt-1"),
                   {"enc/w": "enc/w"})
  one.train(_train_input, steps=1)
  np.testing.assert_array_equal(one.get_variable_value("enc/w"), [7.0, 7.0])
  # The model_dir's own checkpoint wins from the second call on.
  one.train(_train_input, steps=1)
  np.testing.assert_array_equal(one.get_variable_value("enc/w"), [8.0, 8.0])
  results = one.evaluate(_eval_input, steps=1)
  assert results["w_plus_local"] == pytest.approx(9.0)  # [8, 8] + [1, 1]


@pytest.mark.usefixtures("engine")
def test_evaluate_and_predict_without_a_checkpoint(tmp_path, source):
  est = _estimator(tmp_path / "empty", 1.0, str(source), {"enc/w": "enc/w"})
  results = est.evaluate(_eval_input, steps=1)
  assert results["w_plus_local"] == pytest.approx(7.0)  # [6, 6] + [1, 1]
  assert results["loss"] == pytest.approx(18.0)
  prediction = next(est.predict(_predict_input))
  np.testing.assert_array_equal(prediction["w"], [6.0, 6.0])
  np.testing.assert_array_equal(prediction["local"], [1.0, 1.0])


@pytest.mark.usefixtures("engine")
def test_a_warm_start_wins_over_it(tmp_path, source):
  other = _estimator(tmp_path / "other", 50.0)
  other.train(_train_input, steps=1)
  est = _estimator(
      tmp_path / "both", 1.0, str(source), {"enc/w": "enc/w"},
      warm_start_from=tfe.WarmStartSettings(str(tmp_path / "other"),
                                            "enc/w"))
  est.train(_train_input, steps=1)
  np.testing.assert_array_equal(est.get_variable_value("enc/w"),
                                [52.0, 52.0])


def test_a_local_variable_runs_on_the_graph_engine(tmp_path, source,
                                                   monkeypatch):
  mapping = {"enc/w": "state/local"}
  est = _estimator(tmp_path / "local", 1.0, str(source), mapping)
  est.train(_train_input, steps=1)  # Default engine: routed, as TF1 did it.
  np.testing.assert_array_equal(est.get_variable_value("enc/w"), [2.0, 2.0])
  # w + local = [2, 2] + [6, 6]: the local one from the checkpoint again.
  assert est.evaluate(_eval_input, steps=1)["w_plus_local"] == pytest.approx(
      8.0)
  np.testing.assert_array_equal(next(est.predict(_predict_input))["local"],
                                [6.0, 6.0])
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "function")
  with pytest.raises(NeedsGraphEngine, match="'state/local:0', a local "
                     "variable.*RunConfig\\(engine='graph'\\)"):
    est.evaluate(_eval_input, steps=1)


def test_a_mirrored_variable_takes_it_on_the_function_engine(tmp_path, source,
                                                             monkeypatch):
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "function")
  strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
  est = _estimator(tmp_path / "mirrored", 1.0, str(source),
                   {"enc/w": "enc/w"},
                   config=tfe.RunConfig(train_distribute=strategy))
  est.train(_train_input, steps=1)
  np.testing.assert_array_equal(est.get_variable_value("enc/w"), [7.0, 7.0])


def test_a_model_fn_module_initializes_from_it_once(source):
  module = adapters.ModelFnModule(
      _model_fn, params={"init": 1.0, "source": str(source),
                         "map": {"enc/w": "enc/w"}})
  features = {"x": np.array([[1.0, 2.0]], np.float32)}
  np.testing.assert_array_equal(module(features)["predictions"]["w"],
                                [[6.0, 6.0]])
  module.train_step(features, np.array([0]))  # TRAIN traced: w was there.
  np.testing.assert_array_equal(
      module.variables_by_legacy_name()["enc/w"].numpy(), [7.0, 7.0])


def _vocab_model_fn(features, labels, mode, params):
  del labels
  embedding = tf.compat.v1.get_variable(
      "emb", [3, 2],
      initializer=tf.compat.v1.constant_initializer(params["init"]))
  if params.get("source"):
    tf.compat.v1.train.warm_start(
        params["source"], vars_to_warm_start=["emb"],
        var_name_to_vocab_info={"emb": tf.compat.v1.train.VocabInfo(
            params["new_vocab"], 3, 0, params["old_vocab"])})
  return tfe.EstimatorSpec(
      mode, loss=tf.reduce_sum(embedding * features["x"]),
      train_op=tf.compat.v1.assign_add(
          tf.compat.v1.train.get_global_step(), 1))


def test_another_initializer_set_in_model_fn_runs_on_the_graph_engine(
    tmp_path, monkeypatch):
  """A vocabulary warm start inside model_fn assigns a remapped matrix."""
  (tmp_path / "old.txt").write_text("a\nb\nc\n")
  (tmp_path / "new.txt").write_text("c\nz\na\n")
  old = tfe.Estimator(_vocab_model_fn, model_dir=str(tmp_path / "old"),
                      params={"init": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]})
  old.train(_train_input, steps=1)
  params = {"init": 7.0, "source": str(tmp_path / "old"),
            "new_vocab": str(tmp_path / "new.txt"),
            "old_vocab": str(tmp_path / "old.txt")}
  new = tfe.Estimator(_vocab_model_fn, model_dir=str(tmp_path / "new"),
                      params=params)
  new.train(_train_input, steps=1)
  # TF 2.15's values: c and a take their old rows, z (new) zeros.
  np.testing.assert_array_equal(new.get_variable_value("emb"),
                                [[4.0, 5.0], [0.0, 0.0], [0.0, 1.0]])
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "function")
  other = tfe.Estimator(_vocab_model_fn, model_dir=str(tmp_path / "other"),
                        params=params)
  with pytest.raises(NeedsGraphEngine, match="replaced the initializer of "
                     "'emb:0'"):
    other.train(_train_input, steps=1)
