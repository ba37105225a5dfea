"""Exports: every SavedModel in a model_dir, its signatures and outputs."""

import functools
import os
import re
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

from migration.diff import values
from migration.diff.result import Difference

BATCH = 2  # the batch size of generated inputs (for unknown dimensions)
_TIMESTAMP = re.compile(r"^\d+$")


def exports(model_dir: str) -> Dict[str, str]:
  """{label: SavedModel directory} for every SavedModel under model_dir.

  A label is the export's directory relative to model_dir, with the
  timestamp directory replaced by its rank among its siblings
  (`export/best_exporter/#1` is the oldest), so two runs' exports pair by
  order, not by the time they were written. Temporary directories
  (`temp-*`) are left out.

  Args:
    model_dir: the model_dir to search.
  """
  found = []
  for root, dirs, files in os.walk(model_dir):
    dirs[:] = sorted(d for d in dirs if not d.startswith("temp-"))
    if "saved_model.pb" in files or "saved_model.pbtxt" in files:
      found.append(os.path.relpath(root, model_dir))
  groups: Dict[str, List[str]] = {}
  labels = {}
  for rel in found:
    parent, name = os.path.split(rel)
    if _TIMESTAMP.match(name):
      groups.setdefault(parent, []).append(rel)
    else:
      labels[rel] = os.path.join(model_dir, rel)
  for parent, rels in groups.items():
    for rank, rel in enumerate(sorted(rels, key=lambda r: int(
        os.path.basename(r))), 1):
      labels[f"{parent}/#{rank}" if parent else f"#{rank}"] = os.path.join(
          model_dir, rel)
  return dict(sorted(labels.items()))


def _read_proto(path: str) -> saved_model_pb2.SavedModel:
  proto = saved_model_pb2.SavedModel()
  binary = os.path.join(path, "saved_model.pb")
  if os.path.exists(binary):
    with open(binary, "rb") as f:
      proto.ParseFromString(f.read())
  else:
    from google.protobuf import text_format  # pylint: disable=g-import-not-at-top
    with open(os.path.join(path, "saved_model.pbtxt"), encoding="utf-8") as f:
      text_format.Parse(f.read(), proto)
  return proto


def _tensor_info(info) -> Tuple[str, Optional[List[int]]]:
  dtype = tf.dtypes.as_dtype(info.dtype).name if info.dtype else "composite"
  if info.tensor_shape.unknown_rank:
    return dtype, None
  return dtype, [int(d.size) for d in info.tensor_shape.dim]


def signatures(path: str) -> Dict[str, Dict[str, Any]]:
  """{'TAGS/NAME': {method, inputs, outputs}} read from saved_model.pb.

  TAGS are the meta graph's tags joined with '+' (`serve`, `eval`, ...);
  inputs and outputs map each key to (dtype name, shape with -1 for
  unknown dimensions, or None for an unknown rank).

  Args:
    path: a SavedModel directory.
  """
  result = {}
  for meta_graph in _read_proto(path).meta_graphs:
    tags = "+".join(sorted(meta_graph.meta_info_def.tags))
    for name, signature in sorted(meta_graph.signature_def.items()):
      if name == "__saved_model_init_op":
        continue
      result[f"{tags}/{name}"] = {
          "method": signature.method_name,
          "inputs": {k: _tensor_info(v)
                     for k, v in sorted(signature.inputs.items())},
          "outputs": {k: _tensor_info(v)
                      for k, v in sorted(signature.outputs.items())},
      }
  return result


def example_inputs(spec: Dict[str, Tuple[str, Optional[List[int]]]],
                   examples: Optional[Dict[str, np.ndarray]] = None
                  ) -> Dict[str, np.ndarray]:
  """Inputs for a signature: from `examples` by key, else generated.

  Generated inputs are the same on every call: unknown dimensions are
  `BATCH`; floats are seeded standard normals, integers 0..2, bools
  alternate, strings are empty (an empty serialized tf.Example).

  Args:
    spec: the signature's inputs, as `signatures` returns them.
    examples: arrays by input key (e.g. from --examples FILE.npz).
  """
  inputs = {}
  for index, (key, (dtype, shape)) in enumerate(sorted(spec.items())):
    if examples is not None and key in examples:
      inputs[key] = np.asarray(examples[key])
      continue
    shape = [BATCH if d < 0 else d for d in (shape or [BATCH])]
    rng = np.random.default_rng(index)
    as_dtype = tf.dtypes.as_dtype(dtype)
    if as_dtype.is_floating:
      array = rng.standard_normal(shape).astype(as_dtype.as_numpy_dtype)
    elif as_dtype.is_integer:
      array = rng.integers(0, 3, shape).astype(as_dtype.as_numpy_dtype)
    elif as_dtype.is_bool:
      array = (np.arange(int(np.prod(shape))) % 2 == 0).reshape(shape)
    else:
      array = np.full(shape, b"", dtype=object)
    inputs[key] = array
  return inputs


