"""What runs beside training: early stopping, the in-memory
evaluator, the stop-at-checkpoint-step hook (the code behind
`tf.estimator.experimental`). May import front/ and
checkpoints/.
"""
