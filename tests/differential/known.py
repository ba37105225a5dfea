"""Which differences are known and deliberate (docs/known_differences.md).

A difference is known only through an explicit rule here: a rule names a
row id of docs/known_differences.md, the difference kinds it covers, and a
predicate over the program's spec and the difference. The sweep annotates a
difference `known:<id>` when a rule matches and the id is a row of the
table; everything else is unexplained. A rule whose id has no row is an
error (`check_rules`), so a rule cannot quietly explain anything.
"""

import dataclasses
import os
import re
from typing import Callable, Dict, FrozenSet, Optional, Sequence

from tests.differential import compare as compare_lib
from tests.differential import spec as spec_lib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TABLE = os.path.join(ROOT, "docs", "known_differences.md")


@dataclasses.dataclass(frozen=True)
class Rule:
  """A deliberate difference: row `id`, for `kinds`, where `applies`."""
  id: str
  kinds: FrozenSet[str]
  applies: Callable[[spec_lib.ProgramSpec, compare_lib.Difference], bool]


def _old_side_never_trained(d: compare_lib.Difference) -> bool:
  """Whether `d` is what a real-Estimator run that failed first left."""
  if d.kind == "error":
    return d.detail.startswith("old FailedPreconditionError") and (
        d.detail.endswith("; new None"))
  return {
      "results-keys": lambda: d.detail.startswith("only old: [];"),
      "checkpoints": lambda: "old [] vs new" in d.detail,
      "checkpoint_state": lambda: "on the old side" in d.detail,
      "event_tag_missing": lambda: "on the new side only" in d.detail,
      "eval_result": lambda: "step old None vs new" in d.detail,
      "layout": lambda: d.detail == "only on the new side",
      "export_missing": lambda: d.detail.startswith(
          "exported on the new side only"),
  }.get(d.kind, lambda: False)()


RULES: Sequence[Rule] = (
    # TF 2.15's v2 Baseline* made its bias from a tensor under the input's
    # batch-size checks (more than one feature: every generated program), so
    # from a fresh start its initializer read a Dataset input's iterator
    # before it was initialized and the first train() failed; here it trains
    # (finding G7, seed 37). Everything the old side lacks follows from that.
    Rule("baseline-v2-input-initializer",
         frozenset({"error", "results-keys", "checkpoints",
                    "checkpoint_state", "event_tag_missing", "eval_result",
                    "layout", "export_missing"}),
         lambda s, d: (s.model == "canned_baseline"
                       and s.optimizer_family == "keras"
                       and s.input_fn in ("dataset", "from_generator")
                       and _old_side_never_trained(d))),

    # numpy_input_fn/pandas_input_fn read through tf.data here (no TF1
    # queue), so the queue's fill-fraction summary is not written; its
    # values (thread timing) also differ between two real-Estimator runs,
    # which must not drop the program as non-deterministic.
    # Two replicas: TF 2.15's sharded Saver wrote a data file per device.
    Rule("mirrored-checkpoint-one-shard", frozenset({"layout"}),
         lambda s, d: (s.strategy == "mirrored" and re.search(
             r"model\.ckpt-\d+\.data-\d{5}-of-\d{5}$", d.where)
                       and d.detail.startswith("only on the "))),
    Rule("numpy-input-queue-summary", frozenset({"event_tag_missing"}),
         lambda s, d: (s.input_fn in ("numpy_input_fn", "pandas_input_fn")
                       and "enqueue_input/" in d.where
                       and "old side only" in d.detail)),
    Rule("numpy-input-queue-summary", frozenset({"event_value",
                                                  "event_steps"}),
         lambda s, d: (s.input_fn in ("numpy_input_fn", "pandas_input_fn")
                       and "enqueue_input/" in d.where)),
)


# Summaries the real Estimator itself writes two ways from the same ckpt-0:
# the canned Linear* summarize a variable they read with no order against
# the train op's update in the same run, so the value is from before or
# after the step (seed 44: `linear/bias` at step 1 was 0.0 in one run and
# -0.0392 in its rerun; `fraction_of_zero_weights` reads the weights alike).
# The v2 Linear* write them as bare `bias` and `fraction_of_zero_weights`
# (seed 436, G16: the real runs' reads came before the update; TF 2.15 read
# a tiny tensor-input model's variable after it at 127 of 150 steps). Both
# our engines read before the update on every run; the real side cannot be
# matched, so only their steps compare.
RACY_LINEAR_SUMMARIES = ("bias", "fraction_of_zero_weights")


def racy_on_the_estimator(difference: compare_lib.Difference) -> bool:
  """Whether `difference` is a value the real Estimator gives two ways."""
  if difference.kind != "event_value" or ": " not in difference.where:
    return False
  tag = difference.where.rsplit(": ", 1)[1]
  if tag in RACY_LINEAR_SUMMARIES:  # v2 Linear*
    return True
  return ": linear/" in difference.where and (
      tag.rsplit("/", 1)[-1] in RACY_LINEAR_SUMMARIES)


def read_table(path: str = TABLE) -> Dict[str, str]:
  """{id: the row's difference text} of the known-differences table."""
  if not os.path.exists(path):
    return {}
  rows = {}
  with open(path) as f:
    for line in f:
      cells = [c.strip() for c in line.strip().strip("|").split("|")]
      if (len(cells) >= 4 and cells[0] != "id" and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*",
                                           cells[0])):
        rows[cells[0]] = cells[1]
  return rows


def check_rules(table: Dict[str, str],
                rules: Sequence[Rule] = RULES) -> None:
  """Raises ValueError if a rule's id is not a row of the table."""
  missing = sorted(r.id for r in rules if r.id not in table)
  if missing:
    raise ValueError(f"known-difference rules {missing} have no row in "
                     f"{TABLE}: add the row (with its reason) or the rule.")


def classify(spec: spec_lib.ProgramSpec, difference: compare_lib.Difference,
             table: Dict[str, str],
             rules: Sequence[Rule] = RULES) -> Optional[str]:
  """The known-difference id that explains `difference`, or None."""
  for rule in rules:
    if (rule.id in table and difference.kind in rule.kinds
        and rule.applies(spec, difference)):
      return rule.id
  return None
