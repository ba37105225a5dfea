"""Optimizers of the canned estimators: names, instances and callables.

A canned estimator's `optimizer` argument is one of the names `Adagrad`,
`Adam`, `Ftrl`, `RMSProp`, `SGD`, an optimizer instance, or a callable
returning one. The v1 estimators take `tf.compat.v1.train` optimizers, the
v2 ones the Keras legacy optimizers (`tf.keras.optimizers.legacy.*`), whose
slot variables TensorFlow 2.15 wrote under `training/<Optimizer>/`.

The default learning rates are TensorFlow 2.15's, and differ per family and
API version (checked against the real estimators):

* DNN: v1 names get 0.05 (`DNN_LEARNING_RATE`); v2 names get the Keras
  optimizer's own default (Adagrad 0.001), since the v2 DNN passes none.
* Linear: 0.2 for a name; the default optimizer (`optimizer=None`) is Ftrl
  with `min(0.2, 1 / sqrt(number of feature columns))`.
* DNNLinearCombined: 0.001 for the DNN part's name, and
  `min(0.005, 1 / sqrt(number of linear columns))` for the linear part's.
* Baseline: 0.3.
"""

import inspect
import math
from typing import Any, Callable, Dict, Optional, Sequence, Union

import tensorflow as tf

from estimator_compat.front import tf_logging as logging

DNN_LEARNING_RATE = 0.05
LINEAR_LEARNING_RATE = 0.2
COMBINED_DNN_LEARNING_RATE = 0.001
COMBINED_LINEAR_LEARNING_RATE = 0.005
BASELINE_LEARNING_RATE = 0.3

OptimizerArg = Union[str, Any, Callable[[], Any]]


def _v1_classes() -> Dict[str, type]:
  train = tf.compat.v1.train
  return {
      "Adagrad": train.AdagradOptimizer,
      "Adam": train.AdamOptimizer,
      "Ftrl": train.FtrlOptimizer,
      "RMSProp": train.RMSPropOptimizer,
      "SGD": train.GradientDescentOptimizer,
  }


def _v2_classes() -> Dict[str, type]:
  legacy = tf.keras.optimizers.legacy
  return {
      "Adagrad": legacy.Adagrad,
      "Adam": legacy.Adam,
      "Ftrl": legacy.Ftrl,
      "RMSProp": legacy.RMSprop,
      "SGD": legacy.SGD,
  }


def _unsupported_name(name: str, classes: Dict[str, type]) -> ValueError:
  return ValueError(
      f"Unsupported optimizer name: {name}. Supported names are: "
      f"{tuple(sorted(classes))}. Fix: pass one of these names, an "
      "optimizer instance or a callable returning one.")


def get_optimizer_instance(opt: OptimizerArg,
                           learning_rate: Optional[float] = None) -> Any:
  """A `tf.compat.v1.train.Optimizer` for a v1 canned estimator.

  Args:
    opt: an optimizer name, a `tf.compat.v1.train.Optimizer`, or a callable
      returning one.
    learning_rate: the learning rate a name gets; required for names.

  Returns:
    The optimizer instance.

  Raises:
    ValueError: an unknown name, a name without a learning rate, or an object
      that is not a `tf.compat.v1.train.Optimizer`.
  """
  if isinstance(opt, str):
    classes = _v1_classes()
    if opt not in classes:
      raise _unsupported_name(opt, classes)
    if not learning_rate:
      raise ValueError(
          "learning_rate must be specified when opt is string. Fix: give a "
          "learning rate, or pass an optimizer instance.")
    return classes[opt](learning_rate=learning_rate)
  if callable(opt):
    opt = opt()
  if not isinstance(opt, tf.compat.v1.train.Optimizer):
    raise ValueError(
        f"The given object is not an Optimizer instance. Given: {opt}. Fix: "
        "the tf.compat.v1.estimator canned estimators take "
        "tf.compat.v1.train optimizers (or their names).")
  return opt


def _has_default_learning_rate(cls: type) -> bool:
  parameter = inspect.signature(cls.__init__).parameters.get("learning_rate")
  return (parameter is not None and
          parameter.default is not inspect.Parameter.empty)


def _is_new_keras_optimizer(opt: Any) -> bool:
  new_base = getattr(tf.keras.optimizers, "Optimizer", None)
  legacy_base = tf.keras.optimizers.legacy.Optimizer
  return (new_base is not None and isinstance(opt, new_base) and
          not isinstance(opt, legacy_base))


def get_optimizer_instance_v2(opt: OptimizerArg,
                              learning_rate: Optional[float] = None) -> Any:
  """A Keras legacy optimizer for a v2 canned estimator.

  Args:
    opt: an optimizer name, a `tf.keras.optimizers.legacy.Optimizer`, or a
      callable returning one.
    learning_rate: the learning rate a name gets; without one, a name gets
      the optimizer class's own default learning rate.

  Returns:
    The optimizer instance.

  Raises:
    ValueError: an unknown name, a non-legacy Keras optimizer given while a
      graph is built (as in a model_fn), or any other object.
  """
  if isinstance(opt, str):
    classes = _v2_classes()
    if opt not in classes:
      raise _unsupported_name(opt, classes)
    cls = classes[opt]
    if learning_rate:
      return cls(learning_rate=learning_rate)
    if _has_default_learning_rate(cls):
      return cls()
    return cls(learning_rate=DNN_LEARNING_RATE)
  if callable(opt):
    opt = opt()
  if _is_new_keras_optimizer(opt):
    if not tf.executing_eagerly():
      name = type(opt).__name__
      raise ValueError(
          "Please set your optimizer as an instance of "
          "`tf.keras.optimizers.legacy.Optimizer`, e.g., "
          f"`tf.keras.optimizers.legacy.{name}`. Received optimizer type: "
          f"{type(opt)}. Fix: the canned estimators take only Keras legacy "
          "optimizers, as in TensorFlow 2.15.")
    logging.warning(
        "A tf.keras.optimizers.Optimizer was given to a canned estimator, "
        "which takes only tf.keras.optimizers.legacy optimizers: it is "
        "converted to its legacy version.")
    opt = tf.keras.__internal__.optimizers.convert_to_legacy_optimizer(opt)
  if not isinstance(opt, tf.keras.optimizers.legacy.Optimizer):
    raise ValueError(
        "The given object is not a tf.keras.optimizers.Optimizer instance. "
        f"Given: {opt}. Fix: the tf.estimator canned estimators take "
        "tf.keras.optimizers.legacy optimizers (or their names).")
  return opt


def linear_learning_rate(num_feature_columns: int,
                         cap: float = LINEAR_LEARNING_RATE) -> float:
  """`min(cap, 1 / sqrt(num_feature_columns))`: the linear default rate."""
  return min(cap, 1.0 / math.sqrt(num_feature_columns))


def default_linear_optimizer(feature_columns: Sequence[Any]) -> Any:
  """The v1 linear model's default optimizer (`optimizer=None`): Ftrl."""
  return tf.compat.v1.train.FtrlOptimizer(
      learning_rate=linear_learning_rate(len(feature_columns)))


def default_linear_optimizer_v2(feature_columns: Sequence[Any]) -> Any:
  """The v2 linear model's default optimizer (`optimizer=None`): Ftrl."""
  return tf.keras.optimizers.legacy.Ftrl(
      learning_rate=linear_learning_rate(len(feature_columns)))


def combined_linear_learning_rate(num_linear_feature_columns: int) -> float:
  """The linear part's learning rate for names in DNNLinearCombined*."""
  return linear_learning_rate(num_linear_feature_columns,
                              cap=COMBINED_LINEAR_LEARNING_RATE)
