"""ModeKeys: the three modes a model_fn is called in."""


class ModeKeys:
  """Standard names for model modes, as in `tf.estimator.ModeKeys`."""

  TRAIN = "train"
  EVAL = "eval"
  PREDICT = "infer"

  ALL = (TRAIN, EVAL, PREDICT)
