"""Zero edits: the launcher, ESTIMATOR_COMPAT_AUTO=1 and %load_ext.

Each runs an unchanged legacy program (tests/zero_edit_programs: no line
mentions estimator_compat) in a subprocess. The environment switch needs its
.pth in a real site-packages: `_scratch_venv` makes a venv whose
site-packages holds the repo's .pth file, the checkout and this
interpreter's site-packages (TensorFlow), as an install would.
"""

import json
import os
import shutil
import site
import subprocess
import sys
import textwrap

import pytest

from estimator_compat.api import auto
from estimator_compat.api import launcher

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = os.path.join(ROOT, "tests", "zero_edit_programs")
PTH = os.path.join(ROOT, "estimator_compat", auto.PTH_NAME)
_TIMEOUT = 300


def _env(**extra):
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
  for name in (auto.ENV, "ESTIMATOR_COMPAT_ENGINE", "TF_USE_LEGACY_KERAS"):
    env.pop(name, None)
  env.update(extra)
  return env


def _run(args, cwd, env=None, python=sys.executable):
  return subprocess.run([python] + args, cwd=cwd, env=env or _env(),
                        capture_output=True, text=True, timeout=_TIMEOUT,
                        check=False)


def _result(process):
  lines = [l for l in process.stdout.splitlines() if l.startswith("RESULT ")]
  assert lines, (process.returncode, process.stdout, process.stderr[-3000:])
  return json.loads(lines[-1][len("RESULT "):])


