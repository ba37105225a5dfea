"""The base class of TF 2.15's TF1 heads, which legacy custom heads subclass.

TF 2.15's `tensorflow_estimator/python/estimator/canned/head.py` (also
reachable as `tensorflow.python.estimator.canned.head`) held the TF1 heads of
the `tf.compat.v1.estimator` canned estimators, under private names that
public programs import anyway: DeepCTR's estimator models subclass `_Head`
for their own head. estimator_compat registers that module path with
`TF1HeadBase` as `_Head` (api/module_paths.py); the TF1 heads of tf1_heads.py
are instances of it, as TF 2.15's were.

The behaviour kept from TF 2.15:
- the class is not abstract at instantiation (its ABCMeta was declared the
  Python 2 way, which Python 3 ignores): a subclass that leaves a method out
  still instantiates, and the missing method raises NotImplementedError when
  called;
- `create_estimator_spec` builds the spec through the subclass's
  `_create_tpu_estimator_spec(...)` and its `as_estimator_spec()`, and names
  both methods when the subclass has neither.
"""

from typing import Any, Optional

from estimator_compat.head import keys as keys_lib

# TF 2.15's serving-signature keys, under the private names of its module.
DEFAULT_SERVING_KEY = keys_lib.DEFAULT_SERVING_KEY
CLASSIFY_SERVING_KEY = keys_lib.CLASSIFY_SERVING_KEY
REGRESS_SERVING_KEY = "regression"
PREDICT_SERVING_KEY = "predict"

_ABSTRACT = "Calling an abstract method."


def summary_key(head_name: Optional[str], val: str) -> str:
  """A metric or summary key: `val`, suffixed by `/head_name` when named."""
  return f"{val}/{head_name}" if head_name else val


class TF1HeadBase:
  """TF 2.15's `_Head`: what a TF1 head gives a canned model_fn.

  A subclass defines `name`, `logits_dimension`, `create_loss(features, mode,
  logits, labels)`, and `create_estimator_spec(...)` or
  `_create_tpu_estimator_spec(...)`.
  """

  @property
  def name(self) -> Optional[str]:
    """The head's name, used in metric keys and name scopes."""
    raise NotImplementedError(_ABSTRACT)

  @property
  def logits_dimension(self) -> int:
    """The size of the last dimension of the logits the head expects."""
    raise NotImplementedError(_ABSTRACT)

  def create_loss(self, features: Any, mode: str, logits: Any,
                  labels: Any) -> Any:
    """The loss of `logits` against `labels` (a LossSpec for TF1 heads)."""
    raise NotImplementedError(_ABSTRACT)

  def create_estimator_spec(self, features: Any, mode: str, logits: Any,
                            labels: Any = None, optimizer: Any = None,
                            train_op_fn: Any = None,
                            regularization_losses: Any = None) -> Any:
    """The EstimatorSpec of the subclass's `_create_tpu_estimator_spec`.

    Raises:
      NotImplementedError: the subclass defines neither method.
    """
    try:
      tpu_spec = self._create_tpu_estimator_spec(
          features, mode, logits, labels, optimizer, train_op_fn,
          regularization_losses)
    except NotImplementedError:
      raise NotImplementedError(
          "Subclasses of _Head must implement `create_estimator_spec()` or "
          "_create_tpu_estimator_spec().") from None
    return tpu_spec.as_estimator_spec()

  def _create_tpu_estimator_spec(self, features: Any, mode: str, logits: Any,
                                 labels: Any = None, optimizer: Any = None,
                                 train_op_fn: Any = None,
                                 regularization_losses: Any = None) -> Any:
    """A TPUEstimatorSpec; subclasses that build one define this."""
    del (features, mode, logits, labels, optimizer, train_op_fn,
         regularization_losses)
    raise NotImplementedError(
        "TPUEstimatorSpec not available for this model head.")
