"""Stores the batches a side's engine fed its model_fn, and replays them.

Both sides of a check must see the same batches. An input_fn that shuffles
without a seed, or whose shuffle seed depends on the graph it is built in,
gives each runtime different batches, and then nothing downstream can match.
So each side records once what its engine fed the model_fn (`migration.fed`),
and training, evaluation and prediction replay exactly those batches. The
`inputs` check compares the batches of the two sides.

Runs on TF 2.15 + tensorflow-estimator as well as on estimator_compat.
"""

from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import tensorflow as tf

Batch = Tuple[Any, Any]  # (features, labels): dict or array, None if absent.


def _flatten_part(prefix: str, value, out: Dict[str, np.ndarray]) -> None:
  if value is None:
    return
  if isinstance(value, dict):
    for key, item in value.items():
      out[f"{prefix}:{key}"] = np.asarray(item)
  else:
    out[prefix] = np.asarray(value)


def flatten(batches: List[Batch], name: str) -> Dict[str, np.ndarray]:
  """npz-ready arrays: '<name>/<i>/f[:key]' and '<name>/<i>/l[:key]'."""
  out = {}
  for i, (features, labels) in enumerate(batches):
    _flatten_part(f"{name}/{i:05d}/f", features, out)
    _flatten_part(f"{name}/{i:05d}/l", labels, out)
  return out


def unflatten(arrays: Dict[str, np.ndarray], name: str) -> List[Batch]:
  """The inverse of flatten for the batches called `name`."""
  parts: Dict[int, Dict[str, Any]] = {}
  for key, value in arrays.items():
    batch_name, index, part = key.split("/", 2)
    if batch_name != name:
      continue
    slot = parts.setdefault(int(index), {"f": None, "l": None})
    kind, _, sub = part.partition(":")
    if sub:
      slot[kind] = dict(slot[kind] or {}, **{sub: value})
    else:
      slot[kind] = value
  return [(parts[i]["f"], parts[i]["l"]) for i in sorted(parts)]


def _batch_size(batches: List[Batch]) -> int:
  return len(tf.nest.flatten(batches[0])[0])


def _rebatchable(batches: List[Any]) -> bool:
  """Whether rows.batch(size) gives back `batches` (only the last smaller)."""
  size = _batch_size(batches)
  sizes = [len(tf.nest.flatten(b)[0]) for b in batches]
  shapes = [tf.nest.map_structure(lambda a: np.shape(a)[1:], b)
            for b in batches]
  return (all(s == size for s in sizes[:-1]) and sizes[-1] <= size and
          all(shape == shapes[0] for shape in shapes))


def replay_input_fn(batches: List[Batch], with_labels: bool = True,
                    replicas: int = 1):
  """An input_fn whose Dataset yields exactly `batches`, once, in order.

  Args:
    batches: what to yield.
    with_labels: yield (features, labels); else features only.
    replicas: under a strategy the Estimator's input_fn gives each replica
      its own batch, so one step reads `replicas` batches. To give every
      step the old run's batch, the rows are batched by size/replicas.

  Raises:
    ValueError: a batch size that does not split across the replicas.
  """
  elements = [(f, l) if with_labels and l is not None else f
              for f, l in batches]
  if replicas > 1 and (not _rebatchable(elements) or
                       any(len(tf.nest.flatten(e)[0]) % replicas
                           for e in elements)):
    raise ValueError(
        f"The batches ({_batch_size(elements)} rows) do not split evenly "
        f"across {replicas} replicas, so no step of the new run can read "
        "the old run's batch. Fix: use a batch size divisible by the number "
        "of replicas for the check.")

  def input_fn():
    if _rebatchable(elements):
      rows = tf.nest.map_structure(lambda *a: np.concatenate(a), *elements)
      return tf.data.Dataset.from_tensor_slices(rows).batch(
          _batch_size(elements) // replicas)
    dataset = None
    for element in elements:
      one = tf.data.Dataset.from_tensors(element)
      dataset = one if dataset is None else dataset.concatenate(one)
    return dataset

  return input_fn


def first_features(batches: List[Batch]) -> Optional[Any]:
  return batches[0][0] if batches else None
