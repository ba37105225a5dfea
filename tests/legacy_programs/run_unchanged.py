"""Runs a legacy program unchanged after estimator_compat.install().

  python tests/legacy_programs/run_unchanged.py PROGRAM.py [ARGS...]
"""

import runpy
import sys

import estimator_compat

estimator_compat.install()
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
