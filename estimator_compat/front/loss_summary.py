"""The `loss` summary train() adds, unless model_fn wrote one already.

The Estimator added `tf.compat.v1.summary.scalar("loss", spec.loss)` only
when no summary op named `loss` was in the graph's SUMMARIES collection: a
MultiHead (or a model_fn) that wrote its own `loss` summary kept that tag,
instead of getting a second one tagged `loss_1`.
"""

from typing import Any

import tensorflow as tf


def add_loss_summary(loss: Any) -> None:
  """Adds the `loss` scalar summary to the default graph if it has none."""
  summaries = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.SUMMARIES)
  if not any(op.op.name == "loss" for op in summaries):
    tf.compat.v1.summary.scalar("loss", loss)
