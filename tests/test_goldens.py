"""Golden tests: programs replayed here match the real Estimator (TF 2.15).

Each golden in tests/goldens/ was recorded by tools/record_goldens.sh on
TensorFlow 2.15.1 + tensorflow-estimator 2.15.0. Here the same program starts
from the same model.ckpt-0 and must leave the same model_dir layout and
variable names exactly, and the same weights, metrics and predictions to
rtol 1e-3.
"""

import importlib
import json
import os

import numpy as np
import pytest

from estimator_compat.api import tf_versions
from estimator_compat.errors import NeedsGraphEngine
from migration.recorders import golden_recorder
from migration import program as program_lib
from tests.golden_programs import NAMES

GOLDENS = os.path.join(os.path.dirname(__file__), "goldens")
RTOL, ATOL = 1e-3, 1e-5


def _load(name):
  folder = os.path.join(GOLDENS, name)
  with open(os.path.join(folder, "results.json")) as f:
    results = json.load(f)
  variables = dict(np.load(os.path.join(folder, "variables.npz")))
  # Goldens recorded before class names were stored as bytes hold them as
  # object arrays (pickled).
  predictions = dict(np.load(os.path.join(folder, "predictions.npz"),
                             allow_pickle=True))
  served_path = os.path.join(folder, "served.npz")
  served = (dict(np.load(served_path, allow_pickle=True))
            if os.path.exists(served_path) else {})
  return folder, results, variables, predictions, served


def _assert_close(actual, expected, what):
  if np.asarray(expected).dtype.kind in "SUO":  # class strings: exact.
    np.testing.assert_array_equal(np.asarray(actual).astype(np.bytes_),
                                  np.asarray(expected).astype(np.bytes_),
                                  err_msg=what)
    return
  np.testing.assert_allclose(np.asarray(actual, dtype=np.float64),
                             np.asarray(expected, dtype=np.float64),
                             rtol=RTOL, atol=ATOL, err_msg=what)


def _is_float_array(value) -> bool:
  """True for a list of floats, or of equal-length lists of floats (rows).

  Such observations (KMeans.transform's distances, say) are computed values:
  the last bits depend on the CPU's vector width, so they compare within
  tolerance like variables do, never bit for bit.
  """
  if not isinstance(value, list) or not value:
    return False
  try:
    return np.asarray(value).dtype.kind == "f"
  except ValueError:  # ragged rows
    return False


@pytest.mark.parametrize("name", NAMES)
def test_replay_matches_real_estimator(name, engine, tmp_path, monkeypatch):
  program_lib.tensorflow_with_estimator()  # programs use it on import
  program = importlib.import_module(f"{golden_recorder.PROGRAM_PACKAGE}.{name}")
  if engine == "function" and getattr(program, "NEEDS_GRAPH_ENGINE", False):
    # Such a program replays on the graph engine; the default engine moves
    # its calls there, and an explicit function engine says so.
    with pytest.raises(NeedsGraphEngine, match="graph engine"):
      golden_recorder.run_program(name, str(tmp_path / "model"))
    return
  if engine == "function" and getattr(program, "TRAINS_ON_GRAPH_ENGINE",
                                      False):
    # Its training raises NeedsGraphEngine on the function engine: the
    # default engine trains on the graph engine, the rest on the function one.
    monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE")
  folder, golden, golden_vars, golden_preds, golden_served = _load(name)
  assert golden["tensorflow_version"].startswith("2.15")
  run = golden_recorder.run_program(
      name, str(tmp_path / "model"),
      start_checkpoint_dir=os.path.join(folder, "ckpt0"))
  ours = run["results"]
  assert tf_versions.is_supported(ours["tensorflow_version"])
  assert ours["model_dir_layout"] == golden["model_dir_layout"]
  assert ours["latest_checkpoint"] == golden["latest_checkpoint"]
  assert ours["variables"] == golden["variables"]
  assert sorted(run["variables"]) == sorted(golden_vars)
  for var_name, expected in golden_vars.items():
    if expected.dtype.kind in "SO":  # an object graph (object-based names)
      assert run["variables"][var_name] == expected, var_name
      continue
    _assert_close(run["variables"][var_name], expected, var_name)
  assert sorted(ours["eval_metrics"]) == sorted(golden["eval_metrics"])
  for key, expected in golden["eval_metrics"].items():
    _assert_close(ours["eval_metrics"][key], expected, f"metric {key}")
  assert sorted(run["predictions"]) == sorted(golden_preds)
  for key, expected in golden_preds.items():
    _assert_close(run["predictions"][key], expected, f"prediction {key}")
  # The exported SavedModel: same signatures, input and output names, and
  # the same outputs on the same serving inputs.
  assert ours["export"] == golden["export"]
  assert sorted(run["served"]) == sorted(golden_served)
  for key, expected in golden_served.items():
    _assert_close(run["served"][key], expected, f"served {key}")
  observed, expected = ours["observations"], golden["observations"]
  assert sorted(observed) == sorted(expected)
  for key, value in expected.items():
    if _is_float_array(value):
      _assert_close(observed[key], value, f"observation {key}")
    else:
      assert observed[key] == value, key
