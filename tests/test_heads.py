"""The heads inside the Estimator on both engines, and used eagerly.

Values are checked against TF 2.15 by tests/test_goldens.py (head_*
programs) and tests/test_head_reference.py; here: what those leave out.
"""

import glob
import os

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tf_estimator
from estimator_compat.head import tf1_heads
from tests.golden_programs import head_binary
from tests.golden_programs import head_multi


@pytest.fixture(autouse=True)
def _installed():
  """The golden programs call tf.estimator, as legacy code does."""
  tf_estimator.install()


def _summary_tags(model_dir):
  tags = set()
  for path in glob.glob(os.path.join(model_dir, "events.out.tfevents*")):
    for event in tf.compat.v1.train.summary_iterator(path):
      tags.update(value.tag for value in event.summary.value)
  return sorted(tags)


def _estimator(program, model_dir):
  return tf_estimator.Estimator(
      model_fn=program.model_fn, model_dir=str(model_dir),
      config=tf_estimator.RunConfig(**program.CONFIG))


# What TF 2.15's Estimator wrote for these programs (12 steps).
@pytest.mark.parametrize("program, tags", [
    (head_binary, ["loss", "loss/answer"]),
    # MultiHead writes `loss` itself: the Estimator adds no second one.
    (head_multi, ["loss", "loss/kind", "loss/size"]),
])
def test_training_summaries_as_tf215(engine, tmp_path, program, tags):
  del engine
  _estimator(program, tmp_path).train(program.train_input_fn, steps=12)
  assert _summary_tags(str(tmp_path)) == tags


def test_add_metrics_adds_to_the_head_metrics(engine, tmp_path):
  del engine
  estimator = _estimator(head_binary, tmp_path)
  estimator.train(head_binary.train_input_fn, steps=5)

  def metric_fn(features, predictions):
    metric = tf.keras.metrics.Mean()
    metric.update_state(predictions["logistic"],
                        sample_weight=tf.reshape(features["w"], [-1, 1]))
    return {"weighted_logistic": metric}

  extended = tf_estimator.add_metrics(estimator, metric_fn)
  assert extended.model_dir == estimator.model_dir
  metrics = extended.evaluate(head_binary.eval_input_fn)
  assert "accuracy/answer" in metrics and metrics["global_step"] == 5
  np.testing.assert_allclose(metrics["weighted_logistic"],
                             metrics["prediction/mean/answer"], rtol=1e-5)


def test_tf1_head_trains_with_a_v1_optimizer(engine, tmp_path):
  """The TF1 canned heads' path: optimizer.minimize(loss, global_step)."""
  del engine

  def model_fn(features, labels, mode):
    head = tf1_heads.binary_or_multi_class_head(
        n_classes=3, weight_column=None, label_vocabulary=None)
    logits = tf.compat.v1.layers.dense(features["x"], 3)
    return head.create_estimator_spec(
        features=features, mode=mode, logits=logits, labels=labels,
        optimizer=tf.compat.v1.train.GradientDescentOptimizer(0.1))

  x = np.random.RandomState(0).normal(size=(40, 4)).astype(np.float32)
  y = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0).astype(np.int64)
  estimator = tf_estimator.Estimator(model_fn=model_fn,
                                     model_dir=str(tmp_path))
  input_fn = lambda: tf.data.Dataset.from_tensor_slices(  # pylint: disable=g-long-lambda
      ({"x": x}, y)).repeat().batch(8)
  estimator.train(input_fn, steps=6)
  assert estimator.get_variable_value("global_step") == 6
  # SUM reduction: TF 2.15's TF1 heads also summarized the average loss.
  assert _summary_tags(str(tmp_path)) == ["average_loss", "loss"]
  metrics = estimator.evaluate(
      lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(40))
  assert sorted(metrics) == ["accuracy", "average_loss", "global_step",
                             "loss"]


def test_multi_head_eagerly_as_documented():
  """TF 2.15's MultiHead docstring example, run eagerly."""
  head = tf_estimator.MultiHead([
      tf_estimator.MultiLabelHead(n_classes=2, name="head1"),
      tf_estimator.MultiLabelHead(n_classes=3, name="head2")])
  logits = {
      "head1": np.array([[-10., 10.], [-15., 10.]], dtype=np.float32),
      "head2": np.array([[20., -20., 20.], [-30., 20., -20.]],
                        dtype=np.float32)}
  labels = {"head1": np.array([[1, 0], [1, 1]], dtype=np.int64),
            "head2": np.array([[0, 1, 0], [1, 1, 0]], dtype=np.int64)}
  features = {"x": np.array(((42,),), dtype=np.float32)}
  assert head.loss(labels, logits, features=features).numpy() == (
      pytest.approx(23.75, rel=1e-5))
  metrics = head.update_metrics(head.metrics(), features, logits, labels)
  results = {k: round(float(m.result()), 2) for k, m in metrics.items()}
  assert results == {
      "auc/head1": 0.17, "auc/head2": 0.33,
      "auc_precision_recall/head1": 0.6, "auc_precision_recall/head2": 0.4,
      "average_loss/head1": 8.75, "average_loss/head2": 15.0,
      "loss/head1": 8.75, "loss/head2": 15.0}
  np.testing.assert_array_equal(
      head.predictions(logits)[("head1", "logits")], logits["head1"])


def test_binary_head_eagerly_checks_labels_at_once():
  head = tf_estimator.BinaryClassHead()
  with pytest.raises(ValueError, match="Expected labels dimension=1"):
    head.loss(np.array([[1, 0]], dtype=np.int64),
              np.array([[0.3]], dtype=np.float32))
  with pytest.raises(ValueError, match="Labels must be <= 2 - 1"):
    head.loss(np.array([[2]], dtype=np.int64),
              np.array([[0.3]], dtype=np.float32))
