"""The scan's report: text grouped by file, JSON, and the exit code."""

import collections
import json
from typing import Dict, List

from estimator_compat.api import api_status
from migration.scan import scanner

# Statuses that stop a file from running unchanged after install().
BLOCKING = (api_status.UNSUPPORTED, api_status.TF_REMOVED)
TOP = 10


def _runs_unchanged(file: scanner.FileScan) -> bool:
  return not file.source.error and not any(
      f.status in BLOCKING for f in file.findings)


def summary(result: scanner.ScanResult) -> Dict[str, object]:
  """Counts: uses by status, files, files that run, top blocking symbols."""
  by_status = {status: 0 for status in api_status.STATUSES}
  blocking = collections.Counter()
  status_of = {}
  for finding in result.findings:
    by_status[finding.status] += 1
    if finding.status in BLOCKING:
      blocking[finding.symbol] += 1
      status_of[finding.symbol] = finding.status
  top = sorted(blocking.items(), key=lambda item: (-item[1], item[0]))[:TOP]
  return {
      "files": len(result.files),
      "files_unchanged": sum(_runs_unchanged(f) for f in result.files),
      "unparsable": [{"path": f.source.path, "error": f.source.error}
                     for f in result.files if f.source.error],
      "by_status": by_status,
      "top_unsupported": [{"symbol": symbol, "status": status_of[symbol],
                           "count": count} for symbol, count in top],
  }


def exit_code(result: scanner.ScanResult) -> int:
  """0 when every file parses and nothing is unsupported or tf-removed."""
  return 0 if all(_runs_unchanged(f) for f in result.files) else 1


def to_json(result: scanner.ScanResult) -> str:
  """The `--json` document: {"findings": [...], "summary": {...}}."""
  findings = []
  for f in result.findings:
    entry = {"path": f.path, "line": f.line, "col": f.col,
             "symbol": f.symbol, "status": f.status, "note": f.note}
    if f.cell is not None:
      entry["cell"] = f.cell
    findings.append(entry)
  return json.dumps({"findings": findings, "summary": summary(result)},
                    indent=2) + "\n"


def _position(finding) -> str:
  where = f"{finding.line}:{finding.col}"
  return f"cell {finding.cell} {where}" if finding.cell is not None else where


def text(result: scanner.ScanResult) -> str:
  """The text report: findings grouped by file, then the summary table."""
  lines: List[str] = []
  for file in result.files:
    if file.source.error:
      lines += [file.source.path,
                f"  not scanned: cannot parse ({file.source.error})", ""]
      continue
    if not file.findings:
      continue
    lines.append(file.source.path)
    width = max(len(_position(f)) for f in file.findings)
    for f in file.findings:
      row = f"  {_position(f):<{width}}  {f.status:<11}  {f.symbol}"
      lines.append(row + (f"\n  {'':<{width}}  {'':<11}  {f.note}"
                          if f.note else ""))
    lines.append("")
  counts = summary(result)
  lines.append("Summary")
  lines.append(f"  {'status':<12} {'uses':>5}")
  for status, count in counts["by_status"].items():
    lines.append(f"  {status:<12} {count:>5}")
  lines.append(f"  files: {counts['files']} scanned, "
               f"{counts['files_unchanged']} run unchanged after "
               "estimator_compat.install()"
               + (f", {len(counts['unparsable'])} could not be parsed"
                  if counts["unparsable"] else ""))
  if counts["top_unsupported"]:
    lines.append("  top unsupported / tf-removed symbols:")
    for entry in counts["top_unsupported"]:
      lines.append(f"  {entry['count']:>5}  {entry['status']:<11}  "
                   f"{entry['symbol']}")
  return "\n".join(lines) + "\n"
