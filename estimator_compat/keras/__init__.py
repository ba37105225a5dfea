"""The model_to_estimator bridge: a Keras model as an Estimator.
May import front/, checkpoints/, export/ and the root's values.
"""
