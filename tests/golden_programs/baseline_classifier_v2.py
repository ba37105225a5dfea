"""tf.estimator.BaselineClassifier (v2): 3 classes, label vocabulary, weight
column, the default optimizer (Keras Ftrl)."""

from tests.golden_programs import _canned_linear_data as data

TRAIN_STEPS = 40
# One feature (and the weight): with more, TF 2.15's v2 Baseline* made its
# bias initializer wait on the input's batch-size checks and failed.
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(
    data.MULTI, keys=("age", "w"))
serving_input_receiver_fn = data.age_serving_input_receiver_fn
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):
  return tf.estimator.BaselineClassifier(
      model_dir=model_dir, n_classes=3, weight_column="w",
      label_vocabulary=["low", "mid", "high"], config=data.config())
