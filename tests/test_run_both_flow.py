"""run-both's flow without the TF 2.15 interpreter (migration/run_both.py).

Both sides are replaced by fakes that write what a program would (a
model_dir, metric lines on stdout, an exit code): what run_both and main do
with them is the real code. The end-to-end runs are tests/test_run_both.py.
"""

import json
import os

import pytest

from migration import run_both
from migration import run_both_sides as sides

PROGRAM = sides.Program("prog.py", False, ("--model_dir={workdir}/m",))


def _fake_sides(monkeypatch, old_code=0, new_code=0,
                stdout=None, dirs=None):
  """Replaces both sides' runs; `stdout`/`dirs` by side name."""
  stdout = stdout or {}
  dirs = dirs or {}
  calls = []

  def side(name, workdir, code):
    calls.append(name)
    os.makedirs(workdir, exist_ok=True)
    for rel in dirs.get(name, ()):
      os.makedirs(os.path.join(workdir, rel), exist_ok=True)
      with open(os.path.join(workdir, rel, "checkpoint"), "w",
                encoding="utf-8") as f:
        f.write("")
    return sides.SideRun(name=name, command=["python", "-u", "-c", "s",
                                             "prog.py"],
                         returncode=code, stdout=stdout.get(name, ""),
                         stderr=f"{name} stderr line\n", workdir=workdir)

  def run_old(program, python, workdir, ckpt0_dir, timeout, name="old"):
    del program, python, ckpt0_dir, timeout
    return side(name, workdir, old_code)

  def run_new(program, workdir, engine=None, timeout=None):
    del program, timeout
    calls.append(f"engine={engine}")
    return side("new", workdir, new_code)

  monkeypatch.setattr(sides, "run_old", run_old)
  monkeypatch.setattr(sides, "run_new", run_new)
  monkeypatch.setattr(sides, "old_interpreter_error", lambda python: None)
  return calls


def test_a_failed_old_side_leaves_nothing_to_compare(monkeypatch, tmp_path):
  calls = _fake_sides(monkeypatch, old_code=3)
  with pytest.raises(RuntimeError, match=r"^the old side failed \(exit 3\), "
                     "so there is nothing to compare with:\nold stderr line$"):
    run_both.run_both(PROGRAM, "/py", str(tmp_path))
  assert calls == ["old"]


def test_a_new_side_failure_and_one_sided_model_dirs_are_differences(
    monkeypatch, tmp_path):
  calls = _fake_sides(monkeypatch, new_code=1,
                      stdout={"old": "loss = 0.5\n", "new": "loss = 0.5\n"},
                      dirs={"old": ["a"], "new": ["b"]})
  result = run_both.run_both(PROGRAM, "/py", str(tmp_path), engine="graph")
  assert calls == ["old", "engine=graph", "new"]
  assert not result.ok and result.seeded == () and result.model_dirs == {}
  assert [(d.kind, d.where) for d in result.differences] == [
      ("run", "new side"), ("run", "a"), ("run", "b")]
  assert result.differences[0].detail == (
      "exit 1 where the old side exited 0:\nnew stderr line")
  assert [d.detail for d in result.differences[1:]] == [
      "a model_dir on the old side only", "a model_dir on the new side only"]
  assert result.notes[0].startswith("the old side saved no model.ckpt-0")
  assert result.rerun_ok is None and result.explained == ()


def test_printed_differences_respect_tolerance_and_ignore(monkeypatch,
                                                         tmp_path):
  _fake_sides(monkeypatch, stdout={"old": "loss = 0.5\nacc = 1\n",
                                   "new": "loss = 0.5000001\nacc = 2\n"})
  result = run_both.run_both(PROGRAM, "/py", str(tmp_path / "1"))
  assert [d.where for d in result.differences] == [
      "stdout metric line 1: loss", "stdout metric line 2: acc"]
  result = run_both.run_both(PROGRAM, "/py", str(tmp_path / "2"), rtol=1e-5,
                             ignore=("printed:*acc",))
  assert result.differences == () and result.ok