def _scratch_venv(path):
  """A venv (no pip) seeing the checkout and this interpreter's packages."""
  subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)],
                 check=True, timeout=120)
  python = os.path.join(path, "bin", "python")
  purelib = subprocess.run(
      [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
      check=True, capture_output=True, text=True).stdout.strip()
  with open(os.path.join(purelib, "00_checkout.pth"), "w") as f:
    f.write(ROOT + "\n")
  with open(os.path.join(purelib, "01_parent_site.pth"), "w") as f:
    for directory in site.getsitepackages():
      f.write(f"import site; site.addsitedir({directory!r})\n")
  shutil.copy(PTH, os.path.join(purelib, auto.PTH_NAME))
  return python


# The launcher's command line.


def test_parse_splits_the_program_from_its_arguments():
  assert launcher.parse(["prog.py", "--x", "-m", "y"]) == (
      "path", "prog.py", ["--x", "-m", "y"])
  assert launcher.parse(["-m", "pkg.mod", "a"]) == ("module", "pkg.mod", ["a"])
  assert launcher.parse(["-mpkg.mod"]) == ("module", "pkg.mod", [])
  assert launcher.parse(["--", "-odd.py"]) == ("path", "-odd.py", [])
  assert launcher.parse(["--help", "prog.py"]) is None
  for bad in ([], ["-m"], ["--engine=graph", "prog.py"]):
    with pytest.raises(launcher.UsageError):
      launcher.parse(bad)


def test_help_and_usage_errors_answer_without_tensorflow(tmp_path):
  shown = _run(["-m", "estimator_compat", "--help"], tmp_path)
  assert shown.returncode == 0, shown.stderr
  assert "python -m estimator_compat PROGRAM.py" in shown.stdout
  assert "ESTIMATOR_COMPAT_AUTO=1" in shown.stdout
  none = _run(["-m", "estimator_compat"], tmp_path)
  assert none.returncode == 2 and "no program given" in none.stderr
  missing = _run(["-m", "estimator_compat", "nowhere.py"], tmp_path)
  assert missing.returncode == 2
  assert "can't open file" in missing.stderr and "nowhere.py" in missing.stderr
  no_module = _run(["-m", "estimator_compat", "-m", "no_such_mod"], tmp_path)
  assert no_module.returncode == 1
  assert "No module named no_such_mod" in no_module.stderr
  broken = tmp_path / "broken.py"
  broken.write_text("def f(:\n")
  syntax = _run(["-m", "estimator_compat", "broken.py"], tmp_path)
  assert syntax.returncode == 1
  assert "SyntaxError" in syntax.stderr and "launcher.py" not in syntax.stderr


@pytest.mark.parametrize("flags,path0", [
    ({}, "prog_dir"),  # Python 3.10: no sys.flags.safe_path (no -P)
    ({"safe_path": 0}, "prog_dir"),
    ({"safe_path": 1}, "unchanged"),  # `python -P`
])
def test_sys_path0_is_the_programs_directory_unless_safe_path(
    monkeypatch, flags, path0):
  monkeypatch.setattr(sys, "flags", type("Flags", (), flags)())
  monkeypatch.setattr(sys, "path", ["unchanged"] + sys.path[1:])
  launcher._set_path0("prog_dir")  # pylint: disable=protected-access
  assert sys.path[0] == path0


# The launcher on the legacy programs.


@pytest.mark.slow
def test_launcher_runs_a_script_unchanged_with_its_argv_and_exit_code(
    tmp_path):
  work = tmp_path / "work"
  shutil.copytree(PROGRAMS, work / "prog")
  model_dir = str(tmp_path / "model")
  process = _run(["-m", "estimator_compat", "prog/legacy_train.py", model_dir,
                  "--steps=5", "--exit_code=3"], cwd=work)
  assert process.returncode == 3, process.stderr[-3000:]
  result = _result(process)
  assert result["argv"] == ["prog/legacy_train.py", model_dir, "--steps=5",
                            "--exit_code=3"]
  assert result["path0"] == str(work / "prog")
  assert result["name"] == "__main__"
  assert result["global_step"] == 5
  assert result["estimator"].startswith("estimator_compat.")
  assert os.path.exists(os.path.join(model_dir, "model.ckpt-5.index"))


@pytest.mark.slow
def test_launcher_traceback_starts_at_the_programs_frames(tmp_path):
  program = os.path.join(PROGRAMS, "legacy_train.py")
  process = _run(["-m", "estimator_compat", program, str(tmp_path / "m"),
                  "--fail"], cwd=tmp_path)
  assert process.returncode == 1
  lines = process.stderr.splitlines()
  start = lines.index("Traceback (most recent call last):")
  frames = [l.strip() for l in lines[start:] if l.startswith("  File ")]
  assert frames[0].startswith(f'File "{program}", line '), frames
  assert all(program in frame for frame in frames), frames
  assert lines[-1] == "ValueError: legacy_train: bad data"
  assert not os.path.exists(tmp_path / "m" / "checkpoint")


@pytest.mark.slow
def test_launcher_module_traceback_starts_at_the_modules_frames(tmp_path):
  (tmp_path / "failing.py").write_text(
      "def load():\n  raise KeyError('no such column')\n\nload()\n")
  process = _run(["-m", "estimator_compat", "-m", "failing"], cwd=tmp_path)
  assert process.returncode == 1
  lines = process.stderr.splitlines()
  start = lines.index("Traceback (most recent call last):")
  frames = [l.strip() for l in lines[start:] if l.startswith("  File ")]
  program = str(tmp_path / "failing.py")
  assert frames == [f'File "{program}", line 4, in <module>',
                    f'File "{program}", line 2, in load'], frames
  assert lines[-1] == "KeyError: 'no such column'"


@pytest.mark.slow
def test_launcher_runs_an_absl_module_and_keeps_app_runs_exit_code(tmp_path):
  model_dir = str(tmp_path / "model")
  process = _run(["-m", "estimator_compat", "-m",
                  "tests.zero_edit_programs.absl_trainer",
                  f"--model_dir={model_dir}", "--train_steps=5",
                  "--exit_code=4"], cwd=ROOT)
  assert process.returncode == 4, process.stderr[-3000:]
  result = _result(process)
  assert result["argv"][0] == os.path.join(PROGRAMS, "absl_trainer.py")
  assert result["argv"][1:] == [f"--model_dir={model_dir}", "--train_steps=5",
                                "--exit_code=4"]
  assert result["path0"] == ROOT
  assert result["global_step"] == 5
  assert result["estimator"].startswith("estimator_compat.")


# ESTIMATOR_COMPAT_AUTO=1.


def test_the_pth_line_imports_nothing_unless_the_switch_is_set(tmp_path):
  python = _scratch_venv(tmp_path / "venv")
  probe = ("import sys; print(sorted(m for m in sys.modules if m.split('.')[0]"
           " in ('estimator_compat', 'tensorflow')))")
  for value, loaded in (("", []), ("0", []), ("1", [
      "estimator_compat", "estimator_compat.api", "estimator_compat.api.auto",
      "estimator_compat.api.legacy_keras",
      "estimator_compat.api.tf_versions"])):
    env = _env(**{auto.ENV: value})
    process = _run(["-c", probe], tmp_path, env, python)
    assert process.returncode == 0, process.stderr
    assert process.stdout.strip() == repr(loaded), value


def test_enabled_reads_the_switch():
  assert not auto.enabled({})
  for off in ("", "0", "false", "No", "off "):
    assert not auto.enabled({auto.ENV: off}), off
  for on in ("1", "true", "yes"):
    assert auto.enabled({auto.ENV: on}), on


@pytest.mark.slow
def test_switch_runs_an_absl_binary_started_from_a_shell_script(tmp_path):
  python = _scratch_venv(tmp_path / "venv")
  model_dir = str(tmp_path / "model")
  env = _env(**{auto.ENV: "1"})
  env["PATH"] = os.path.dirname(python) + os.pathsep + env["PATH"]
  process = subprocess.run(
      ["sh", os.path.join(PROGRAMS, "run_trainer.sh"),
       f"--model_dir={model_dir}", "--train_steps=5"],
      cwd=tmp_path, env=env, capture_output=True, text=True, timeout=_TIMEOUT,
      check=False)
  assert process.returncode == 0, process.stderr[-3000:]
  result = _result(process)
  assert result["argv"] == [os.path.join(PROGRAMS, "absl_trainer.py"),
                            f"--model_dir={model_dir}", "--train_steps=5"]
  assert result["global_step"] == 5
  assert result["estimator"].startswith("estimator_compat.")


@pytest.mark.slow
def test_switch_serves_tensorflow_estimator_imported_before_tensorflow(
    tmp_path):
  python = _scratch_venv(tmp_path / "venv")
  program = tmp_path / "program.py"
  program.write_text(textwrap.dedent("""\
      from tensorflow_estimator.python.estimator import model_fn as model_fn_lib
      import tensorflow_estimator
      import tensorflow as tf
      assert model_fn_lib.EstimatorSpec is tf.estimator.EstimatorSpec
      print("RESULT " + repr(tf.estimator.Estimator.__module__)
            .replace("'", '"'))
      """))
  process = _run([str(program)], tmp_path, _env(**{auto.ENV: "1"}), python)
  assert process.returncode == 0, process.stderr[-3000:]
  assert _result(process) == "estimator_compat.estimator"


# %load_ext estimator_compat.

_NOTEBOOK_CELLS = """\
import tensorflow as tf
import legacy_train
estimator = tf.estimator.Estimator(legacy_train.model_fn, model_dir={model_dir!r})
estimator.train(legacy_train.input_fn, steps=5)
step = int(estimator.get_variable_value("global_step"))
print("RESULT " + json.dumps({{"global_step": step,
      "estimator": tf.estimator.Estimator.__module__}}))
"""


@pytest.mark.slow
def test_load_ext_in_ipython_runs_legacy_cells(tmp_path):
  pytest.importorskip("IPython")
  model_dir = str(tmp_path / "model")
  cells = tmp_path / "cells.ipy"
  cells.write_text("%load_ext estimator_compat\nimport json, sys\n"
                   f"sys.path.insert(0, {PROGRAMS!r})\n" +
                   _NOTEBOOK_CELLS.format(model_dir=model_dir))
  process = _run(["-m", "IPython", "--quick", "--no-banner", "--colors=nocolor",
                  str(cells)], tmp_path)
  assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-3000:]
  result = _result(process)
  assert result == {"global_step": 5, "estimator": "estimator_compat.estimator"}


