"""TF 2.15's private TF1-head internals, refused by name where they are used.

tensorflow-privacy 0.8's DP canned heads (`tensorflow_privacy/privacy/
estimators/v1/head.py`) bind these private names of TF 2.15's
`canned/head.py` when the package is imported, and subclass its two TF1 head
classes; `import tensorflow_privacy` runs that module, so without the names
every tensorflow-privacy program (its DP optimizers in a user's model_fn
included) failed to import. estimator_compat does not implement TF 2.15's
head internals: the names exist, and calling one, or making a head of one of
the classes, raises NotImplementedError that names the gap and the fix
(known difference `tf1-head-internals`). They are never silently something
else: a DP head built on another head's internals would train on a loss its
optimizer was not given.
"""

from typing import Any, Callable, NoReturn

_FIX = (
    "estimator_compat does not implement TF 2.15's private TF1 head "
    "internals (tensorflow_estimator's canned/head.py), which "
    "tensorflow-privacy's v1 DP canned estimators are built on. Fix: use a "
    "tensorflow-privacy DP optimizer (e.g. "
    "DPGradientDescentGaussianOptimizer) in your own model_fn, or run this "
    "program with TensorFlow 2.15.")


def _refuse(name: str) -> NoReturn:
  raise NotImplementedError(f"{name}: {_FIX}")


def _refusing(name: str) -> Callable[..., Any]:
  """A function named `name` that refuses every call."""

  def refused(*args: Any, **kwargs: Any) -> NoReturn:
    del args, kwargs
    _refuse(name)

  refused.__name__ = name
  refused.__doc__ = f"TF 2.15's private `{name}`: not implemented here."
  return refused


class _RefusedHead:
  """A TF 2.15 private TF1 head class: making one raises NotImplementedError."""

  def __init__(self, *args: Any, **kwargs: Any):
    del args, kwargs
    _refuse(type(self).__name__)


class BinaryLogisticHeadWithSigmoidCrossEntropyLoss(_RefusedHead):
  """TF 2.15's `_BinaryLogisticHeadWithSigmoidCrossEntropyLoss`, refused."""


class MultiClassHeadWithSoftmaxCrossEntropyLoss(_RefusedHead):
  """TF 2.15's `_MultiClassHeadWithSoftmaxCrossEntropyLoss`, refused."""


# The helper functions tensorflow-privacy binds at import.
all_class_ids = _refusing("_all_class_ids")
all_classes = _refusing("_all_classes")
append_update_ops = _refusing("_append_update_ops")
check_logits_final_dim = _refusing("_check_logits_final_dim")
classification_output = _refusing("_classification_output")
create_eval_metrics_tuple = _refusing("_create_eval_metrics_tuple")
validate_loss_fn_args = _refusing("_validate_loss_fn_args")
