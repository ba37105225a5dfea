"""The canned estimators' optimizer arguments resolve as TensorFlow 2.15's.

The learning rates were read from checkpoints the real estimators wrote
(`training/Adagrad/learning_rate` of a v2 DNNClassifier is 0.001).
"""

import pytest
import tensorflow as tf

from estimator_compat.canned import optimizers


@pytest.mark.parametrize("name,cls", [
    ("Adagrad", tf.compat.v1.train.AdagradOptimizer),
    ("Adam", tf.compat.v1.train.AdamOptimizer),
    ("Ftrl", tf.compat.v1.train.FtrlOptimizer),
    ("RMSProp", tf.compat.v1.train.RMSPropOptimizer),
    ("SGD", tf.compat.v1.train.GradientDescentOptimizer),
])
def test_v1_names(name, cls):
  opt = optimizers.get_optimizer_instance(name, learning_rate=0.05)
  assert type(opt) is cls
  rate = opt._lr if name == "Adam" else opt._learning_rate
  assert rate == 0.05


def test_v1_name_needs_learning_rate_and_known_name():
  with pytest.raises(ValueError, match="learning_rate must be specified"):
    optimizers.get_optimizer_instance("Adagrad")
  with pytest.raises(ValueError, match="Unsupported optimizer name: Nope"):
    optimizers.get_optimizer_instance("Nope", learning_rate=0.1)


def test_v1_instance_and_callable():
  opt = tf.compat.v1.train.GradientDescentOptimizer(0.3)
  assert optimizers.get_optimizer_instance(opt) is opt
  assert optimizers.get_optimizer_instance(lambda: opt) is opt
  with pytest.raises(ValueError, match="not an Optimizer instance"):
    optimizers.get_optimizer_instance(tf.keras.optimizers.legacy.SGD())


def test_v2_names_take_the_class_default_without_learning_rate():
  opt = optimizers.get_optimizer_instance_v2("Adagrad")
  assert isinstance(opt, tf.keras.optimizers.legacy.Adagrad)
  assert opt.get_config()["learning_rate"] == pytest.approx(0.001)
  opt = optimizers.get_optimizer_instance_v2("Ftrl", learning_rate=0.005)
  assert isinstance(opt, tf.keras.optimizers.legacy.Ftrl)
  assert opt.get_config()["learning_rate"] == pytest.approx(0.005)
  assert isinstance(optimizers.get_optimizer_instance_v2("RMSProp"),
                    tf.keras.optimizers.legacy.RMSprop)


def test_v2_rejects_new_keras_optimizer_in_a_graph_and_v1_optimizers():
  with tf.Graph().as_default():
    with pytest.raises(ValueError, match="tf.keras.optimizers.legacy.Adam"):
      optimizers.get_optimizer_instance_v2(tf.keras.optimizers.Adam())
  with pytest.raises(ValueError, match="not a tf.keras.optimizers.Optimizer"):
    optimizers.get_optimizer_instance_v2(
        tf.compat.v1.train.AdagradOptimizer(0.1))
  opt = tf.keras.optimizers.legacy.SGD(0.2)
  assert optimizers.get_optimizer_instance_v2(lambda: opt) is opt


def test_linear_default_rates():
  assert optimizers.linear_learning_rate(4) == pytest.approx(0.2)
  assert optimizers.linear_learning_rate(100) == pytest.approx(0.1)
  assert optimizers.combined_linear_learning_rate(3) == pytest.approx(0.005)
  opt = optimizers.default_linear_optimizer_v2([1] * 36)
  assert opt.get_config()["learning_rate"] == pytest.approx(1 / 6)
  assert optimizers.default_linear_optimizer([1])._learning_rate == 0.2
