"""How each name of a file is bound to TensorFlow or the Estimator.

`import tensorflow as tf`, `import tensorflow.compat.v1 as tf`,
`from tensorflow import estimator as tfe`, `import tensorflow_estimator as
tfe`, `from tensorflow_estimator.python.estimator.canned import dnn`,
`from tensorflow.compat.v1 import estimator`, `fc = tf.feature_column`, and
names re-exported by the scanned files themselves (`from common import tf`,
`import mypkg.common as c` then `c.tf`) all bind a local name to a canonical
dotted name: `tf.` for TensorFlow, `tensorflow_estimator.` for the package.

Bindings are per file, not per scope: an import or alias anywhere in a file
(in a function too) binds the name in the whole file, and a name also
assigned something else is not an alias.
"""

import ast
import os
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from migration.scan import sources as sources_lib

# Import roots and the canonical root each one gets.
ROOTS = {"tensorflow": "tf", "tensorflow_estimator": "tensorflow_estimator"}
# TensorFlow's private module trees: not API, not scanned.
PRIVATE_TF = frozenset(("python", "core", "tools", "compiler", "tsl",
                        "include", "lite", "dtensor", "security"))


class Target(NamedTuple):
  """What a local name is bound to: a canonical name or a scanned module.

  Attributes:
    canonical: dotted canonical name (`tf.compat.v1`), or "".
    module: the key of a scanned module or package (see ModuleIndex), or "".
    reexported: bound by importing it from a scanned module (`from common
      import Estimator`), so that each use of the bare name is a finding
      (a name bound by an import of TF or by an assignment has its finding
      where it is bound).
  """
  canonical: str = ""
  module: str = ""
  reexported: bool = False


def canonical_module(dotted: str) -> Optional[str]:
  """`tensorflow.compat.v1` -> `tf.compat.v1`; None outside TF/the package."""
  parts = dotted.split(".")
  root = ROOTS.get(parts[0])
  if root is None or (root == "tf" and len(parts) > 1 and
                      parts[1] in PRIVATE_TF):
    return None
  return ".".join([root] + parts[1:])


def _module_key(path: str) -> str:
  return os.path.normpath(os.path.abspath(path))


def _dotted_names(path: str, root: str) -> List[str]:
  """Module names a file may be imported as: every dotted suffix."""
  relative = os.path.relpath(path, root)
  parts = os.path.splitext(relative)[0].split(os.sep)
  if parts[-1] == "__init__":
    parts = parts[:-1]
  parts = [p for p in parts if p not in ("", ".")]
  return [".".join(parts[i:]) for i in range(len(parts))]


class ModuleIndex:
  """The scanned files as importable modules, and what each one binds."""

  def __init__(self, scanned: Sequence[sources_lib.Source]):
    self._sources = {_module_key(s.path): s for s in scanned if s.cells}
    self._by_name: Dict[str, List[str]] = {}
    for source in scanned:
      if source.is_notebook or not source.cells:
        continue
      key = _module_key(source.path)
      if os.path.basename(source.path) == "__init__.py":
        key = os.path.dirname(key)
        self._sources[key] = source
      for name in _dotted_names(source.path, source.root):
        self._by_name.setdefault(name, []).append(key)
    self._packages = frozenset(os.path.dirname(k) for k in self._sources)
    self._bindings: Dict[str, Dict[str, Target]] = {}
    self._computing: set = set()

  def find(self, dotted: str, importer: str, level: int = 0
           ) -> Optional[str]:
    """The key of the scanned module `dotted`, imported from `importer`.

    Args:
      dotted: the module name of the import ("" for `from . import x`).
      importer: the importing file's path.
      level: the relative import's number of dots.

    Returns:
      The module's key, or None when it is not a scanned file.
    """
    if level:
      base = os.path.dirname(_module_key(importer))
      for _ in range(level - 1):
        base = os.path.dirname(base)
      path = os.path.join(base, *dotted.split(".")) if dotted else base
      for candidate in (path + ".py", path):
        if candidate in self._sources or candidate in self._packages:
          return candidate
      return None
    keys = self._by_name.get(dotted, [])
    if len(keys) > 1:
      here = os.path.dirname(_module_key(importer))
      nearby = [k for k in keys if os.path.dirname(k) == here]
      keys = nearby if len(nearby) == 1 else keys
    if len(keys) == 1:
      return keys[0]
    return None

  def source(self, key: str) -> Optional[sources_lib.Source]:
    return self._sources.get(key)

  def attribute(self, module: str, name: str) -> Optional[Target]:
    """What `module.name` is: a name the module binds, or a submodule."""
    found = self.bindings_of(module).get(name)
    if found is not None:
      return found
    for candidate in (os.path.join(module, name + ".py"),
                      os.path.join(module, name)):
      if candidate in self._sources or candidate in self._packages:
        return Target(module=candidate)
    return None

  def bindings_of(self, module: str) -> Dict[str, Target]:
    """The names a scanned module binds (empty while it is being read)."""
    if module in self._bindings:
      return self._bindings[module]
    source = self._sources.get(module)
    if source is None or module in self._computing:
      return {}
    self._computing.add(module)
    try:
      found = bindings([c.tree for c in source.cells], source.path, self)
    finally:
      self._computing.discard(module)
    self._bindings[module] = found
    return found


