"""The package's layers keep their seams (issue 25's import contract).

Read statically (no import): every module of estimator_compat/, its imports
of the package's own modules. Two rules:
- no import cycle among module-level imports (an import inside a function
  is how a layer calls back up, on purpose, and does not count);
- FORBIDDEN: what each folder (layer) must never import, at any depth.
A test plants a fault in a tiny package and checks each rule catches it.
"""

import ast
import os
import pathlib
from typing import Dict, List, Set, Tuple

ROOT = pathlib.Path(__file__).resolve().parent.parent
PKG = "estimator_compat"

_ROOT_VALUES = ("estimator", "training")
# layer -> module prefixes (below the package) it must never import.
FORBIDDEN: Dict[str, Tuple[str, ...]] = {
    "errors": ("",),  # the shared errors import nothing from the package
    "checkpoints": ("engines", "canned", "head", "keras", "export", "api",
                    "in_training", "adapters", "tpu", "distribute", "inputs")
                   + _ROOT_VALUES,
    "front": ("engines", "canned", "head", "keras", "export", "api",
              "in_training", "adapters", "tpu", "inputs") + _ROOT_VALUES,
    "distribute": ("engines", "canned", "head", "keras", "export", "api",
                   "in_training", "adapters", "tpu", "inputs") + _ROOT_VALUES,
    "export": ("engines", "canned", "keras", "api", "in_training",
               "adapters", "tpu") + _ROOT_VALUES,
    "head": ("engines", "canned", "keras", "api", "in_training", "adapters",
             "tpu") + _ROOT_VALUES,
    "engines": ("canned", "head", "keras", "api", "in_training", "adapters",
                "tpu", "inputs") + _ROOT_VALUES,
    "canned": ("api", "keras", "in_training", "adapters", "training"),
    "keras": ("api", "canned", "in_training", "adapters", "training"),
    "in_training": ("api", "canned", "keras", "adapters", "training"),
    "tpu": ("api", "keras", "in_training", "adapters", "training"),
    "inputs": ("api", "canned", "head", "keras", "in_training", "adapters",
               "export", "tpu") + _ROOT_VALUES,
}
# Below the root, only these may import api/ (what differs between
# TensorFlow releases is read everywhere).
API_FOR_ALL = ("api.tf_versions",)


def _module_name(package_dir: pathlib.Path, path: pathlib.Path) -> str:
  rel = path.relative_to(package_dir.parent).with_suffix("")
  parts = list(rel.parts)
  if parts[-1] == "__init__":
    parts.pop()
  return ".".join(parts)


def read_imports(package_dir: pathlib.Path
                 ) -> Dict[str, Tuple[Set[str], Set[str]]]:
  """module -> (module-level imports, all imports) of the package's modules."""
  package = package_dir.name
  paths = {_module_name(package_dir, p): p
           for p in package_dir.rglob("*.py")}
  out = {}
  for name, path in paths.items():
    tree = ast.parse(path.read_text(), str(path))
    top: Set[str] = set()
    every: Set[str] = set()
    top_nodes = set()
    for node in tree.body:
      if isinstance(node, (ast.If, ast.Try)):
        top_nodes.update(id(n) for n in ast.walk(node))
      top_nodes.add(id(node))
    for node in ast.walk(tree):
      targets = []
      if isinstance(node, ast.ImportFrom) and node.module and (
          node.module == package or node.module.startswith(package + ".")):
        for alias in node.names:
          candidate = f"{node.module}.{alias.name}"
          targets.append(candidate if candidate in paths else node.module)
      elif isinstance(node, ast.Import):
        targets = [a.name for a in node.names
                   if a.name == package or a.name.startswith(package + ".")]
      for target in targets:
        every.add(target)
        if id(node) in top_nodes:
          top.add(target)
    out[name] = (top, every)
  return out


