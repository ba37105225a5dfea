"""One worker of a MultiWorkerMirroredStrategy loop over a legacy model_fn.

  TF_CONFIG=... python tests/adapters_mwms_program.py

Trains the mlp_classifier model_fn with module.loss_fn and a tf-keras
optimizer inside strategy.run (the optimizer averages across workers), then
prints `RESULT {...}`: the loss, a checksum of the weights (equal on every
worker when the gradients were averaged) and whether train_step was refused.
"""

import json

import numpy as np
import tensorflow as tf

import estimator_compat
from estimator_compat import adapters
from examples.mlp_classifier import model as mlp

estimator_compat.install()


def main():
  strategy = tf.distribute.MultiWorkerMirroredStrategy()
  task = strategy.cluster_resolver.task_id
  x, y = mlp.make_data(64 * 4, seed=10 + task)  # Each worker its own data.
  dataset = tf.data.Dataset.from_tensor_slices(({"image": x}, y)).batch(64)
  with strategy.scope():
    module = adapters.ModelFnModule(mlp.model_fn,
                                    params={"hidden_units": [16]})
    module.build(*dataset.element_spec)
    optimizer = tf.keras.optimizers.SGD(0.1)

  def replica_step(features, labels):
    with tf.GradientTape() as tape:
      loss = module.loss_fn(features, labels)
    grads = tape.gradient(loss, module.trainable_variables)
    optimizer.apply_gradients(zip(grads, module.trainable_variables))
    return loss

  @tf.function
  def step(features, labels):
    return strategy.run(replica_step, args=(features, labels))

  losses = [float(step(f, l)) for f, l in dataset]
  refused = ""
  try:
    strategy.run(tf.function(module.train_step), args=next(iter(dataset)))
  except ValueError as e:
    refused = str(e)
  checksum = float(sum(np.abs(v.numpy()).sum()
                       for v in module.trainable_variables))
  print("RESULT " + json.dumps({"losses": losses, "checksum": checksum,
                                "refused": refused}), flush=True)


if __name__ == "__main__":
  main()
