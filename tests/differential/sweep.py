"""Differential sweep: generated legacy programs, real Estimator vs here.

  python -m tests.differential.sweep --seeds 0-999 [--old-python PATH]
      [--jobs 1] [--out DIR]

For each seed: generate the program (generator.py), run it on the real
Estimator (TF 2.15, `--old-python`, default $ESTIMATOR_COMPAT_OLD_PYTHON or
~/.cache/estimator-compat/tf215-venv/bin/python) from a fresh start, keep
its model.ckpt-0, run it here (estimator_compat on this interpreter's
TensorFlow, default engine) starting from that ckpt-0, and compare (compare.py).
A program whose sides differ is rerun on the real Estimator from the same
ckpt-0: if that rerun differs from the first run, the program is dropped as
non-deterministic (its reason counted). The rest are differences, known
(docs/known_differences.md, known.py) or unexplained. Prints a summary,
writes DIR/summary.json and DIR/differences.jsonl, and exits 1 on any
unexplained difference. Rerun with the same --out to resume: a program
whose source is unchanged keeps the facts it left there.
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

import migration
from tests.differential import compare as compare_lib
from tests.differential import generator
from tests.differential import known
from tests.differential import spec as spec_lib

ROOT = known.ROOT
DEFAULT_OLD_PYTHON = os.path.expanduser(
    "~/.cache/estimator-compat/tf215-venv/bin/python")
# A program runs in ~1-5 s; one that makes no progress for this long hangs.
ITEM_TIMEOUT_S = 300
# The CI sample (tests/test_differential_sample.py): 12 seeds that together
# use every value of every dimension; 90 is a
# MirroredStrategy program (Keras layers and optimizer on 2 logical CPUs,
# the per-replica slot copies of G9), about 75 s on a loaded 2-core
# machine, 2-3x another seed. The 25 seeds 0, 40, ..., 960 took well
# over 4 minutes on the shared 2-core machine (~17 s per program on TF
# 2.15, ~40 s here) and missed two values.
# 72 (added with warm_start_by, G18) warm-starts by init_from_checkpoint.
CI_SAMPLE_SEEDS = [0, 3, 8, 12, 15, 29, 66, 72, 90, 109, 490, 725]


def parse_seeds(text: str) -> List[int]:
  """'0-9,20,30-31' -> [0, ..., 9, 20, 30, 31]."""
  seeds: List[int] = []
  for part in text.split(","):
    part = part.strip()
    if "-" in part:
      lo, hi = part.split("-")
      seeds.extend(range(int(lo), int(hi) + 1))
    elif part:
      seeds.append(int(part))
  return seeds


def _env() -> Dict[str, str]:
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3",
             CUDA_VISIBLE_DEVICES="")
  for name in ("ESTIMATOR_COMPAT_ENGINE", "TF_CONFIG"):
    env.pop(name, None)  # the default engine: what users get
  return env


def _write_failure(item: dict, kind: str, log: str) -> None:
  with open(item["workdir"] + ".facts.json", "w") as f:
    json.dump({"seed": item["seed"], "results": {}, "model_dirs": {},
               "error": {"type": kind, "message": f"see {log}",
                         "traceback": ""}}, f)
  np.savez(item["workdir"] + ".vars.npz")


def _run_chunk(python: str, side: str, items: List[dict], folder: str,
               tag: str) -> None:
  """Runs items in one process; restarts after a crash or a hang."""
  pending = list(items)
  attempt = 0
  while pending:
    attempt += 1
    batch = os.path.join(folder, f"batch_{tag}_{attempt}.json")
    log = batch[:-5] + ".log"
    with open(batch, "w") as f:
      json.dump({"items": pending}, f)
    with open(log, "w") as out:
      proc = subprocess.Popen(
          [python, "-m", "tests.differential.runner", "--side", side,
           "--batch", batch], cwd=ROOT, env=_env(), stdout=out,
          stderr=subprocess.STDOUT)
      done, last_progress = 0, time.time()
      while proc.poll() is None:
        time.sleep(0.5)
        with open(log, errors="replace") as f:
          now = sum(1 for line in f if line.startswith("DONE "))
        if now != done:
          done, last_progress = now, time.time()
        elif time.time() - last_progress > ITEM_TIMEOUT_S:
          proc.kill()
          proc.wait()
    with open(log, errors="replace") as f:
      done = sum(1 for line in f if line.startswith("DONE "))
    if done >= len(pending):
      return
    # The item after the last finished one crashed or hung the process.
    _write_failure(pending[done],
                   "RunnerTimeout" if proc.returncode in (-9, 137)
                   else "RunnerCrash", log)
    pending = pending[done + 1:]


def run_side(python: str, side: str, items: List[dict], folder: str,
             jobs: int, name: str) -> None:
  """Runs items with runner `--side side` in `jobs` parallel processes."""
  if not items:
    return
  chunks = [items[i::jobs] for i in range(jobs)]
  if jobs == 1:
    _run_chunk(python, side, items, folder, f"{name}_0")
    return
  import concurrent.futures  # pylint: disable=g-import-not-at-top
  with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
    list(pool.map(lambda c: _run_chunk(python, side, c[1], folder,
                                          f"{name}_{c[0]}"),
                  [(i, c) for i, c in enumerate(chunks) if c]))


def _load(workdir: str) -> Tuple[dict, Dict[str, np.ndarray]]:
  with open(workdir + ".facts.json") as f:
    facts = json.load(f)
  with np.load(workdir + ".vars.npz", allow_pickle=False) as values:
    return facts, dict(values)


def _diff(a: str, b: str) -> List[compare_lib.Difference]:
  """The program-level differences, then each model_dir's (migration).

  Values the real Estimator itself gives two ways (known.py) are left out.
  """
  fa, va = _load(a)
  fb, vb = _load(b)
  found = compare_lib.compare(fa, fb, va, vb, model_dirs=False)
  for name in sorted(set(fa["model_dirs"]) & set(fb["model_dirs"])):
    diff = migration.diff_model_dirs(
        os.path.join(a, name), os.path.join(b, name),
        rtol=compare_lib.DEFAULT_RTOL, atol=compare_lib.DEFAULT_ATOL)
    found.extend(compare_lib.Difference(d.kind, f"{name}:{d.where}", d.detail)
                 for d in diff.differences)
  return [d for d in found if not known.racy_on_the_estimator(d)]


def sweep(seeds: Sequence[int], old_python: str, out: str, jobs: int = 1,
          new_python: Optional[str] = None) -> dict:
  """Runs the sweep and returns its summary (also written under `out`)."""
  new_python = new_python or sys.executable
  table = known.read_table()
  known.check_rules(table)
  programs = os.path.join(out, "programs")
  os.makedirs(programs, exist_ok=True)
  specs = {}
  unchanged = set()  # programs whose earlier facts in `out` still hold
  for seed in seeds:
    specs[seed] = spec_lib.draw(seed)
    source = generator.generate(specs[seed])
    path = os.path.join(programs, f"seed_{seed}.py")
    if os.path.exists(path):
      with open(path) as f:
        if f.read() == source:
          unchanged.add(seed)
    with open(path, "w") as f:
      f.write(source)

  def todo(side, chosen):
    """Seeds of `chosen` without facts from this very program on `side`."""
    return [s for s in chosen if s not in unchanged or not os.path.exists(
        os.path.join(out, side, f"{s}.facts.json"))]

  def item(seed, side, start=None, save=None):
    return {"seed": seed, "program": os.path.join(programs, f"seed_{seed}.py"),
            "workdir": os.path.join(out, side, str(seed)),
            "start_from": start, "save_ckpt0_to": save}

  def ckpt0(seed):
    return os.path.join(out, "ckpt0", str(seed))

  for side in ("old", "new", "old_rerun"):
    os.makedirs(os.path.join(out, side), exist_ok=True)
  started = time.time()
  run_side(old_python, "old",
           [item(s, "old", save=ckpt0(s)) for s in todo("old", seeds)],
           out, jobs, "old")
  old_seconds = time.time() - started
  run_side(new_python, "new",
           [item(s, "new", start=ckpt0(s) if os.path.isdir(ckpt0(s))
                 else None) for s in todo("new", seeds)], out, jobs, "new")
  new_seconds = time.time() - started - old_seconds
  first = {s: _diff(os.path.join(out, "old", str(s)),
                    os.path.join(out, "new", str(s))) for s in seeds}
  differing = [s for s in seeds if first[s]]

  def finished(seed):
    """Whether the real Estimator's run ended (a hang is not rerun)."""
    error = _load(os.path.join(out, "old", str(seed)))[0].get("error") or {}
    return error.get("type") not in ("RunnerTimeout", "RunnerCrash")

  run_side(old_python, "old",
           [item(s, "old_rerun", start=ckpt0(s))
            for s in todo("old_rerun", differing)
            if os.path.isdir(ckpt0(s)) and finished(s)],
           out, jobs, "old_rerun")
  dropped: Dict[int, str] = {}
  for s in differing:
    old_error = _load(os.path.join(out, "old", str(s)))[0].get("error") or {}
    if old_error.get("type") in ("RunnerTimeout", "RunnerCrash"):
      dropped[s] = f"real Estimator run did not finish: {old_error['type']}"
      continue
    rerun = os.path.join(out, "old_rerun", str(s))
    if not os.path.exists(rerun + ".facts.json"):
      continue
    # Known differences are left out: e.g. the queue-fill summary of a
    # numpy_input_fn depends on thread timing on the real Estimator itself.
    again = [d for d in _diff(os.path.join(out, "old", str(s)), rerun)
             if not known.classify(specs[s], d, table)]
    if again:
      kinds = sorted({d.kind for d in again})
      dropped[s] = "real Estimator rerun from ckpt-0 differs: " + ",".join(
          kinds)
  both_failed = {}
  records = []
  by_kind = collections.Counter()
  known_ids = collections.Counter()
  unexplained = collections.Counter()
  for s in seeds:
    old_facts, _ = _load(os.path.join(out, "old", str(s)))
    if old_facts.get("error") and not first[s]:
      both_failed[s] = old_facts["error"]["type"]
    if s in dropped:
      continue
    for d in first[s]:
      kid = known.classify(specs[s], d, table)
      by_kind[d.kind] += 1
      if kid:
        known_ids[kid] += 1
      else:
        unexplained[d.kind] += 1
      records.append({"seed": s, **d.to_json(),
                      "known": kid, "spec": specs[s].features()})
  summary = {
      "seeds": (f"{len(seeds)} seeds in {min(seeds)}-{max(seeds)}"
                if seeds else ""),
      "programs": len(seeds),
      "dropped": len(dropped),
      "dropped_reasons": dict(collections.Counter(dropped.values())),
      "dropped_seeds": sorted(dropped),
      "both_raised": len(both_failed),
      "both_raised_types": dict(collections.Counter(both_failed.values())),
      "programs_with_differences": len({r["seed"] for r in records}),
      "differences_by_kind": dict(sorted(by_kind.items())),
      "known": dict(sorted(known_ids.items())),
      "unexplained_by_kind": dict(sorted(unexplained.items())),
      "unexplained_seeds": sorted({r["seed"] for r in records
                                   if not r["known"]}),
      "seconds": {"old": round(old_seconds), "new": round(new_seconds),
                  "total": round(time.time() - started)},
  }
  with open(os.path.join(out, "summary.json"), "w") as f:
    json.dump(summary, f, indent=1, sort_keys=True)
  with open(os.path.join(out, "differences.jsonl"), "w") as f:
    for r in records:
      f.write(json.dumps(r, sort_keys=True) + "\n")
  return summary