@functools.lru_cache(maxsize=4)
def _load(path: str, tags: str):
  return tf.saved_model.load(path, tags=tags.split("+"))


def _outputs(path: str, tags: str, name: str, inputs: Dict[str, np.ndarray]):
  """The signature's outputs as numpy arrays, or the error it raised."""
  try:
    loaded = _load(path, tags)
    function = loaded.signatures[name]
    feeds = {k: tf.constant(v) for k, v in inputs.items()}
    result = function(**feeds)
    return {k: np.asarray(v) for k, v in result.items()}, None
  except Exception as e:  # pylint: disable=broad-except
    return None, f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"


def _compare_signature(where: str, old: Dict[str, Any],
                       new: Dict[str, Any]) -> List[Difference]:
  differences = []
  if old["method"] != new["method"]:
    differences.append(Difference("signature", where, f"method old "
                                  f"{old['method']} vs new {new['method']}"))
  for part in ("inputs", "outputs"):
    a, b = old[part], new[part]
    if sorted(a) != sorted(b):
      differences.append(Difference(
          "signature", where, f"{part} keys old {sorted(a)} vs new "
          f"{sorted(b)}"))
    for key in sorted(set(a) & set(b)):
      if a[key][0] != b[key][0]:
        differences.append(Difference(
            "signature", f"{where}: {part}[{key}]",
            f"dtype old {a[key][0]} vs new {b[key][0]}"))
      if a[key][1] != b[key][1]:
        differences.append(Difference(
            "signature", f"{where}: {part}[{key}]",
            f"shape old {a[key][1]} vs new {b[key][1]}"))
  return differences


def _compare_outputs(where: str, old_path: str, new_path: str, key: str,
                     spec: Dict[str, Any], rtol: float, atol: float,
                     examples) -> List[Difference]:
  tags, name = key.split("/", 1)
  inputs = example_inputs(spec["inputs"], examples)
  old, old_error = _outputs(old_path, tags, name, inputs)
  new, new_error = _outputs(new_path, tags, name, inputs)
  if old_error or new_error:
    if (old_error or "").split(":")[0] == (new_error or "").split(":")[0]:
      return []  # Both sides refuse these inputs the same way.
    return [Difference("export_output", where,
                       f"old {old_error or 'ran'} vs new {new_error or 'ran'}"
                       )]
  differences = []
  for out in sorted(set(old) & set(new)):
    detail = values.difference(old[out], new[out], rtol, atol)
    if detail:
      differences.append(Difference("export_output", f"{where}: {out}",
                                    detail))
  return differences


def compare(old_dir: str, new_dir: str, rtol: float, atol: float,
            examples: Optional[Dict[str, np.ndarray]] = None
           ) -> Tuple[List[Difference], int]:
  """Compares the exports of two model_dirs.

  Args:
    old_dir: the old model_dir.
    new_dir: the new model_dir.
    rtol: relative tolerance for float outputs.
    atol: absolute tolerance for float outputs.
    examples: inputs by key for the signatures (else generated).

  Returns:
    (differences, number of exports on both sides).
  """
  old, new = exports(old_dir), exports(new_dir)
  differences = []
  for label in sorted(set(old) ^ set(new)):
    side = "old" if label in old else "new"
    path = (old if label in old else new)[label]
    differences.append(Difference(
        "export_missing", label, f"exported on the {side} side only "
        f"({os.path.relpath(path, old_dir if side == 'old' else new_dir)})"))
  for label in sorted(set(old) & set(new)):
    old_sigs, new_sigs = signatures(old[label]), signatures(new[label])
    for key in sorted(set(old_sigs) ^ set(new_sigs)):
      side = "old" if key in old_sigs else "new"
      differences.append(Difference("signature", f"{label}: {key}",
                                    f"signature on the {side} side only"))
    for key in sorted(set(old_sigs) & set(new_sigs)):
      where = f"{label}: {key}"
      found = _compare_signature(where, old_sigs[key], new_sigs[key])
      differences.extend(found)
      if old_sigs[key]["inputs"] == new_sigs[key]["inputs"]:
        differences.extend(_compare_outputs(
            where, old[label], new[label], key, old_sigs[key], rtol, atol,
            examples))
  _load.cache_clear()
  return differences, len(set(old) & set(new))
