"""`ESTIMATOR_COMPAT_AUTO=1`: install() in every Python process, no edits.

The package installs `estimator_compat_auto.pth` into site-packages (see
setup.py). Python runs its one line at every start; it only reads the
environment variable, and imports this module when the variable is set:

  import os; os.environ.get("ESTIMATOR_COMPAT_AUTO", "0") in ("", "0") or
  __import__("estimator_compat.api.auto").api.auto.activate()

`activate()` does not import TensorFlow (seconds) at every Python start: it
puts a finder at the front of `sys.meta_path` that waits for the process's
first `import tensorflow` (or `import tensorflow_estimator`) and calls
`estimator_compat.install()` as soon as TensorFlow has loaded, before the
importing line continues. A process that never imports TensorFlow (pip, a
shell helper) pays only for importing this package (no TensorFlow).
Importing the package also sets `TF_USE_LEGACY_KERAS=1`, which the
process's children inherit.

Distribution flags (`--strategy`, `--local_cluster`, ...) are read from the
command line at that first import, as the explicit `install()` does.
"""

import importlib.util
import os
import sys
import types
from typing import Any, Mapping, Optional, Sequence

ENV = "ESTIMATOR_COMPAT_AUTO"
PTH_NAME = "estimator_compat_auto.pth"
_OFF = ("", "0", "false", "no", "off")
_TENSORFLOW = "tensorflow"
_ESTIMATOR = "tensorflow_estimator"


def enabled(environ: Optional[Mapping[str, str]] = None) -> bool:
  """Whether ESTIMATOR_COMPAT_AUTO asks for install() in this process."""
  environ = os.environ if environ is None else environ
  return environ.get(ENV, "").strip().lower() not in _OFF


def _install() -> None:
  import estimator_compat  # pylint: disable=g-import-not-at-top
  estimator_compat.install()


class _InstallAfterLoad:
  """Runs TensorFlow's own loader, then install(), then steps aside."""

  def __init__(self, loader: Any):
    self._loader = loader

  def create_module(self, spec: Any):
    return self._loader.create_module(spec)

  def exec_module(self, module: types.ModuleType) -> None:
    self._loader.exec_module(module)
    # The module keeps TensorFlow's loader, as without the hook.
    module.__loader__ = self._loader
    if getattr(module, "__spec__", None) is not None:
      module.__spec__.loader = self._loader
    _install()


class _AlreadyLoaded:
  """Hands over the module install() already put into sys.modules.

  The import machinery, finding the name in sys.modules by then, loads from
  that module's own `__spec__`: this loader stands in for the spec's loader
  during that load and puts the original back.
  """

  def __init__(self, previous: Optional[Any]):
    self._previous = previous

  def create_module(self, spec: Any):
    return sys.modules[spec.name]

  def exec_module(self, module: types.ModuleType) -> None:
    module.__spec__.loader = self._previous
    module.__loader__ = self._previous


class Finder:
  """Calls install() right after the process first imports TensorFlow."""

  def find_spec(self, fullname: str,
                path: Optional[Sequence[str]] = None,
                target: Optional[types.ModuleType] = None):
    """Wraps TensorFlow's loader; for tensorflow_estimator, installs first."""
    del path, target
    if fullname not in (_TENSORFLOW, _ESTIMATOR):
      return None
    self.remove()  # Before anything imports: find_spec below, install().
    if fullname == _ESTIMATOR:
      # `import tensorflow_estimator` before TensorFlow: install() (which
      # imports TensorFlow) registers the module paths; hand ours over.
      _install()
      module = sys.modules.get(_ESTIMATOR)
      if module is None or getattr(module, "__spec__", None) is None:
        return None
      module.__spec__.loader = _AlreadyLoaded(module.__spec__.loader)
      return module.__spec__
    spec = importlib.util.find_spec(_TENSORFLOW)
    if spec is None or not hasattr(spec.loader, "exec_module"):
      return spec
    spec.loader = _InstallAfterLoad(spec.loader)
    return spec

  def remove(self) -> None:
    """Takes this finder off sys.meta_path (it acts once per process)."""
    if self in sys.meta_path:
      sys.meta_path.remove(self)


def activate() -> None:
  """Arranges install() at the process's first TensorFlow import.

  Called by the `.pth` line when ESTIMATOR_COMPAT_AUTO is set; a value
  of 0/false/no/off does nothing. If TensorFlow is already imported, installs
  at once.
  """
  if not enabled():
    return
  if _TENSORFLOW in sys.modules:
    _install()
    return
  if not any(isinstance(f, Finder) for f in sys.meta_path):
    sys.meta_path.insert(0, Finder())
