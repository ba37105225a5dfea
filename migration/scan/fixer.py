"""`--fix` / `--write`: the few edits that make a file run here.

Three edits, nothing else:
  - `tensorflow_estimator` imports of an API namespace become
    `estimator_compat` ones (`from tensorflow_estimator import estimator as
    tfe` -> `import estimator_compat.v1 as tfe`: in TF 2.15 that module was
    `tf.compat.v1.estimator`); module-path imports
    (`tensorflow_estimator.python.estimator.model_fn`) and the bare package
    are left as they are: `install()` makes them importable;
  - `import estimator_compat; estimator_compat.install()` is added before the
    first TensorFlow import of each entry-point file (`if __name__ ==
    "__main__"` or `app.run`);
  - `tf.layers.*`, TF1 `tf.summary.*` and `tf.train.*Optimizer` become their
    `tf.compat.v1` names where the file reaches them through
    `import tensorflow as tf`.
Edits are made on tokens (Python's `tokenize`): every byte outside the
changed tokens stays as it was. A file that does not parse, or would not
parse after the edits, is left alone and said so. Notebooks are scanned, not
rewritten.
"""

import ast
import difflib
import io
import os
import tokenize
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from estimator_compat.api import api_status
from estimator_compat.api import module_paths
from migration.scan import imports
from migration.scan import scanner

INSTALL = "import estimator_compat; estimator_compat.install()"

# tensorflow_estimator modules that are an estimator_compat module.
_V2_ALIAS = module_paths.BASE + ".api._v2.estimator"
MODULE_MAP: Dict[str, str] = {
    module_paths.ROOT + ".estimator": "estimator_compat.v1",
    module_paths.BASE + ".api._v1.estimator": "estimator_compat.v1",
    _V2_ALIAS: "estimator_compat",
}
MODULE_MAP.update({f"{_V2_ALIAS}.{sub}": f"estimator_compat.{sub}"
                   for sub in module_paths.API_SUBPACKAGES})


class FileFix(NamedTuple):
  """The edits of one file.

  Attributes:
    path: the file.
    old: its text.
    new: its text after the edits (== old when nothing changes).
    encoding: the file's encoding, to write it back.
    messages: what was left alone, and why.
  """
  path: str
  old: str
  new: str
  encoding: str
  messages: List[str]


class _Edit(NamedTuple):
  start: int
  end: int
  text: str


class _Text:
  """Offsets of (line, column) positions in a file's text."""

  def __init__(self, text: str):
    self.text = text
    self.lines = text.split("\n")
    self.starts = [0]
    for line in self.lines:
      self.starts.append(self.starts[-1] + len(line) + 1)
    self.tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))

  def offset(self, line: int, col: int) -> int:
    return self.starts[line - 1] + col

  def char_col(self, line: int, byte_col: int) -> int:
    return len(self.lines[line - 1].encode("utf-8")[:byte_col].decode(
        "utf-8", "replace"))

  def node_span(self, node: ast.AST) -> Tuple[int, int]:
    start = self.offset(node.lineno,
                        self.char_col(node.lineno, node.col_offset))
    end = self.offset(node.end_lineno,
                      self.char_col(node.end_lineno, node.end_col_offset))
    return start, end

  def tokens_between(self, start: int, end: int) -> List[tokenize.TokenInfo]:
    return [t for t in self.tokens
            if self.offset(*t.start) >= start and self.offset(*t.end) <= end]

  def newline(self) -> str:
    return "\r\n" if "\r\n" in self.text else "\n"


def _v1_rewrite(symbol: str) -> bool:
  """Whether --fix moves this tf-removed name to tf.compat.v1."""
  parts = symbol.split(".") + [""]
  return parts[1] == "layers" or (len(parts) > 3 and (
      parts[1] == "summary" or
      (parts[1] == "train" and parts[2].endswith("Optimizer"))))


def _compat_edits(file: scanner.FileScan, text: _Text) -> List[_Edit]:
  """tf.layers / tf.summary / tf.train.*Optimizer -> tf.compat.v1."""
  edits = []
  for use, finding in file.uses:
    if (use.root_binding != "tf" or use.first_attribute is None or
        finding.status != api_status.TF_REMOVED or
        finding.replacement != "tf.compat.v1." + finding.symbol[3:] or
        not _v1_rewrite(finding.symbol)):
      continue
    _, end = text.node_span(use.first_attribute)
    name = use.first_attribute.attr
    for token in text.tokens:
      if (token.type == tokenize.NAME and token.string == name and
          text.offset(*token.end) == end):
        edits.append(_Edit(end - len(name), end, "compat.v1." + name))
        break
  return edits


