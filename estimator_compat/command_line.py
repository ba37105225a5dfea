"""Old import path of `estimator_compat.distribute.flags` (kept for callers)."""

# pylint: disable=unused-import
from estimator_compat.distribute.flags import (
    apply)
