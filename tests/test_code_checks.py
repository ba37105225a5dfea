"""The code checks tools/dev.sh test runs: each fails on a planted fault."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(*args, cwd=ROOT):
  return subprocess.run([sys.executable, "-m", *args], cwd=cwd,
                        capture_output=True, text=True, timeout=600,
                        check=False)


def test_ruff_passes_here_and_fails_on_an_unused_import(tmp_path):
  config = os.path.join(ROOT, "tools", "ruff.toml")
  clean = _run("ruff", "check", "--config", config, ".")
  assert clean.returncode == 0, clean.stdout[-3000:]
  planted = tmp_path / "planted.py"
  planted.write_text("import os\n\n\ndef f():\n  return 1\n")
  done = _run("ruff", "check", "--config", config, str(planted))
  assert done.returncode == 1 and "F401" in done.stdout, done.stdout


def test_mypy_fails_on_a_call_missing_an_argument(tmp_path):
  package = tmp_path / "planted"
  package.mkdir()
  (package / "__init__.py").write_text("")
  (package / "callee.py").write_text(
      "def build(config, choice):\n  return config, choice\n")
  (package / "caller.py").write_text(
      "from planted import callee\n\n\ndef run(config):\n"
      "  return callee.build(config)\n")
  config = os.path.join(ROOT, "tools", "mypy.ini")
  done = _run("mypy", "--config-file", config, "--cache-dir",
              str(tmp_path / "cache"), "planted", cwd=tmp_path)
  assert done.returncode == 1, done.stdout
  assert '[call-arg]' in done.stdout and 'caller.py:5' in done.stdout, (
      done.stdout)
  # The same package with the argument given passes.
  (package / "caller.py").write_text(
      "from planted import callee\n\n\ndef run(config):\n"
      "  return callee.build(config, None)\n")
  done = _run("mypy", "--config-file", config, "--cache-dir",
              str(tmp_path / "cache"), "planted", cwd=tmp_path)
  assert done.returncode == 0, done.stdout
