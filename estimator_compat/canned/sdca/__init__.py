"""LinearSDCA: the Stochastic Dual Coordinate Ascent trainer of the Linear
estimators (TensorFlow 2.15's `canned/linear_optimizer`).

* `sharded_table`: the per-example state table, sharded by key.
* `sdca_model`: the SDCA model (slots, train step, weight update, losses).
* `linear_sdca`: `tf.estimator.experimental.LinearSDCA` and the SDCA
  model_fn of LinearClassifier / LinearRegressor.
"""