def _module_tokens(node: ast.ImportFrom, text: _Text
                   ) -> Optional[Tuple[int, int]]:
  """The span of the dotted module name of `from X.Y import ...`."""
  start, end = text.node_span(node)
  tokens = text.tokens_between(start, end)
  names = []
  for token in tokens[1:]:
    if token.type == tokenize.NAME and token.string == "import":
      break
    if token.type == tokenize.COMMENT:
      return None
    if token.type in (tokenize.NAME, tokenize.OP):
      names.append(token)
  if not names:
    return None
  return text.offset(*names[0].start), text.offset(*names[-1].end)


def _has_comment(text: _Text, start: int, end: int) -> bool:
  return any(t.type == tokenize.COMMENT
             for t in text.tokens_between(start, end))


def _package_edits(tree: ast.Module, text: _Text, path: str,
                   messages: List[str]) -> List[_Edit]:
  """tensorflow_estimator imports -> estimator_compat, where one matches."""
  edits = []
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      for alias in node.names:
        if not alias.name.startswith(module_paths.ROOT):
          continue
        target = MODULE_MAP.get(alias.name)
        if target and alias.asname:
          start, end = text.node_span(alias)
          edits.append(_Edit(start, end, f"{target} as {alias.asname}"))
        else:
          messages.append(f"{path}:{node.lineno}: left as is: import "
                          f"{alias.name} (importable after "
                          "estimator_compat.install())")
    elif (isinstance(node, ast.ImportFrom) and not node.level and
          (node.module or "").startswith(module_paths.ROOT)):
      start, end = text.node_span(node)
      whole = (f"{node.module}.{node.names[0].name}"
               if len(node.names) == 1 else None)
      if MODULE_MAP.get(node.module):
        span = _module_tokens(node, text)
        if span:
          edits.append(_Edit(span[0], span[1], MODULE_MAP[node.module]))
          continue
      elif whole in MODULE_MAP and not _has_comment(text, start, end):
        local = node.names[0].asname or node.names[0].name
        edits.append(_Edit(start, end,
                           f"import {MODULE_MAP[whole]} as {local}"))
        continue
      messages.append(f"{path}:{node.lineno}: left as is: from "
                      f"{node.module} import ... (importable after "
                      "estimator_compat.install())")
  return edits


def _is_main_test(test: ast.AST) -> bool:
  if not isinstance(test, ast.Compare) or len(test.comparators) != 1:
    return False
  sides = [test.left, test.comparators[0]]
  return (any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)
          and any(isinstance(s, ast.Constant) and s.value == "__main__"
                  for s in sides))


def is_entry_point(tree: ast.Module) -> bool:
  """`if __name__ == "__main__":` at module level, or an `app.run(...)`."""
  if any(isinstance(n, ast.If) and _is_main_test(n.test) for n in tree.body):
    return True
  for node in ast.walk(tree):
    if isinstance(node, ast.Call):
      chain = imports.chain_of(node.func)
      if chain and chain[1] and chain[1][-1] == "run" and (
          chain[0] == "app" or "app" in chain[1]):
        return True
  return False


def _installs(tree: ast.Module) -> bool:
  """Whether the file already calls estimator_compat.install()."""
  aliases = {"estimator_compat"}
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      aliases.update(a.asname or a.name for a in node.names
                     if a.name == "estimator_compat")
    elif (isinstance(node, ast.ImportFrom) and
          node.module == "estimator_compat" and
          any(a.name == "install" for a in node.names)):
      return True
  for node in ast.walk(tree):
    if isinstance(node, ast.Call):
      chain = imports.chain_of(node.func)
      if chain and chain[0] in aliases and chain[1] == ["install"]:
        return True
  return False


class _UsesTensorFlow:
  """Whether a scanned module imports TensorFlow, itself or through others."""

  def __init__(self, index: imports.ModuleIndex):
    self._index = index
    self._known: Dict[str, bool] = {}

  def module(self, key: str) -> bool:
    if key not in self._known:
      self._known[key] = False  # Cycles count as no.
      source = self._index.source(key)
      self._known[key] = bool(source and source.cells and any(
          self.statement(node, source.path)
          for cell in source.cells for node in ast.walk(cell.tree)))
    return self._known[key]

  def statement(self, node: ast.AST, path: str) -> bool:
    """Whether an import statement imports TensorFlow (maybe indirectly)."""
    if isinstance(node, ast.Import):
      names = [a.name for a in node.names]
      level = 0
    elif isinstance(node, ast.ImportFrom):
      names = [node.module or ""]
      level = node.level
    else:
      return False
    for name in names:
      if not level and name.split(".")[0] in imports.ROOTS:
        return True
      key = self._index.find(name, path, level)
      if key and self.module(key):
        return True
    return False