def format_summary(summary: dict) -> str:
  lines = [f"programs: {summary['programs']} ({summary['seeds']})",
           f"dropped as non-deterministic: {summary['dropped']}"]
  for reason, n in sorted(summary["dropped_reasons"].items()):
    lines.append(f"  {n:4d}  {reason}")
  lines.append(f"raised on both sides alike: {summary['both_raised']} "
               f"{summary['both_raised_types']}")
  lines.append(f"programs with differences: "
               f"{summary['programs_with_differences']}")
  lines.append("differences by kind:")
  for kind, n in summary["differences_by_kind"].items():
    lines.append(f"  {n:4d}  {kind}")
  lines.append(f"known: {sum(summary['known'].values())} {summary['known']}")
  unexplained = sum(summary["unexplained_by_kind"].values())
  lines.append(f"unexplained: {unexplained} {summary['unexplained_by_kind']}")
  if summary["unexplained_seeds"]:
    lines.append(f"unexplained seeds: {summary['unexplained_seeds']}")
  lines.append(f"seconds: {summary['seconds']}")
  return "\n".join(lines)


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--seeds", default="0-49", help="e.g. 0-999 or 3,7-9")
  parser.add_argument("--old-python", default=os.environ.get(
      "ESTIMATOR_COMPAT_OLD_PYTHON", DEFAULT_OLD_PYTHON),
                      help="a Python with TF <= 2.15 + tensorflow-estimator")
  parser.add_argument("--jobs", type=int, default=1)
  parser.add_argument("--out", help="work folder (default: a new temp dir)")
  args = parser.parse_args(argv)
  if not os.path.exists(args.old_python):
    parser.error(f"--old-python {args.old_python} does not exist: create it "
                 "with tools/tf215_venv.sh")
  out = os.path.abspath(args.out or tempfile.mkdtemp(prefix="differential_"))
  summary = sweep(parse_seeds(args.seeds), args.old_python, out, args.jobs)
  print(format_summary(summary))
  print(f"details: {out}/differences.jsonl")
  return 1 if summary["unexplained_by_kind"] else 0


if __name__ == "__main__":
  sys.exit(main())