@pytest.mark.slow
def test_load_ipython_extension_installs_for_the_cells_after_it(tmp_path):
  # What `%load_ext estimator_compat` does (IPython's ExtensionManager):
  # import the module, call its load_ipython_extension with the shell.
  model_dir = str(tmp_path / "model")
  cells = ("import importlib, json, sys\n"
           "importlib.import_module('estimator_compat')"
           ".load_ipython_extension(object())\n"
           f"sys.path.insert(0, {PROGRAMS!r})\n" +
           _NOTEBOOK_CELLS.format(model_dir=model_dir))
  process = _run(["-c", cells], tmp_path)
  assert process.returncode == 0, process.stderr[-3000:]
  result = _result(process)
  assert result == {"global_step": 5, "estimator": "estimator_compat.estimator"}


# The wheel, installed into a fresh venv, used from another directory.


def _source_copy(destination):
  """The checkout without tests and build outputs: builds write into it."""
  shutil.copytree(ROOT, destination, ignore=shutil.ignore_patterns(
      ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__",
      ".pytest_cache", "bazel-*", "tests"))
  return str(destination)


def _build_wheel(dist, env):
  """`python -m build` (sdist, then the wheel from it), else `pip wheel`."""
  source = _source_copy(dist.parent / "source")
  has_build = subprocess.run(
      [sys.executable, "-m", "build", "--version"], cwd=dist.parent, env=env,
      capture_output=True, timeout=_TIMEOUT, check=False).returncode == 0
  if has_build:
    command = [sys.executable, "-m", "build", "--outdir", str(dist), source]
  else:
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w",
               str(dist), source]
  built = subprocess.run(command, cwd=dist.parent, env=env,
                         capture_output=True, text=True, timeout=_TIMEOUT,
                         check=False)
  assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
  wheels = list(dist.glob("*.whl"))
  assert len(wheels) == 1, wheels
  return wheels[0]


