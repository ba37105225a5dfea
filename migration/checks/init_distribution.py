"""Initialization against a rewrite: the same distribution of initial values.

A TF2 rewrite cannot draw the legacy graph's random numbers, so its fresh
values are compared as samples: a variable the old side initialized to a
constant (zeros, ones, a counter) must hold the same values; a random one
must pass a two-sample Kolmogorov-Smirnov test against the old values (at
the 0.1% level), which separates initializers of another family or scale
(glorot_uniform vs he_normal or truncated_normal(0.1)) even for a few hundred
values.
"""


import numpy as np

from migration.checks.result import CheckResult, FAIL, PASS, array_check

_C_ALPHA = 1.949  # Kolmogorov-Smirnov at the 0.1% level.
_MIN_SAMPLES = 16


def _ks_statistic(a: np.ndarray, b: np.ndarray) -> float:
  a, b = np.sort(a), np.sort(b)
  grid = np.concatenate([a, b])
  cdf_a = np.searchsorted(a, grid, side="right") / len(a)
  cdf_b = np.searchsorted(b, grid, side="right") / len(b)
  return float(np.max(np.abs(cdf_a - cdf_b)))


def run(name: str, old, new, tolerance) -> CheckResult:
  """Compares the initial values of `old` and `new` (see the module doc)."""
  before, after = old.arrays("init"), new.arrays("init")
  constant = {k: v for k, v in before.items()
              if np.asarray(v).size < _MIN_SAMPLES or
              np.all(np.asarray(v) == np.asarray(v).reshape(-1)[0])}
  result = array_check(name, "constant initial values", constant,
                       {k: v for k, v in after.items() if k in constant} | {
                           k: v for k, v in after.items()
                           if k not in before}, tolerance, "")
  if not result.passed:
    result.cause = (f"{result.worst} starts at other values on the rewrite: "
                    "its initializer (zeros, ones, a constant) or its "
                    "optimizer state differs.")
    return result
  worst, worst_ratio, numbers = "", 0.0, {}
  for key in sorted(set(before) - set(constant)):
    a = np.asarray(before[key], np.float64).reshape(-1)
    if key not in after:
      return CheckResult(name, FAIL, f"missing in new: {key}", key, {},
                         "The rewrite has no variable for it; see the "
                         "structure check.")
    b = np.asarray(after[key], np.float64).reshape(-1)
    statistic = _ks_statistic(a, b)
    bound = _C_ALPHA * np.sqrt((len(a) + len(b)) / (len(a) * len(b)))
    if statistic / bound > worst_ratio:
      worst, worst_ratio = key, statistic / bound
      numbers = {"ks_statistic": statistic, "ks_bound": float(bound),
                 "old_mean": float(a.mean()), "old_std": float(a.std()),
                 "new_mean": float(b.mean()), "new_std": float(b.std()),
                 "old_range": [float(a.min()), float(a.max())],
                 "new_range": [float(b.min()), float(b.max())]}
  random_count = len(set(before) - set(constant))
  if worst_ratio > 1.0:
    n = numbers
    return CheckResult(
        name, FAIL,
        f"{worst}: initial values drawn from another distribution (KS "
        f"{n['ks_statistic']:.3f} > {n['ks_bound']:.3f})", worst, numbers,
        f"{worst} is initialized with another initializer on the rewrite "
        f"(old mean {n['old_mean']:.4g}, std {n['old_std']:.4g}, range "
        f"[{n['old_range'][0]:.3g}, {n['old_range'][1]:.3g}]; new mean "
        f"{n['new_mean']:.4g}, std {n['new_std']:.4g}, range "
        f"[{n['new_range'][0]:.3g}, {n['new_range'][1]:.3g}]). Compare "
        "the layer's kernel_initializer with the legacy default "
        "(tf.compat.v1.layers: glorot_uniform; get_variable: "
        "glorot_uniform).")
  return CheckResult(name, PASS, f"{len(constant)} constant variables equal; "
                     f"{random_count} random ones from the same "
                     "distribution (two-sample KS, 0.1%)", worst, numbers)
