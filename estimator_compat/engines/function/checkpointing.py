"""Old import path of `estimator_compat.engines.function.variable_saver` (kept for callers)."""

# pylint: disable=unused-import
from estimator_compat.engines.function.variable_saver import (
    sync_copies,
    restore_or_warm_start,
    warm_start,
    CheckpointWriter)
