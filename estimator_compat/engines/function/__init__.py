"""The function engine: a legacy model_fn traced into tf.function step functions."""
