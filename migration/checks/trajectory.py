"""Trajectory: N training steps from the same checkpoint on the same batches.

Compares the loss of every step and every variable after every step, with a
bound that grows with the step (Tolerance.per_step), and names the first
step where the runs part.
"""

from typing import Dict, Optional, Tuple

import numpy as np

from migration.checks import optimizer_hint
from migration.checks.result import (CheckResult, Difference, FAIL, PASS,
                                     compare_arrays, not_run)

NAME = "trajectory"


def _frozen_on_new(old_steps, new_steps, start) -> Optional[str]:
  """A variable that moves in the old run but stays at its start in the new."""
  last = max(set(old_steps) & set(new_steps))
  for name, begin in sorted(start.items()):
    if name == "global_step" or name not in old_steps[last]:
      continue
    moved_old = not np.array_equal(old_steps[last][name], begin)
    moved_new = not np.array_equal(new_steps[last].get(name), begin)
    if moved_old and not moved_new:
      return name
  return None


def _first_divergence(old_steps, new_steps, tolerance
                     ) -> Tuple[Optional[int], Difference]:
  for step in sorted(set(old_steps) & set(new_steps)):
    missing, extra, reshaped, worst = compare_arrays(
        old_steps[step], new_steps[step], tolerance.at_step(step))
    if missing or extra or reshaped:
      return step, Difference(name=(missing + extra + reshaped)[0],
                              ratio=float("inf"))
    if worst.ratio > 1.0:
      return step, worst
  return None, Difference()


def _loss_divergence(old_losses, new_losses, tolerance) -> Optional[int]:
  new_by_step = dict((int(s), l) for s, l in new_losses)
  for step, loss in old_losses:
    other = new_by_step.get(int(step))
    bound = tolerance.at_step(int(step))
    if other is None or abs(other - loss) > bound.atol + bound.rtol * abs(
        loss):
      return int(step)
  return None


def _cause(step: int, worst: str, trainable: Dict[str, bool], frozen,
           earlier) -> str:
  for name in ("inputs", "forward", "gradients"):
    if name in earlier and not earlier[name].passed:
      return f"Step 1 differs already (see the {name} check)."
  if frozen:
    return (f"{frozen} changes in the old run but never in the new one: its "
            "update op does not run. Typical: a missing "
            "tf.control_dependencies(tf.compat.v1.get_collection("
            "tf.compat.v1.GraphKeys.UPDATE_OPS)) around the train_op.")
  if step == 1:
    return ("Same loss and gradients at step 1, yet the first update "
            f"differs ({worst}): the optimizer's settings differ (learning "
            "rate, epsilon, beta1/beta2, momentum, clipping).")
  if trainable.get(worst, True):
    return (f"Updates match until step {step - 1} and part at step {step} "
            f"({worst}): something that depends on the step differs, e.g. a "
            "learning-rate schedule off by a step, or a decay/warm-up.")
  return (f"{worst} (not trainable) parts at step {step}: its update op "
          "differs (moving averages, a counter).")


def run(old, new, tolerance, earlier) -> CheckResult:
  failed = not_run(NAME, old.error("trajectory"), new.error("trajectory"))
  if failed:
    return failed
  old_steps, new_steps = old.trajectory(), new.trajectory()
  old_losses = old.meta.get("losses", [])
  new_losses = new.meta.get("losses", [])
  if not old_steps or not new_steps:
    return CheckResult(NAME, FAIL, "no per-step checkpoints on one side",
                       "old" if not old_steps else "new", {},
                       "The run saved no checkpoints per step.")
  step, worst = _first_divergence(old_steps, new_steps, tolerance)
  loss_step = _loss_divergence(old_losses, new_losses, tolerance)
  last = max(set(old_steps) & set(new_steps))
  numbers = {
      "steps": last, "tolerance": tolerance.describe(),
      "first_variable_divergence_step": step,
      "first_loss_divergence_step": loss_step,
      "final_loss_old": old_losses[-1][1] if old_losses else None,
      "final_loss_new": new_losses[-1][1] if new_losses else None}
  if step is None and loss_step is None:
    _, _, _, final = compare_arrays(old_steps[last], new_steps[last],
                                    tolerance.at_step(last))
    numbers.update(final.as_numbers())
    return CheckResult(NAME, PASS, f"{last} steps: every loss and variable "
                       f"within {tolerance.describe()} (max |diff| at step "
                       f"{last}: {final.largest_abs:.3g})",
                       final.name, numbers)
  numbers.update(worst.as_numbers())
  trainable = {v["name"]: v["trainable"]
               for v in old.meta.get("structure", [])}
  frozen = _frozen_on_new(old_steps, new_steps, old.arrays("init"))
  where = step if step is not None else loss_step
  if step is None:
    summary = f"loss parts at step {loss_step}"
    worst_name = "loss"
  else:
    summary = (f"variables part at step {step}: {worst.name}"
               f"{list(worst.index)} old {worst.old} vs new {worst.new} "
               f"(|diff| {worst.max_abs:.3g})")
    if loss_step is not None:
      summary += f"; loss parts at step {loss_step}"
    worst_name = frozen or worst.name
  return CheckResult(NAME, FAIL, summary, worst_name, numbers,
                     _cause(where, worst.name, trainable, frozen, earlier) +
                     optimizer_hint.hint(new.meta.get("optimizer")))
