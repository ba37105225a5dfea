"""migration.recorders.golden_recorder's recording side, run here.

tools/record_goldens.sh runs `record` and `main` in the TF 2.15 venv; the
same calls go through estimator_compat here, so a golden written here has
the recorded goldens' shape (tests/goldens/mlp).
"""

import json
import os
import shutil
import tempfile

import numpy as np
import pytest

from migration.recorders import golden_recorder

GOLDEN = os.path.join(os.path.dirname(__file__), "goldens", "mlp")


def test_main_records_a_golden_with_the_recorded_ones_shape(
    tmp_path, capsys, monkeypatch):
  # record() trains and exports in temporary folders: keep them in tmp_path.
  monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
  out = tmp_path / "mlp"
  out.mkdir()
  (out / "stale.txt").write_text("from an earlier recording")
  assert golden_recorder.main(["--program", "mlp", "--out", str(out)]) == 0
  assert f"recorded mlp -> {out}" in capsys.readouterr().out
  assert sorted(os.listdir(out)) == sorted(os.listdir(GOLDEN))
  assert sorted(os.listdir(out / "ckpt0")) == sorted(
      os.listdir(os.path.join(GOLDEN, "ckpt0")))
  with open(out / "ckpt0" / "checkpoint") as f:
    assert 'model_checkpoint_path: "model.ckpt-0"' in f.read()
  with open(out / "results.json") as f:
    ours = json.load(f)
  with open(os.path.join(GOLDEN, "results.json")) as f:
    golden = json.load(f)
  assert sorted(ours) == sorted(golden)
  assert ours["model_dir_layout"] == golden["model_dir_layout"]
  assert ours["variables"] == golden["variables"]
  assert ours["latest_checkpoint"] == "model.ckpt-60"
  variables = np.load(out / "variables.npz")
  assert sorted(variables.files) == sorted(
      np.load(os.path.join(GOLDEN, "variables.npz")).files)
  assert int(variables["global_step"]) == 60
  predictions = np.load(out / "predictions.npz")
  assert predictions["probabilities"].shape == (20, 4)
  served = np.load(out / "served.npz")
  assert sorted(served.files) == sorted(
      np.load(os.path.join(GOLDEN, "served.npz")).files)


def test_main_trains_on_in_a_model_dir_and_prints_the_step(tmp_path, capsys):
  model_dir = tmp_path / "model"
  shutil.copytree(os.path.join(GOLDEN, "ckpt0"), model_dir)
  assert golden_recorder.main(["--program", "mlp", "--train_in",
                               str(model_dir), "--steps", "3"]) == 0
  assert capsys.readouterr().out.strip().endswith("global_step=3")
  assert os.path.exists(model_dir / "model.ckpt-3.index")


def test_main_needs_out_or_train_in(capsys):
  with pytest.raises(SystemExit) as raised:
    golden_recorder.main(["--program", "mlp"])
  assert raised.value.code == 2
  assert "--out or --train_in is required" in capsys.readouterr().err
