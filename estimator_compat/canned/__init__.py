"""The canned estimators: DNN, Linear, Baseline and wide & deep.

Each family comes twice, as in TensorFlow 2.15: the `tf.estimator` (v2)
classes take Keras legacy optimizers, the `tf.compat.v1.estimator` (v1)
classes `tf.compat.v1.train` optimizers and variable partitioners. Both
write the variable names the real ones wrote, so model_dirs move between
them and TensorFlow 2.15.
"""
