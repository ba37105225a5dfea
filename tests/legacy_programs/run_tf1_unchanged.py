"""Runs a TF 1.x program unchanged after estimator_compat.install().

  python tests/legacy_programs/run_tf1_unchanged.py PROGRAM.py [ARGS...]
  python tests/legacy_programs/run_tf1_unchanged.py -m MODULE [ARGS...]

See tf1_shim.py for what `import tensorflow` gives the program's files.
"""

import sys

import estimator_compat

estimator_compat.install()

import tf1_shim  # noqa: E402  pylint: disable=g-import-not-at-top

tf1_shim.main(sys.argv[1:])