def _install_edit(tree: ast.Module, text: _Text, path: str,
                  uses_tf: _UsesTensorFlow) -> Optional[_Edit]:
  """The install() line before the first TensorFlow import."""
  statements = sorted(
      (n for n in ast.walk(tree) if isinstance(n, (ast.Import,
                                                   ast.ImportFrom))),
      key=lambda n: (n.lineno, n.col_offset))
  for node in statements:
    if uses_tf.statement(node, path):
      line = text.lines[node.lineno - 1]
      indent = line[:len(line) - len(line.lstrip(" \t"))]
      start = text.offset(node.lineno, 0)
      return _Edit(start, start, f"{indent}{INSTALL}{text.newline()}")
  return None


def _apply(old: str, edits: Sequence[_Edit]) -> str:
  new = old
  for edit in sorted(edits, key=lambda e: e.start, reverse=True):
    new = new[:edit.start] + edit.text + new[edit.end:]
  return new


def fix_file(file: scanner.FileScan, uses_tf: _UsesTensorFlow
             ) -> Optional[FileFix]:
  """The FileFix of one file; None for files with nothing to say."""
  source = file.source
  if source.error:
    return FileFix(source.path, "", "", source.encoding,
                   [f"{source.path}: not rewritten: cannot parse "
                    f"({source.error})"])
  if source.is_notebook:
    if not file.findings:
      return None
    return FileFix(source.path, "", "", source.encoding,
                   [f"{source.path}: not rewritten: notebooks are scanned "
                    "only (edit the cells by hand)"])
  cell = source.cells[0]
  if "\r" in cell.text.replace("\r\n", ""):
    return FileFix(source.path, cell.text, cell.text, source.encoding,
                   [f"{source.path}: not rewritten: it has lone \\r line "
                    "endings"])
  text = _Text(cell.text)
  messages: List[str] = []
  edits = _compat_edits(file, text)
  edits += _package_edits(cell.tree, text, source.path, messages)
  if is_entry_point(cell.tree) and not _installs(cell.tree):
    edit = _install_edit(cell.tree, text, source.path, uses_tf)
    if edit:
      edits.append(edit)
  edits.sort(key=lambda e: (e.start, e.end))
  for before, after in zip(edits, edits[1:]):
    if after.start < before.end:
      return FileFix(source.path, cell.text, cell.text, source.encoding,
                     messages + [f"{source.path}: not rewritten: "
                                 "overlapping edits"])
  new = _apply(cell.text, edits)
  try:
    ast.parse(new)
  except SyntaxError as e:
    return FileFix(source.path, cell.text, cell.text, source.encoding,
                   messages + [f"{source.path}: not rewritten: the edits "
                               f"would not parse ({e.msg})"])
  return FileFix(source.path, cell.text, new, source.encoding, messages)


def fixes(result: scanner.ScanResult) -> List[FileFix]:
  """The FileFix of every scanned file that has edits or messages."""
  uses_tf = _UsesTensorFlow(result.index)
  found = []
  for file in result.files:
    fixed = fix_file(file, uses_tf)
    if fixed and (fixed.new != fixed.old or fixed.messages):
      found.append(fixed)
  return found


def unified_diff(file_fixes: Sequence[FileFix]) -> str:
  """The edits as one unified diff (a/PATH, b/PATH for relative paths)."""
  chunks = []
  for fixed in file_fixes:
    if fixed.new == fixed.old:
      continue
    relative = not os.path.isabs(fixed.path)
    for line in difflib.unified_diff(
        fixed.old.splitlines(keepends=True),
        fixed.new.splitlines(keepends=True),
        fromfile=f"a/{fixed.path}" if relative else fixed.path,
        tofile=f"b/{fixed.path}" if relative else fixed.path):
      chunks.append(line if line.endswith("\n") else
                    line + "\n\\ No newline at end of file\n")
  return "".join(chunks)


def write(file_fixes: Sequence[FileFix]) -> List[str]:
  """Writes the changed files (same encoding); returns their paths."""
  written = []
  for fixed in file_fixes:
    if fixed.new == fixed.old:
      continue
    with open(fixed.path, "wb") as f:
      f.write(fixed.new.encode(fixed.encoding))
    written.append(fixed.path)
  return written
