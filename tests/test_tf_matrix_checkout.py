"""tools/tf_matrix.sh --checkout: where the conformance sample's files come from.

The Estimator's own test files come from a tensorflow/estimator v2.15.0
checkout, which only github has. Each case runs the script with github
redirected to a missing local path (git's url.<base>.insteadOf, set through
the environment), so no case reaches the network.
"""

import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "tools", "tf_matrix.sh")
TEST_DIR = os.path.join("tensorflow_estimator", "python", "estimator")


def _checkout(tmp_path, **env):
  """Runs `tf_matrix.sh --checkout` offline; returns the finished process."""
  environ = {k: v for k, v in os.environ.items()
             if k != "ESTIMATOR_COMPAT_ESTIMATOR_CHECKOUT"}
  environ.update({
      "ESTIMATOR_COMPAT_TF_MATRIX": str(tmp_path / "matrix"),
      "GIT_CONFIG_COUNT": "1",
      "GIT_CONFIG_KEY_0": "url.%s/.insteadOf" % (tmp_path / "no-github"),
      "GIT_CONFIG_VALUE_0": "https://github.com/",
  })
  environ.update(env)
  return subprocess.run(["bash", SCRIPT, "--checkout"], env=environ,
                        capture_output=True, text=True, timeout=120,
                        check=False)


def _fake_checkout(path):
  os.makedirs(path / TEST_DIR)
  (path / TEST_DIR / "model_fn_test.py").write_text("")
  return path


def test_unreachable_github_says_what_is_missing_and_how_to_provide_it(
    tmp_path):
  done = _checkout(tmp_path)
  assert done.returncode == 0, done.stderr
  assert done.stdout == ""
  assert "conformance sample NOT RUN" in done.stderr
  # Why the package index cannot stand in, and the two ways to provide one.
  assert "wheel on the package index ships none of them" in done.stderr
  assert "ESTIMATOR_COMPAT_ESTIMATOR_CHECKOUT=DIR" in done.stderr
  assert str(tmp_path / "matrix" / "estimator-v2.15.0") in done.stderr
  # The failed clone leaves nothing that a later run could take for one.
  assert sorted(os.listdir(tmp_path / "matrix")) == []


def test_a_wrong_checkout_variable_fails_and_its_folder_is_kept(tmp_path):
  folder = tmp_path / "mine"
  folder.mkdir()
  (folder / "notes.txt").write_text("kept")
  done = _checkout(tmp_path, ESTIMATOR_COMPAT_ESTIMATOR_CHECKOUT=str(folder))
  assert done.returncode != 0
  assert done.stdout == ""
  assert ("ESTIMATOR_COMPAT_ESTIMATOR_CHECKOUT=%s is not a "
          "tensorflow/estimator v2.15.0 checkout" % folder) in done.stderr
  assert "Fix:" in done.stderr
  assert (folder / "notes.txt").read_text() == "kept"


def test_the_variable_or_the_cached_checkout_is_used_without_cloning(
    tmp_path):
  given = _fake_checkout(tmp_path / "given")
  done = _checkout(tmp_path, ESTIMATOR_COMPAT_ESTIMATOR_CHECKOUT=str(given))
  assert (done.returncode, done.stdout.strip()) == (0, str(given)), done.stderr
  cached = _fake_checkout(tmp_path / "matrix" / "estimator-v2.15.0")
  done = _checkout(tmp_path)
  assert (done.returncode, done.stdout.strip()) == (0, str(cached)), done.stderr