def import_cycles(imports: Dict[str, Tuple[Set[str], Set[str]]]
                  ) -> List[List[str]]:
  """Cycles (strongly connected sets > 1) of module-level imports."""
  graph = {m: {t for t in top if t in imports and t != m}
           for m, (top, _) in imports.items()}
  index: Dict[str, int] = {}
  low: Dict[str, int] = {}
  stack: List[str] = []
  on_stack: Set[str] = set()
  cycles: List[List[str]] = []

  def visit(v: str) -> None:
    index[v] = low[v] = len(index)
    stack.append(v)
    on_stack.add(v)
    for w in graph[v]:
      if w not in index:
        visit(w)
        low[v] = min(low[v], low[w])
      elif w in on_stack:
        low[v] = min(low[v], index[w])
    if low[v] == index[v]:
      component = []
      while True:
        w = stack.pop()
        on_stack.discard(w)
        component.append(w)
        if w == v:
          break
      if len(component) > 1:
        cycles.append(sorted(component))

  for module in sorted(graph):
    if module not in index:
      visit(module)
  return cycles


def layer_violations(imports: Dict[str, Tuple[Set[str], Set[str]]],
                     package: str,
                     forbidden: Dict[str, Tuple[str, ...]],
                     api_for_all: Tuple[str, ...]) -> List[str]:
  """'module imports target (rule)' for every import a layer must not make."""
  found = []
  for module, (_, every) in sorted(imports.items()):
    below = module[len(package) + 1:]
    layer = below.split(".")[0] if below else ""
    for target in sorted(every):
      rel = target[len(package) + 1:]
      if not rel or rel.split(".")[0] == layer:
        continue
      for prefix in forbidden.get(layer, ()):
        if rel == prefix or rel.startswith(prefix + ".") or not prefix:
          found.append(f"{module} imports {target} ({layer}/ never "
                       f"imports {prefix or 'the package'})")
      if (rel.split(".")[0] == "api" and layer not in ("api", "")
          and "." in below and rel not in api_for_all):
        found.append(f"{module} imports {target} (only the root imports "
                     "api/)")
      if (rel.split(".")[0] == "api" and "." not in below
          and below not in ("", "__main__", "_keras", "experimental", "v1")
          and rel not in api_for_all):
        found.append(f"{module} imports {target} (only the namespaces "
                     "import api/)")
  return found


def test_no_import_cycle_among_module_level_imports():
  cycles = import_cycles(read_imports(ROOT / PKG))
  assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_each_layer_imports_only_what_its_folder_allows():
  violations = layer_violations(read_imports(ROOT / PKG), PKG, FORBIDDEN,
                                API_FOR_ALL)
  assert not violations, "\n".join(violations)


def test_every_folder_has_a_rule_or_is_free():
  folders = {p.name for p in (ROOT / PKG).iterdir()
             if p.is_dir() and (p / "__init__.py").exists()}
  # Free: the top of the stack (api), and the layers that adapt everything.
  free = {"api", "adapters"}
  assert folders - free <= set(FORBIDDEN), sorted(folders - free
                                                  - set(FORBIDDEN))


def _write(base: pathlib.Path, files: Dict[str, str]) -> pathlib.Path:
  for rel, text in files.items():
    path = base / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
  return base / "pkg"


def test_the_checks_catch_a_planted_cycle_and_a_forbidden_import(tmp_path):
  package = _write(tmp_path, {
      "pkg/__init__.py": "",
      "pkg/front/__init__.py": "",
      "pkg/front/a.py": "from pkg.front import b\n",
      "pkg/front/b.py": "import pkg.front.a\n",
      "pkg/front/c.py": "def f():\n  from pkg.engines import e\n",
      "pkg/engines/__init__.py": "",
      "pkg/engines/e.py": "def g():\n  from pkg.front import c\n",
  })
  imports = read_imports(package)
  assert import_cycles(imports) == [["pkg.front.a", "pkg.front.b"]]
  # The imports inside functions make no cycle but still break a layer rule.
  assert layer_violations(imports, "pkg", {"front": ("engines",)}, ()) == [
      "pkg.front.c imports pkg.engines.e (front/ never imports engines)"]
  assert not layer_violations(imports, "pkg", {"engines": ("canned",)}, ())


def test_the_package_is_read_whole():
  imports = read_imports(ROOT / PKG)
  # The front and its engines are where the layers meet: if the reader lost
  # them the rules above would pass on nothing.
  assert "estimator_compat.engines.dispatch" in imports[
      "estimator_compat.estimator"][1]
  assert len(imports) == sum(1 for _ in (ROOT / PKG).rglob("*.py"))
  assert os.path.basename(str(ROOT / PKG)) == PKG