def test_what_the_old_rerun_shows_too_is_not_counted(monkeypatch, tmp_path):
  # The old side and its rerun differ in `loss` (the program's own noise);
  # the new side differs from the old in `loss` and in `acc`.
  runs = iter(["loss = 0.5\nacc = 1\n", "loss = 0.7\nacc = 1\n"])
  calls = _fake_sides(monkeypatch, stdout={"new": "loss = 0.6\nacc = 2\n"})
  real_side_run = sides.SideRun

  def old_stdout(**kwargs):
    if kwargs["name"] != "new":
      kwargs["stdout"] = next(runs)
    return real_side_run(**kwargs)

  monkeypatch.setattr(sides, "SideRun", old_stdout)
  result = run_both.run_both(PROGRAM, "/py", str(tmp_path), rerun_old=True)
  assert calls == ["old", "engine=None", "new", "old_rerun"]
  assert result.rerun_ok is False
  assert [(rel, d.where) for rel, d in result.explained] == [
      ("", "stdout metric line 1: loss")]
  assert [d.where for d in result.differences] == [
      "stdout metric line 2: acc"]
  assert any(n.startswith("the real Estimator rerun from the same checkpoint "
                          "differs from its first run in 1 places")
             for n in result.notes)
  assert not result.ok


def test_a_deterministic_old_rerun_passes_unchanged(monkeypatch, tmp_path):
  calls = _fake_sides(monkeypatch, stdout={"old": "loss = 0.5\n",
                                           "new": "loss = 0.5\n",
                                           "old_rerun": "loss = 0.5\n"})
  result = run_both.run_both(PROGRAM, "/py", str(tmp_path), rerun_old=True)
  assert calls[-1] == "old_rerun"
  assert result.rerun_ok is True and result.explained == () and result.ok
  assert result.notes == (
      "the old side saved no model.ckpt-0 under the workdir (pass "
      "--model_dir={workdir}/...), so the new side started from its own "
      "initialization",)


def test_main_prints_json_and_keeps_a_named_workdir(monkeypatch, tmp_path,
                                                    capsys):
  _fake_sides(monkeypatch, stdout={"old": "loss = 0.5\n",
                                   "new": "loss = 0.25\n"})
  program = tmp_path / "prog.py"
  program.write_text("print('loss = 0.5')\n")
  workdir = tmp_path / "work"
  assert run_both.main([str(program), "--json", "--workdir",
                        str(workdir)]) == 1
  out, err = capsys.readouterr()
  saved = json.loads(out)
  assert saved["ok"] is False and saved["old"]["workdir"] == str(
      workdir / "old")
  assert [d["where"] for d in saved["differences"]] == [
      "stdout metric line 1: loss"]
  assert err.startswith(f"workdir: {workdir} (event overlay:")
  assert workdir.is_dir()
  # The same folder again is not empty: refused before anything runs.
  assert run_both.main([str(program), "--workdir", str(workdir)]) == 2
  assert "is not empty. Fix: name a new or empty folder." in (
      capsys.readouterr().err)


def test_main_prints_the_table_and_removes_its_temporary_workdir(
    monkeypatch, tmp_path, capsys):
  _fake_sides(monkeypatch, stdout={"old": "loss = 0.5\n",
                                   "new": "loss = 0.5\n"})
  made = []
  real_mkdtemp = run_both.tempfile.mkdtemp
  monkeypatch.setattr(run_both.tempfile, "mkdtemp", lambda prefix: made.append(
      real_mkdtemp(prefix=prefix, dir=str(tmp_path))) or made[-1])
  program = tmp_path / "prog.py"
  program.write_text("")
  assert run_both.main([str(program)]) == 0
  out, err = capsys.readouterr()
  assert out.endswith("PASSED: no differences.\n") and err == ""
  assert len(made) == 1 and not os.path.exists(made[0])


def test_main_reports_a_failed_old_side_with_exit_2(monkeypatch, tmp_path,
                                                    capsys):
  _fake_sides(monkeypatch, old_code=1)
  program = tmp_path / "prog.py"
  program.write_text("")
  workdir = tmp_path / "work"
  assert run_both.main([str(program), "--workdir", str(workdir)]) == 2
  err = capsys.readouterr().err
  assert err.startswith("error: the old side failed (exit 1)")
  assert err.endswith(f"(workdir: {workdir})\n")
