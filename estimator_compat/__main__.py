"""`python -m estimator_compat PROGRAM.py [ARGS]`: see estimator_compat.api.launcher."""

import sys

from estimator_compat.api import launcher

if __name__ == "__main__":
  sys.exit(launcher.main())