@pytest.mark.slow
def test_the_wheel_runs_legacy_programs_outside_the_checkout(tmp_path):
  # No PYTHONPATH: the checkout's build outputs would pass for installs.
  env = _env()
  env.pop("PYTHONPATH")
  wheel = _build_wheel(tmp_path / "dist", env)
  venv = tmp_path / "venv"
  subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)],
                 check=True, timeout=120)
  python = str(venv / "bin" / "python")
  installed = subprocess.run(
      [sys.executable, "-m", "pip", "--python", python, "install", "--no-deps",
       "--no-index", "--force-reinstall", str(wheel)],
      env=env, capture_output=True, text=True, timeout=_TIMEOUT, check=False)
  assert installed.returncode == 0, installed.stderr[-3000:]
  purelib = subprocess.run(
      [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
      check=True, capture_output=True, text=True).stdout.strip()
  assert os.path.exists(os.path.join(purelib, auto.PTH_NAME))
  # TensorFlow and the other dependencies: this interpreter's, after ours,
  # and on sys.path before the wheel's .pth line runs (Python runs .pth files
  # in name order), as in a real install where one site-packages holds them
  # all. Bare paths, not addsitedir: the .pth files there (the checkout's
  # editable install, its switch line) stay out of the wheel's process.
  with open(os.path.join(purelib, "00_dependencies.pth"), "w") as f:
    for directory in site.getsitepackages():
      f.write(directory + "\n")
  elsewhere = tmp_path / "elsewhere"
  elsewhere.mkdir()
  shutil.copy(os.path.join(PROGRAMS, "legacy_train.py"), elsewhere)

  where = _run(["-c", "import estimator_compat, migration; "
                "print(estimator_compat.__file__, migration.__file__)"],
               elsewhere, env, python)
  assert where.returncode == 0, where.stderr
  assert all(path.startswith(purelib) for path in where.stdout.split()), (
      where.stdout)

  model_dir = str(tmp_path / "model")
  launched = subprocess.run(
      [str(venv / "bin" / "estimator-compat-run"), "legacy_train.py",
       model_dir, "--steps=5"],
      cwd=elsewhere, env=env, capture_output=True, text=True,
      timeout=_TIMEOUT, check=False)
  assert launched.returncode == 0, launched.stderr[-3000:]
  assert _result(launched)["global_step"] == 5

  switched = _run(["legacy_train.py", model_dir, "--steps=5"], elsewhere,
                  dict(env, **{auto.ENV: "1"}), python)
  assert switched.returncode == 0, switched.stderr[-3000:]
  assert _result(switched)["global_step"] == 10

  checked = _run(["-m", "migration", "check", "--model_fn=legacy_train:model_fn",
                  "--input_fn=legacy_train:input_fn", "--steps", "3",
                  "--report", str(tmp_path / "report")], elsewhere, env, python)
  assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]
  assert "PASSED" in checked.stdout