def chain_of(node: ast.AST) -> Optional[Tuple[str, List[str]]]:
  """`a.b.c` -> ("a", ["b", "c"]); None unless rooted at a plain name."""
  attributes = []
  while isinstance(node, ast.Attribute):
    attributes.append(node.attr)
    node = node.value
  if not isinstance(node, ast.Name):
    return None
  return node.id, attributes[::-1]


def resolve(target: Target, attributes: Sequence[str],
            index: ModuleIndex) -> Tuple[Optional[str], int]:
  """Follows `attributes` from `target` to a canonical name.

  Returns:
    (the canonical dotted name, how many attributes were followed through
    scanned modules before reaching it), or (None, 0).
  """
  steps = 0
  while not target.canonical:
    if not target.module or steps == len(attributes):
      return None, 0
    found = index.attribute(target.module, attributes[steps])
    if found is None:
      return None, 0
    target = found
    steps += 1
  rest = list(attributes[steps:])
  return ".".join([target.canonical] + rest), steps


def _import_targets(node: ast.AST, path: str, index: ModuleIndex
                    ) -> List[Tuple[str, Target]]:
  """(local name, Target) for each name an import statement binds."""
  bound = []
  if isinstance(node, ast.Import):
    for alias in node.names:
      if alias.asname:
        dotted, local = alias.name, alias.asname
      else:
        dotted = local = alias.name.split(".")[0]
      canonical = canonical_module(dotted)
      if canonical:
        bound.append((local, Target(canonical=canonical)))
      else:
        key = index.find(dotted, path)
        if key:
          bound.append((local, Target(module=key)))
  elif isinstance(node, ast.ImportFrom):
    module = node.module or ""
    canonical = None if node.level else canonical_module(module)
    key = None if canonical else index.find(module, path, node.level)
    for alias in node.names:
      local = alias.asname or alias.name
      if alias.name == "*":
        if key:
          bound.extend((name, target._replace(reexported=True))
                       for name, target in index.bindings_of(key).items())
        continue
      if canonical:
        bound.append((local, Target(canonical=f"{canonical}.{alias.name}")))
      elif key:
        found = index.attribute(key, alias.name)
        if found is not None:
          bound.append((local, found._replace(reexported=True)))
  return bound


def bindings(trees: Sequence[ast.Module], path: str,
             index: ModuleIndex) -> Dict[str, Target]:
  """The local names a file binds to TensorFlow, the package, or modules.

  Args:
    trees: the file's modules (one per notebook cell), in order.
    path: the file's path (for relative imports).
    index: the scanned modules.

  Returns:
    {local name: Target}.
  """
  nodes = [n for tree in trees for n in ast.walk(tree)]
  found: Dict[str, Target] = {}
  for node in nodes:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
      for local, target in _import_targets(node, path, index):
        found.setdefault(local, target)
  stores: Dict[str, int] = {}
  simple: Dict[str, ast.AST] = {}
  for node in nodes:
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
      stores[node.id] = stores.get(node.id, 0) + 1
    if (isinstance(node, ast.Assign) and len(node.targets) == 1 and
        isinstance(node.targets[0], ast.Name)):
      simple[node.targets[0].id] = node.value
  imported = dict(found)
  for name in stores:
    found.pop(name, None)
  aliases = {name: chain_of(value) for name, value in simple.items()
             if stores[name] == 1 and chain_of(value)}
  for _ in range(len(aliases)):
    changed = False
    for name, (root, attributes) in sorted(aliases.items()):
      # `tf = tf.compat.v1` rebinds an import through itself.
      base = found.get(root) or (imported.get(root) if root == name
                                 else None)
      if name in found or base is None:
        continue
      canonical, _ = resolve(base, attributes, index)
      if canonical:
        found[name] = Target(canonical=canonical)
        changed = True
    if not changed:
      break
  return found
