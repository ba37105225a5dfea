"""PNG charts of the benchmark tables (matplotlib, the `bench` extra).

Each benchmark prints its Markdown table first and draws its chart only when
asked (`--png PATH`). Without matplotlib it says how to get it and goes on:

  pip install -e .[bench]      # or: pip install matplotlib

- `bars`: steps/s per path (benchmarks/default_config.py, engines.py);
- `stacked`: a call's fixed cost split by phase (benchmarks/call_costs.py);
- `scaling`: steps/s by number of workers (benchmarks/distribution.py).

The figures are small (about 6.4 x 3.6 inches at 100 dpi, under 100 KB), so
they can be committed under docs/images/.
"""

import sys
from typing import Dict, List, Optional, Sequence, Tuple

_INSTALL = ("matplotlib is not installed, so no PNG was written (the table "
            "above is the result). Fix: pip install -e .[bench] (or pip "
            "install matplotlib), then run again with --png.")
_SIZE = (6.4, 3.6)
_DPI = 100


def _pyplot():
  """matplotlib.pyplot on the file-only backend; None when not installed."""
  try:
    import matplotlib  # pylint: disable=g-import-not-at-top
  except ImportError:
    print(_INSTALL, file=sys.stderr)
    return None
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  return plt


def _save(plt, figure, path: str) -> None:
  figure.tight_layout()
  figure.savefig(path, dpi=_DPI)
  plt.close(figure)
  print(f"Wrote {path}", file=sys.stderr)


def bars(values: Dict[str, float], path: str, *, title: str,
         ylabel: str = "steps/s") -> bool:
  """A horizontal bar per path (label -> value). Returns whether written."""
  plt = _pyplot()
  if plt is None:
    return False
  figure, axes = plt.subplots(figsize=_SIZE)
  labels = list(values)
  bars_ = axes.barh(range(len(labels)), [values[k] for k in labels],
                    color="tab:blue")
  axes.bar_label(bars_, fmt="%.0f", padding=3, fontsize=8)
  axes.set_yticks(range(len(labels)), labels, fontsize=8)
  axes.invert_yaxis()
  axes.set_xlabel(ylabel)
  axes.set_title(title, fontsize=10)
  axes.margins(x=0.15)
  _save(plt, figure, path)
  return True


def stacked(calls: Dict[str, Dict[str, float]], path: str, *, title: str,
            unit: str = "s") -> bool:
  """One stacked bar per call (call -> {phase: time}). Returns whether
  written."""
  plt = _pyplot()
  if plt is None:
    return False
  figure, axes = plt.subplots(figsize=_SIZE)
  names = list(calls)
  phases: List[str] = []
  for parts in calls.values():
    phases += [p for p in parts if p not in phases]
  left = [0.0] * len(names)
  colors = plt.get_cmap("tab20").colors
  for index, phase in enumerate(phases):
    widths = [calls[name].get(phase, 0.0) for name in names]
    axes.barh(range(len(names)), widths, left=left, label=phase,
              color=colors[index % len(colors)])
    left = [a + b for a, b in zip(left, widths)]
  axes.set_yticks(range(len(names)), names, fontsize=8)
  axes.invert_yaxis()
  axes.set_xlabel(unit)
  axes.set_title(title, fontsize=10)
  axes.legend(fontsize=7, ncol=4, loc="upper center",
              bbox_to_anchor=(0.5, -0.18))
  _save(plt, figure, path)
  return True


def scaling(series: Dict[Tuple[str, str], Sequence[Tuple[int, float]]],
            path: str, *, title: str,
            ylabel: str = "steps/s") -> bool:
  """One line per (path, steps per loop): (workers, value) points.

  A panel per steps-per-loop setting, side by side. Returns whether written.
  """
  plt = _pyplot()
  if plt is None:
    return False
  loops = list(dict.fromkeys(loop for _, loop in series))
  names = list(dict.fromkeys(name for name, _ in series))
  colors = plt.get_cmap("tab10").colors
  figure, axes = plt.subplots(1, len(loops), figsize=_SIZE, squeeze=False)
  for panel, loop in zip(axes[0], loops):
    for (name, line_loop), points in series.items():
      if line_loop != loop:
        continue
      points = sorted(points)
      # The same color for a path in every panel; the reference dashed.
      panel.plot([w for w, _ in points], [v for _, v in points], marker="o",
                 color=colors[names.index(name) % len(colors)],
                 linestyle="--" if "TF2" in name else "-", label=name)
    workers = sorted({w for (_, l), pts in series.items() if l == loop
                      for w, _ in pts})
    panel.set_xticks(workers)
    panel.set_xlabel("workers")
    panel.set_title(f"steps/loop: {loop}", fontsize=9)
    panel.set_ylim(bottom=0)
  axes[0][0].set_ylabel(ylabel)
  axes[0][-1].legend(fontsize=7)
  figure.suptitle(title, fontsize=10)
  _save(plt, figure, path)
  return True


def maybe(function, *args, path: Optional[str], **kwargs) -> bool:
  """`function(*args, path, **kwargs)` when a path was asked for."""
  if not path:
    return False
  return function(*args, path, **kwargs)
