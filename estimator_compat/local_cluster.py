"""Old import path of `estimator_compat.distribute.local_cluster` (kept for callers)."""

# pylint: disable=unused-import
from estimator_compat.distribute.local_cluster import (
    exit_code,
    parse,
    plan,
    launch)
