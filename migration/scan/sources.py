"""The files a scan reads: `.py` files and the code cells of notebooks."""

import ast
import io
import json
import os
import re
import tokenize
from typing import Iterator, List, NamedTuple, Optional, Sequence, Tuple

SKIPPED_DIRS = frozenset((
    ".git", ".hg", ".svn", "__pycache__", ".ipynb_checkpoints", ".venv",
    "venv", "site-packages", "node_modules", ".tox", ".mypy_cache",
    ".pytest_cache"))

# IPython lines that are not Python: magics, shell escapes (also as
# `x = !ls`), help.
_IPYTHON_LINE = re.compile(
    r"^\s*(%|!|\?)|^\s*\w[\w.]*\?\??\s*$|^\s*[\w, ]+=\s*[!%]")


class Cell(NamedTuple):
  """A piece of Python source: a whole `.py` file or one notebook cell.

  Attributes:
    index: the notebook cell's 1-based position among all cells, or None.
    text: the source (for a cell, with IPython lines blanked).
    tree: its `ast` module.
  """
  index: Optional[int]
  text: str
  tree: ast.Module


class Source(NamedTuple):
  """One scanned file.

  Attributes:
    path: the path as the scan names it.
    root: the scanned directory it was found under (its own directory for a
      file named on the command line).
    cells: its Python, one Cell for a `.py` file; empty if unparsable.
    error: why it could not be parsed, else "".
    encoding: the `.py` file's encoding (`tokenize.detect_encoding`).
  """
  path: str
  root: str
  cells: Tuple[Cell, ...]
  error: str = ""
  encoding: str = "utf-8"

  @property
  def is_notebook(self) -> bool:
    return self.path.endswith(".ipynb")


def find_files(paths: Sequence[str]) -> Iterator[Tuple[str, str]]:
  """Yields (file, root) for each `.py` / `.ipynb` file under `paths`.

  Args:
    paths: files and directories; directories are walked (sorted, skipping
      hidden and environment directories).

  Raises:
    FileNotFoundError: a path does not exist.
  """
  for path in paths:
    if os.path.isfile(path):
      yield path, os.path.dirname(path) or "."
      continue
    if not os.path.isdir(path):
      raise FileNotFoundError(f"{path}: no such file or directory")
    for directory, subdirs, files in os.walk(path):
      subdirs[:] = sorted(d for d in subdirs
                          if d not in SKIPPED_DIRS and not d.startswith("."))
      for name in sorted(files):
        if name.endswith((".py", ".ipynb")):
          yield os.path.join(directory, name), path


def _syntax_error(e: SyntaxError, cell: Optional[int]) -> str:
  where = f"cell {cell}, " if cell is not None else ""
  return f"{where}line {e.lineno}: {type(e).__name__}: {e.msg}"


def _read_python(path: str, root: str) -> Source:
  with open(path, "rb") as f:
    data = f.read()
  try:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    tree = ast.parse(text, filename=path)
  except SyntaxError as e:
    return Source(path, root, (), _syntax_error(e, None))
  except (UnicodeDecodeError, LookupError, ValueError) as e:
    return Source(path, root, (), f"{type(e).__name__}: {e}")
  return Source(path, root, (Cell(None, text, tree),), encoding=encoding)


def _cell_text(source) -> str:
  """A code cell's Python: IPython lines become `pass` (same line count)."""
  text = "".join(source) if isinstance(source, list) else str(source)
  if text.lstrip().startswith("%%"):  # A cell magic: not Python at all.
    return ""
  lines = []
  for line in text.split("\n"):
    if _IPYTHON_LINE.match(line):
      line = line[:len(line) - len(line.lstrip())] + "pass"
    lines.append(line)
  return "\n".join(lines)


def _read_notebook(path: str, root: str) -> Source:
  try:
    with open(path, encoding="utf-8") as f:
      notebook = json.load(f)
    cells: List[Cell] = []
    for index, cell in enumerate(notebook.get("cells", []), start=1):
      if cell.get("cell_type") != "code":
        continue
      text = _cell_text(cell.get("source", ""))
      try:
        cells.append(Cell(index, text, ast.parse(text, filename=path)))
      except SyntaxError as e:
        return Source(path, root, (), _syntax_error(e, index))
  except (ValueError, AttributeError, OSError) as e:
    return Source(path, root, (), f"not a notebook: {e}")
  return Source(path, root, tuple(cells))


def read(path: str, root: str) -> Source:
  """Reads and parses one file; a file that does not parse gets `error`."""
  if path.endswith(".ipynb"):
    return _read_notebook(path, root)
  return _read_python(path, root)
