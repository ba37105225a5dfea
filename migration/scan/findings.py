"""Every use of an Estimator or TF1 API in a file, with its status.

A use is an import (`from tensorflow_estimator.python.estimator import gc`;
imports of namespaces estimator_compat provides are not findings) or
an attribute chain in an expression (`tf.estimator.RunConfig`, `tfe.Estimator`,
`dnn.DNNClassifier`), resolved through the file's bindings (see `imports`);
a bare name is a use only where a scanned module re-exports it (elsewhere
its import or assignment is the finding).
Chains that name a namespace, or a TensorFlow name that exists and is none
of the Estimator-related APIs, are not findings.
"""

import ast
from typing import List, NamedTuple, Optional, Sequence, Tuple

from migration.scan import imports
from migration.scan import sources as sources_lib
from migration.scan import statuses as statuses_lib


class Finding(NamedTuple):
  """One use of an API.

  Attributes:
    path: the file.
    line: 1-based line (in the notebook cell, for a notebook).
    col: 1-based column, in characters.
    symbol: the canonical dotted name (`tf.` / `tensorflow_estimator.`).
    status: supported, differs, unsupported or tf-removed.
    note: the difference, or what to do instead.
    cell: the notebook cell (1-based among all cells), else None.
    replacement: for tf-removed names, the canonical name replacing it.
  """
  path: str
  line: int
  col: int
  symbol: str
  status: str
  note: str
  cell: Optional[int] = None
  replacement: str = ""


class Use(NamedTuple):
  """A chain found in a file, before its status is known.

  Attributes:
    cell: index into the Source's cells.
    node: the import alias or expression node.
    canonical: its canonical dotted name.
    root_binding: the canonical name its first name is bound to, for an
      expression whose first name is bound directly (None for imports and
      chains through scanned modules).
    first_attribute: for such an expression, the innermost ast.Attribute
      (the one right after the bound name), else None.
  """
  cell: int
  node: ast.AST
  canonical: str
  root_binding: Optional[str]
  first_attribute: Optional[ast.Attribute]


def _expression_uses(cell: int, tree: ast.Module,
                     bound: dict, index: imports.ModuleIndex) -> List[Use]:
  """The maximal attribute chains rooted at a bound name."""
  found = []

  def visit(node: ast.AST) -> None:
    if isinstance(node, (ast.Attribute, ast.Name)) and isinstance(
        getattr(node, "ctx", None), ast.Load):
      chain = imports.chain_of(node)
      if chain is not None:
        target = bound.get(chain[0])
        if target is not None and (chain[1] or target.reexported):
          canonical, steps = imports.resolve(target, chain[1], index)
          if canonical:
            first = node
            while (isinstance(first, ast.Attribute) and
                   isinstance(first.value, ast.Attribute)):
              first = first.value
            direct = steps == 0 and target.canonical
            found.append(Use(
                cell, node, canonical, target.canonical if direct else None,
                first if direct and isinstance(first, ast.Attribute)
                else None))
        return
    for child in ast.iter_child_nodes(node):
      visit(child)

  visit(tree)
  return found


def _import_uses(cell: int, tree: ast.Module) -> List[Use]:
  found = []
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      for alias in node.names:
        canonical = imports.canonical_module(alias.name)
        if canonical:
          found.append(Use(cell, alias, canonical, None, None))
    elif isinstance(node, ast.ImportFrom) and not node.level:
      canonical = imports.canonical_module(node.module or "")
      if canonical:
        for alias in node.names:
          if alias.name != "*":
            found.append(Use(cell, alias, f"{canonical}.{alias.name}", None,
                             None))
  return found


def uses(source: sources_lib.Source,
         index: imports.ModuleIndex) -> List[Use]:
  """Every import and chain of `source` that reaches TF or the package."""
  bound = imports.bindings([c.tree for c in source.cells], source.path,
                           index)
  found = []
  for i, cell in enumerate(source.cells):
    found.extend(_import_uses(i, cell.tree))
    found.extend(_expression_uses(i, cell.tree, bound, index))
  return found


def is_tf1_code(file_uses: Sequence[Use],
                lookup: statuses_lib.StatusLookup) -> bool:
  """Whether the file uses TF1-only names through `import tensorflow`."""
  return any(use.root_binding == "tf" and lookup.is_tf1_only(use.canonical)
             for use in file_uses)


def _column(text: str, line: int, byte_col: int) -> int:
  """ast's UTF-8 byte column -> 1-based character column."""
  lines = text.split("\n")
  if line - 1 >= len(lines):
    return byte_col + 1
  return len(lines[line - 1].encode("utf-8")[:byte_col].decode(
      "utf-8", "replace")) + 1


def collect(source: sources_lib.Source, index: imports.ModuleIndex,
            lookup: statuses_lib.StatusLookup
            ) -> Tuple[List[Finding], List[Tuple[Use, Finding]], bool]:
  """The findings of one parsed file.

  Args:
    source: a parsed Source.
    index: the scanned modules.
    lookup: the status lookup.

  Returns:
    (findings sorted by position, (use, finding) pairs for the fixer,
    whether the file is TF1 code).
  """
  file_uses = uses(source, index)
  tf1_code = is_tf1_code(file_uses, lookup)
  pairs = []
  seen = set()
  for use in file_uses:
    found = lookup.find(use.canonical, tf1_code)
    if found is None:
      continue
    symbol, status = found
    cell = source.cells[use.cell]
    line = use.node.lineno
    col = _column(cell.text, line, use.node.col_offset)
    key = (use.cell, line, col, symbol)
    if key in seen:
      continue
    seen.add(key)
    pairs.append((use, Finding(source.path, line, col, symbol, status.status,
                               status.note, cell.index, status.replacement)))
  pairs.sort(key=lambda p: (p[1].cell or 0, p[1].line, p[1].col))
  return [f for _, f in pairs], pairs, tf1_code
