"""Keras metrics the heads need beyond tf.keras's own."""

import tensorflow as tf


class AccuracyBaseline(tf.keras.metrics.Mean):
  """Accuracy of always predicting the majority class of binary labels.

  Updated with the (weighted) 0/1 labels, exactly as the `label/mean`
  metric; its value is max(mean, 1 - mean), which is what TF 2.15's
  `accuracy_baseline` reported.
  """

  def result(self):
    return tf.math.divide_no_nan(
        tf.maximum(self.total, self.count - self.total), self.count)
