"""Migration checks: show that a run on estimator_compat matches the old one.

This package must stay importable on TF 2.15 with the real Estimator (the
golden recorder runs there), so nothing here imports estimator_compat at
module level.
"""
