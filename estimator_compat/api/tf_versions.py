"""What differs between the supported TensorFlow releases (2.16 to 2.21).

The rest of the package imports release-dependent names from here, so that
supporting another release means reading one module. Nothing here imports
TensorFlow at module import. `check_installed()` reads the installed
distributions' metadata (tens of milliseconds): the package runs it once, with
its first public name, not on `import estimator_compat`, which stays light.
"""

import re
import warnings
from typing import Optional, Tuple

# The TensorFlow minor releases this package is tested on (README: "Tested
# TensorFlow releases"); each needs the tf-keras release of the same minor.
OLDEST = (2, 16)
NEWEST = (2, 21)
# The distributions that provide the `tensorflow` module, most common first.
# Releases whose declared dependencies let pip install a library they fail
# with: TensorFlow 2.20.0 asks for any protobuf>=5.28, but writes graph.pbtxt
# (CheckpointSaverHook, tf.io.write_graph) with MessageToString's
# float_format argument, which protobuf 7 removed (TensorFlow 2.21 no longer
# passes it). {(major, minor): (distribution, first bad major, requirement)}.
_DEPENDENCY_CAPS = {(2, 20): ("protobuf", 7, "protobuf<7")}
_TF_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tensorflow-gpu",
                     "tensorflow-intel", "tensorflow-macos",
                     "tensorflow-aarch64", "tf-nightly", "tf-nightly-cpu")


def minor(version: str) -> Optional[Tuple[int, int]]:
  """(major, minor) of a version string such as '2.16.2' or '2.21.0rc1'."""
  match = re.match(r"(\d+)\.(\d+)", version or "")
  return (int(match.group(1)), int(match.group(2))) if match else None


def is_supported(version: str) -> bool:
  """Whether a TensorFlow version string is in the supported range."""
  found = minor(version)
  return found is not None and OLDEST <= found <= NEWEST


def _installed(names) -> Optional[str]:
  # Here, not at the top: importing it costs more than this whole module.
  import importlib.metadata  # pylint: disable=g-import-not-at-top
  for name in names:
    try:
      return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
      continue
  return None


def installed_tensorflow() -> Optional[str]:
  """The installed TensorFlow distribution's version, or None."""
  return _installed(_TF_DISTRIBUTIONS)


def extra_requirements(tf_version: str) -> str:
  """Pip requirements a release needs beyond its own metadata ('' if none)."""
  cap = _DEPENDENCY_CAPS.get(minor(tf_version))
  return cap[2] if cap else ""


def matching_tf_keras(tf_version: Optional[str]) -> str:
  """The pip requirement of the tf-keras release that pairs with TF."""
  found = minor(tf_version or "")
  if found is None or not OLDEST <= found <= NEWEST:
    found = NEWEST
  return f"tf-keras=={found[0]}.{found[1]}.*"


_checked = False


def check_once() -> None:
  """`check_installed()` the first time only."""
  global _checked
  if not _checked:
    _checked = True
    check_installed()


def check_installed() -> None:
  """Checks the installed TensorFlow and tf-keras releases form a pair.

  Raises:
    ImportError: tf-keras is installed for another TensorFlow minor release
      than TensorFlow's (tf-keras imports TensorFlow internals that move
      between releases, so such a pair fails in obscure places), or a
      library TensorFlow's metadata allows fails with that release
      (protobuf 7 with TensorFlow 2.20).
  """
  tf_version = installed_tensorflow()
  keras_version = _installed(("tf-keras", "tf-keras-nightly"))
  if tf_version is None or keras_version is None:
    return  # Not installed as distributions (a source tree): nothing to read.
  if minor(tf_version) != minor(keras_version):
    raise ImportError(
        f"estimator_compat found TensorFlow {tf_version} with tf-keras "
        f"{keras_version}; tf-keras must be the release of TensorFlow's minor "
        f"version. Fix: pip install '{matching_tf_keras(tf_version)}'.")
  cap = _DEPENDENCY_CAPS.get(minor(tf_version))
  if cap is not None:
    distribution, bad_major, requirement = cap
    found = _installed((distribution,))
    if found is not None and minor(found) is not None and (
        minor(found)[0] >= bad_major):
      raise ImportError(
          f"estimator_compat found TensorFlow {tf_version} with {distribution} "
          f"{found}; TensorFlow {tf_version} fails with {distribution} "
          f"{bad_major} or later (writing graph.pbtxt). Fix: pip install "
          f"'{requirement}'.")
  if not is_supported(tf_version):
    warnings.warn(
        f"estimator_compat is tested on TensorFlow "
        f"{OLDEST[0]}.{OLDEST[1]} to {NEWEST[0]}.{NEWEST[1]}, not "
        f"{tf_version}. Fix: pip install 'tensorflow>={OLDEST[0]}.{OLDEST[1]},"
        f"<{NEWEST[0]}.{NEWEST[1] + 1}' '{matching_tf_keras(None)}'.",
        RuntimeWarning, stacklevel=3)
