"""The API status registry: every public name has an entry, statuses follow
what estimator_compat provides."""

import pytest

import estimator_compat
from estimator_compat.api import api_status
from estimator_compat.api import api_status_tf1
from estimator_compat.api import api_status_tf215
from estimator_compat.api import module_paths
from estimator_compat import v1 as estimator_v1

V1, V2 = api_status.V1, api_status.V2


def _known(relative: str) -> bool:
  """Whether the registry has an entry for a name (relative to the API)."""
  return (relative in api_status_tf215.V2_NAMES or
          relative in api_status_tf215.V1_NAMES or
          relative in api_status.subpackages() or
          relative in api_status.EXTRAS)


def _subpackage_names():
  for sub in module_paths.API_SUBPACKAGES:
    module = estimator_compat
    for part in sub.split("."):  # "tpu.experimental"
      module = getattr(module, part)
    for name in getattr(module, "__all__", []):
      yield f"{sub}.{name}"


def test_every_public_name_has_a_registry_entry():
  public = (set(estimator_compat.__all__) | set(estimator_v1.V1_PUBLIC) |
            set(_subpackage_names()))
  missing = sorted(name for name in public if not _known(name))
  assert not missing, (
      f"{missing} have no entry in the API status registry. Fix: a name of "
      "TF 2.15's Estimator is known from estimator_compat/api/api_status_tf215.py"
      " (regenerate it with tools/estimator_api_names.py); a name of "
      "estimator_compat's own needs one line in api_status.EXTRAS.")


def test_every_tf215_name_gets_a_status_with_a_reason():
  for namespace, names in ((V2, api_status_tf215.V2_NAMES),
                           (V1, api_status_tf215.V1_NAMES)):
    for name in names:
      status = api_status.name_status(namespace, name)
      assert status.status in api_status.STATUSES
      if status.status == api_status.UNSUPPORTED:
        assert "Fix:" in status.note, (namespace, name)
      if status.status == api_status.DIFFERS:
        assert "README.md#" in status.note or "docs/" in status.note


def test_status_follows_what_estimator_compat_resolves():
  for namespace, names in ((V2, api_status_tf215.V2_NAMES),
                           (V1, api_status_tf215.V1_NAMES)):
    for name in names:
      provided, _ = api_status.resolve(namespace, name)
      status = api_status.name_status(namespace, name).status
      if not provided:
        assert status == api_status.UNSUPPORTED, (namespace, name)
      elif name in api_status.DIFFERENCES:
        assert status == api_status.DIFFERS, (namespace, name)


def test_registry_tables_name_only_known_names():
  for table in (api_status.DIFFERENCES, api_status.INSTEAD,
                api_status.ONE_FOR_BOTH):
    stale = [name for name in table
             if name not in api_status_tf215.V2_NAMES
             and name not in api_status_tf215.V1_NAMES
             and name not in api_status.subpackages()]
    assert not stale, stale
  assert set(api_status.ONE_FOR_BOTH) <= set(api_status_tf215.V1_DISTINCT)
  assert not [name for name in api_status.EXTRAS if _known(name) and (
      name in api_status_tf215.V2_NAMES or name in api_status_tf215.V1_NAMES)]


@pytest.fixture
def provide():
  """Makes estimator_compat (and maybe its v1 namespace) provide a name."""
  added = []

  def add(name, v1_version=False):
    if not added:
      added.append(name)
      vars(estimator_compat)[name] = type(name, (), {})
    if v1_version:
      vars(estimator_v1)[name] = type(name + "V1", (), {})

  yield add
  for name in added:  # estimator_compat.v1 caches what it resolved.
    vars(estimator_compat).pop(name, None)
    vars(estimator_v1).pop(name, None)


def test_a_name_a_branch_adds_becomes_supported_without_edits(provide):
  name = "DNNLinearCombinedRegressor"
  if api_status.resolve(V2, name)[0]:
    pytest.skip(f"estimator_compat already provides {name}")
  assert api_status.name_status(V2, name).status == api_status.UNSUPPORTED
  provide(name)
  assert api_status.name_status(V2, name) == api_status.Status(
      api_status.SUPPORTED)
  # Its TF1 version differed in TF 2.15: the v1 namespace falling back to the
  # TF2 class is no support for it.
  v1_status = api_status.name_status(V1, name)
  assert v1_status.status == api_status.UNSUPPORTED
  assert "only the TF2 version" in v1_status.note
  provide(name, v1_version=True)
  assert api_status.name_status(V1, name).status == api_status.SUPPORTED


def test_a_module_path_follows_module_paths(monkeypatch):
  parts = ("canned", "kmeans_test_only", "KMeansClustering")
  assert api_status.module_path_status(parts)[1].status == (
      api_status.UNSUPPORTED)
  entry = module_paths.ModulePath("canned.kmeans_test_only",
                                  "estimator_compat", ("KMeansClustering",))
  monkeypatch.setattr(module_paths, "MODULES", module_paths.MODULES + (entry,))
  count, status = api_status.module_path_status(parts)
  assert (count, status.status) == (3, api_status.SUPPORTED)


def test_model_to_estimator_follows_the_keras_lib_module_path():
  status = api_status_tf1.tf_status(
      ("keras", "estimator", "model_to_estimator"), False)[1].status
  provided = any(entry.path == "keras_lib" and any(
      spec.partition("=")[0] == "model_to_estimator" for spec in entry.names)
                 for entry in module_paths.MODULES)
  assert status == (api_status.SUPPORTED if provided else
                    api_status.UNSUPPORTED)


def test_tensorflow_estimator_estimator_is_tf1s_namespace():
  # In TF 2.15 `tensorflow_estimator.estimator` was tf.compat.v1.estimator.
  assert api_status_tf215.V1_DISTINCT
  name = api_status_tf215.V1_DISTINCT[0]
  found = api_status.package_status(("estimator", name))
  expected = api_status.name_status(
      V1, name, V1 if module_paths.ROOT + ".estimator" in
      module_paths.V1_ALIASES else V2)
  assert found == (2, expected)


@pytest.mark.parametrize("parts,symbol_length,status,replacement", [
    (("layers", "dense"), 2, "tf-removed", "tf.compat.v1.layers.dense"),
    (("train", "AdamOptimizer"), 2, "tf-removed",
     "tf.compat.v1.train.AdamOptimizer"),
    (("flags", "FLAGS", "model_dir"), 2, "tf-removed",
     "tf.compat.v1.flags.FLAGS"),
    (("contrib", "layers", "flatten"), 3, "tf-removed", ""),
    (("compat", "v1", "train", "AdamOptimizer"), 4, "supported", ""),
    (("compat", "v1", "train", "SessionRunArgs"), 4, "supported", ""),
    (("compat", "v1", "metrics", "auc"), 4, "supported", ""),
    (("feature_column", "numeric_column"), 2, "supported", ""),
])
def test_tf1_and_removed_names(parts, symbol_length, status, replacement):
  count, found = api_status_tf1.tf_status(parts, tf1_code=False)
  assert (count, found.status, found.replacement) == (
      symbol_length, status, replacement)


def test_tf2_names_are_no_finding_unless_tf1_code():
  assert api_status_tf1.tf_status(("reduce_mean",), False) is None
  assert api_status_tf1.tf_status(("summary", "scalar"), False) is None
  count, status = api_status_tf1.tf_status(("summary", "scalar"), True)
  assert (count, status.replacement) == (2, "tf.compat.v1.summary.scalar")

