"""Uses TensorFlow only through local modules' re-exports."""
from common import tf
from . import common as shared
from .common import ModeKeys


def modes():
  return (tf.estimator.ModeKeys.PREDICT, shared.tf_estimator.RunConfig,
          ModeKeys.EVAL)
