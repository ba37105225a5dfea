"""A scan over files: each file's findings, with the codebase's modules."""

from typing import List, NamedTuple, Sequence, Tuple

from migration.scan import findings as findings_lib
from migration.scan import imports
from migration.scan import sources as sources_lib
from migration.scan import statuses as statuses_lib


class FileScan(NamedTuple):
  """One file's scan.

  Attributes:
    source: the file as read.
    findings: its findings, by position (empty when it did not parse).
    uses: (use, finding) pairs, for the fixer.
    tf1_code: whether it uses TF1-only names through `import tensorflow`.
  """
  source: sources_lib.Source
  findings: List[findings_lib.Finding]
  uses: List[Tuple[findings_lib.Use, findings_lib.Finding]]
  tf1_code: bool


class ScanResult(NamedTuple):
  """A whole scan: every file, and the module index they make up."""
  files: List[FileScan]
  index: imports.ModuleIndex
  lookup: statuses_lib.StatusLookup

  @property
  def findings(self) -> List[findings_lib.Finding]:
    return [f for file in self.files for f in file.findings]


def scan(paths: Sequence[str]) -> ScanResult:
  """Scans the `.py` files and notebooks under `paths`.

  Args:
    paths: files and directories.

  Returns:
    The ScanResult, files in the order found.

  Raises:
    FileNotFoundError: a path does not exist.
  """
  read = [sources_lib.read(path, root)
          for path, root in sources_lib.find_files(paths)]
  index = imports.ModuleIndex(read)
  lookup = statuses_lib.StatusLookup()
  files = []
  for source in read:
    if source.error:
      files.append(FileScan(source, [], [], False))
      continue
    found, pairs, tf1_code = findings_lib.collect(source, index, lookup)
    files.append(FileScan(source, found, pairs, tf1_code))
  return ScanResult(files, index, lookup)
