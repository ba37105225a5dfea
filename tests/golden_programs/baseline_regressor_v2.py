"""tf.estimator.BaselineRegressor (v2): label_dimension 2, optimizer by
name."""

from tests.golden_programs import _canned_linear_data as data

TRAIN_STEPS = 40
# One feature: with more, TF 2.15's v2 Baseline* made its bias initializer
# wait on the input's batch-size checks and failed.
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(
    data.TARGET, keys=("age",))
serving_input_receiver_fn = data.age_serving_input_receiver_fn
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):
  return tf.estimator.BaselineRegressor(
      model_dir=model_dir, label_dimension=2, optimizer="Adagrad",
      config=data.config())
