"""TF1 strategy objects in RunConfig, in TF1 mode (eager execution disabled).

  python tests/tf1_strategy_objects_program.py WORKDIR KIND [KIND...]

For each KIND (none, mirrored_v1, parameter_server_v1,
multi_worker_mirrored_v1, multi_worker_mirrored) trains 6 steps with the
strategy as train_distribute and eval_distribute, evaluates, and prints
`RESULT {kind: {...}}` (or the error) as JSON. No TF_CONFIG: the Estimator
ran each of these on this machine alone, with the results of no strategy.
"""

import json
import os
import sys

import estimator_compat as tfe
import tensorflow as tf  # pylint: disable=g-bad-import-order

from tests.tiny_strategy_model import input_fn, model_fn

tf.compat.v1.disable_eager_execution()

STRATEGIES = {
    "none": lambda: None,
    "mirrored_v1": tf.compat.v1.distribute.MirroredStrategy,
    "parameter_server_v1":
        tf.compat.v1.distribute.experimental.ParameterServerStrategy,
    "multi_worker_mirrored_v1":
        tf.compat.v1.distribute.experimental.MultiWorkerMirroredStrategy,
    "multi_worker_mirrored": tf.distribute.MultiWorkerMirroredStrategy,
}


def run(kind, model_dir):
  strategy = STRATEGIES[kind]()
  est = tfe.Estimator(model_fn, model_dir, config=tfe.RunConfig(
      train_distribute=strategy, eval_distribute=strategy,
      save_checkpoints_steps=3, tf_random_seed=1))
  est.train(input_fn, steps=6)
  result = est.evaluate(input_fn, steps=2)
  return {"global_step": int(est.get_variable_value("global_step")),
          "kernel": est.get_variable_value("dense/kernel").tolist(),
          "evaluation": {k: float(v) for k, v in result.items()},
          "checkpoints": sorted(f for f in os.listdir(model_dir)
                                if f.endswith(".index"))}


def main(workdir, kinds):
  results = {}
  for kind in kinds:
    try:
      results[kind] = run(kind, os.path.join(workdir, kind))
    except Exception as e:  # pylint: disable=broad-except
      results[kind] = {"error": f"{type(e).__name__}: {e}"}
  print("RESULT " + json.dumps(results), flush=True)


if __name__ == "__main__":
  main(sys.argv[1], sys.argv[2:])
