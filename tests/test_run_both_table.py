"""run-both's result as a table and as JSON (migration/run_both.py).

The end-to-end tests (tests/test_run_both.py) read the JSON; here a result
built by hand shows what the table says: each side's command and exit, the
seeded checkpoints, each model_dir's differences, the metric lines, the
rerun of the old side and the verdict.
"""

import json

from migration import run_both
from migration import run_both_sides as sides
from migration.diff.result import Difference, ModelDirDiff


def _side(name, returncode=0):
  return sides.SideRun(
      name=name, command=["python", "-u", "-c", "seed", "prog.py", "--x=1"],
      returncode=returncode, stdout="", stderr="", workdir=f"/w/{name}")


def _result(model_dir_differences=(), differences=(), **kwargs):
  diff = ModelDirDiff("/w/old/m", "/w/new/m", tuple(model_dir_differences))
  return run_both.RunBothResult(
      old=_side("old"), new=_side("new", kwargs.pop("new_code", 0)),
      seeded=kwargs.pop("seeded", ("m",)), model_dirs={"m": diff},
      differences=tuple(differences), notes=kwargs.pop("notes", ()),
      **kwargs)


def test_a_result_without_differences_passes():
  result = _result()
  table = result.format_table()
  assert table.startswith("old: python prog.py --x=1 (exit 0)\n"
                          "new: python prog.py --x=1 (exit 0, "
                          "estimator_compat)\n"
                          "new side started from the old side's first "
                          "checkpoint in: m\n")
  assert "== model_dir m" in table and "SAME: the same metric lines." in table
  assert table.endswith("PASSED: no differences.\n")
  assert result.ok and result.to_json()["ok"] is True


def test_differences_are_listed_and_the_run_is_different():
  result = _result(
      model_dir_differences=[Difference("variable", "dense/kernel",
                                        "max |diff| 0.5")],
      differences=[Difference("printed", "loss line 3", "0.25 vs 0.5")],
      seeded=(), new_code=1, notes=("the old side saved no model.ckpt-0",))
  table = result.format_table()
  assert "checkpoint in: (none saved)" in table
  assert "(exit 1, estimator_compat)" in table
  assert "dense/kernel" in table and "max |diff| 0.5" in table
  assert "printed   loss line 3" in table and "SAME:" not in table
  assert "note: the old side saved no model.ckpt-0" in table
  assert table.endswith("DIFFERENT: see the differences above.\n")
  saved = json.loads(json.dumps(result.to_json()))
  assert saved["ok"] is False and saved["new"]["returncode"] == 1
  assert saved["differences"] == [{"kind": "printed", "where": "loss line 3",
                                   "detail": "0.25 vs 0.5"}]
  assert saved["model_dirs"]["m"]["ok"] is False
  assert saved["seeded_first_checkpoints"] == []


def test_what_the_old_side_rerun_shows_too_is_listed_apart():
  noise = Difference("variable", "global_step", "3 vs 4")
  result = _result(explained=(("m", noise), ("", Difference(
      "printed", "accuracy", "0.5 vs 0.6"))), rerun_ok=False)
  table = result.format_table()
  assert ("== old side rerun from the same checkpoint: differs; 2 "
          "old-vs-new differences are also there (not counted):") in table
  assert "  variable          m: global_step" in table
  assert "  printed           accuracy" in table
  assert table.endswith("PASSED: no differences beyond those between two "
                        "runs of the real Estimator.\n")
  saved = result.to_json()
  assert saved["old_rerun_same"] is False
  assert saved["explained_by_old_rerun"][0]["model_dir"] == "m"
  same = _result(rerun_ok=True)
  assert ("== old side rerun from the same checkpoint: same as its first "
          "run") in same.format_table()
