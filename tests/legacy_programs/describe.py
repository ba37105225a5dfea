"""What a legacy program left behind, in a form both TF versions can write.

  python -m tests.legacy_programs.describe MODEL_DIR STDOUT_FILE > golden.json

Variable names and shapes of the newest checkpoint, the model_dir layout
(event-file names reduced to their kind), and the classes the program predicted
(its probabilities depend on unseeded shuffling, so they are not kept).
"""

import json
import os
import re
import sys

import tensorflow as tf


def layout(model_dir):
  """Relative paths in model_dir; events files reduced to 'events'."""
  out = set()
  for root, _, files in os.walk(model_dir):
    for name in files:
      if name == ".training.lock":
        continue
      path = os.path.relpath(os.path.join(root, name), model_dir)
      out.add(re.sub(r"events\.out\.tfevents\..*", "events", path))
  return sorted(out)


def describe(model_dir, printed=""):
  path = tf.train.latest_checkpoint(model_dir)
  reader = tf.train.load_checkpoint(path)
  return {
      "variables": {name: shape for name, shape in sorted(
          reader.get_variable_to_shape_map().items())},
      "global_step": (int(reader.get_tensor("global_step"))
                      if reader.has_tensor("global_step") else None),
      "layout": layout(model_dir),
      "predicted": re.findall(r'Prediction is "(\w+)".*expected "(\w+)"',
                              printed),
      "restored_step": re.findall(r"^restored step: (\d+)$", printed,
                                  re.MULTILINE),
  }


if __name__ == "__main__":
  with open(sys.argv[2]) as f:
    print(json.dumps(describe(sys.argv[1], f.read()), indent=1,
                     sort_keys=True))
