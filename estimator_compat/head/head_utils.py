"""Head factories of TF 2.15's v2 canned estimators (`tf.estimator.DNNClassifier`...).

  binary_or_multi_class_head(n_classes, weight_column=None,
                             label_vocabulary=None,
                             loss_reduction=SUM_OVER_BATCH_SIZE)

gives a `BinaryClassHead` for n_classes == 2, else a `MultiClassHead`, as
TF 2.15's head_utils did. The TF1 canned estimators use tf1_heads instead.
"""

from typing import Optional, Sequence

from estimator_compat.head import binary_class_head
from estimator_compat.head import multi_class_head


def binary_or_multi_class_head(n_classes: int, weight_column=None,
                               label_vocabulary: Optional[Sequence[str]] = None,
                               loss_reduction: str = "sum_over_batch_size"):
  """The v2 classifier head for n_classes."""
  if n_classes == 2:
    return binary_class_head.BinaryClassHead(
        weight_column=weight_column, label_vocabulary=label_vocabulary,
        loss_reduction=loss_reduction)
  return multi_class_head.MultiClassHead(
      n_classes, weight_column=weight_column,
      label_vocabulary=label_vocabulary, loss_reduction=loss_reduction)
