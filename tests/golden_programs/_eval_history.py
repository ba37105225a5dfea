"""Reads an eval directory's scalar results by step (TF 1 API only)."""

import collections
import os

import tensorflow as tf


def eval_history(eval_dir):
  """{global_step: {tag: value}} of the scalars in eval_dir, by step."""
  by_step = collections.defaultdict(dict)
  for path in tf.io.gfile.glob(os.path.join(eval_dir, "events.out.*")):
    for event in tf.compat.v1.train.summary_iterator(path):
      for value in event.summary.value:
        if value.HasField("simple_value"):
          by_step[int(event.step)][value.tag] = float(value.simple_value)
  return collections.OrderedDict(sorted(by_step.items()))
