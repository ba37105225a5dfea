"""Walking a TF1 graph's ops."""

from typing import Iterable, List

import tensorflow as tf


def ancestors(ops: Iterable[tf.Operation]) -> List[tf.Operation]:
  """`ops` and every op they depend on, through data and control inputs."""
  seen = {}
  stack = list(ops)
  while stack:
    op = stack.pop()
    if op.name in seen:
      continue
    seen[op.name] = op
    stack.extend(t.op for t in op.inputs)
    stack.extend(op.control_inputs)
  return list(seen.values())
