"""estimator_compat.api.tf_versions: the supported range and the tf-keras pair."""

import ast
import importlib.metadata
import os
import re
import warnings

import pytest

from estimator_compat.api import tf_versions


@pytest.mark.parametrize("version,supported", [
    ("2.16.1", True), ("2.16.2", True), ("2.19.0", True), ("2.21.0", True),
    ("2.21.0rc1", True), ("2.15.1", False), ("2.22.0", False),
    ("1.15.5", False), ("", False)])
def test_the_supported_range_is_2_16_to_2_21(version, supported):
  assert tf_versions.is_supported(version) == supported


def test_the_matching_tf_keras_has_tensorflow_s_minor():
  assert tf_versions.matching_tf_keras("2.17.1") == "tf-keras==2.17.*"
  # Outside the range (or unknown): the newest supported pair.
  assert tf_versions.matching_tf_keras("2.15.1") == "tf-keras==2.21.*"
  assert tf_versions.matching_tf_keras(None) == "tf-keras==2.21.*"


def _installed_versions(monkeypatch, versions):
  def version(name):
    if name not in versions:
      raise importlib.metadata.PackageNotFoundError(name)
    return versions[name]
  monkeypatch.setattr(importlib.metadata, "version", version)


def test_a_tf_keras_of_another_minor_is_refused_with_the_fix(monkeypatch):
  _installed_versions(monkeypatch, {"tensorflow": "2.18.1",
                                    "tf-keras": "2.21.0"})
  with pytest.raises(ImportError, match=r"TensorFlow 2\.18\.1 with tf-keras "
                     r"2\.21\.0.*Fix: pip install 'tf-keras==2\.18\.\*'"):
    tf_versions.check_installed()


def test_tensorflow_cpu_with_its_tf_keras_passes(monkeypatch):
  _installed_versions(monkeypatch, {"tensorflow-cpu": "2.16.2",
                                    "tf-keras": "2.16.0"})
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    tf_versions.check_installed()


def test_tensorflow_2_20_with_protobuf_7_is_refused_with_the_fix(monkeypatch):
  _installed_versions(monkeypatch, {"tensorflow": "2.20.0",
                                    "tf-keras": "2.20.1",
                                    "protobuf": "7.36.2"})
  with pytest.raises(ImportError, match=r"TensorFlow 2\.20\.0 with protobuf "
                     r"7\.36\.2.*Fix: pip install 'protobuf<7'"):
    tf_versions.check_installed()
  assert tf_versions.extra_requirements("2.20.0") == "protobuf<7"
  assert tf_versions.extra_requirements("2.21.0") == ""


@pytest.mark.parametrize("tf_version,protobuf", [
    ("2.20.0", "6.33.6"), ("2.21.0", "7.36.2")])
def test_protobuf_that_works_with_the_release_passes(monkeypatch, tf_version,
                                                     protobuf):
  _installed_versions(monkeypatch, {"tensorflow": tf_version,
                                    "tf-keras": tf_version,
                                    "protobuf": protobuf})
  tf_versions.check_installed()


def test_a_release_outside_the_range_warns_with_the_fix(monkeypatch):
  _installed_versions(monkeypatch, {"tensorflow": "2.22.0",
                                    "tf-keras": "2.22.0"})
  with pytest.warns(RuntimeWarning, match=r"tested on TensorFlow 2\.16 to "
                    r"2\.21, not 2\.22\.0.*'tensorflow>=2\.16,<2\.22'"):
    tf_versions.check_installed()


def test_the_installed_pair_here_is_supported():
  tf_version = tf_versions.installed_tensorflow()
  assert tf_version is not None and tf_versions.is_supported(tf_version)
  tf_versions.check_installed()


def test_the_first_public_name_checks_the_pair_once(monkeypatch):
  import estimator_compat  # pylint: disable=g-import-not-at-top
  calls = []

  def refuse():
    calls.append(1)
    raise ImportError("mismatched pair")

  monkeypatch.setattr(tf_versions, "_checked", False)
  monkeypatch.setattr(tf_versions, "check_installed", refuse)
  monkeypatch.delitem(estimator_compat.__dict__, "ModeKeys", raising=False)
  with pytest.raises(ImportError, match="mismatched pair"):
    estimator_compat.ModeKeys  # pylint: disable=pointless-statement
  # Checked once: the next name loads without checking again.
  assert estimator_compat.ModeKeys.TRAIN == "train"
  assert calls == [1]


def _setup_keyword(name):
  """A keyword argument of setup.py's setuptools.setup() call, unexecuted."""
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  with open(os.path.join(root, "setup.py"), encoding="utf-8") as f:
    tree = ast.parse(f.read())
  calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
           and getattr(node.func, "attr", None) == "setup"]
  keyword, = [k for k in calls[0].keywords if k.arg == name]
  return ast.literal_eval(keyword.value)


def _tested_pythons():
  """The X.Y rows of docs/tensorflow_versions.md's Python table."""
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  with open(os.path.join(root, "docs", "tensorflow_versions.md"),
            encoding="utf-8") as f:
    section = f.read().split("## Python versions", 1)[1].split("\n## ", 1)[0]
  return sorted({tuple(map(int, row.groups())) for row in re.finditer(
      r"^\| (\d+)\.(\d+)\.\d+ \|", section, re.M)})


def test_python_requires_and_classifiers_claim_the_tested_pythons_only():
  tested = _tested_pythons()
  assert len(tested) >= 2, tested
  classified = sorted(
      tuple(map(int, c.rsplit(" ", 1)[1].split("."))) for c in
      _setup_keyword("classifiers")
      if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c))
  assert classified == tested
  lowest, highest = tested[0], tested[-1]
  assert _setup_keyword("python_requires") == (
      f">={lowest[0]}.{lowest[1]},<{highest[0]}.{highest[1] + 1}")
  # No gap: every minor between the lowest and the highest was tested.
  assert [minor for _, minor in tested] == list(
      range(lowest[1], highest[1] + 1))
