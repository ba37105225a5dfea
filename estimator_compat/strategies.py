"""Old import path of `estimator_compat.distribute.strategies` (kept for callers)."""

# pylint: disable=unused-import
from estimator_compat.distribute.strategies import (
    NAMES,
    StrategyChoice,
    PS_WORKER_INTER_OP_THREADS,
    set_process_strategy,
    set_process_partitioning,
    process_strategy_name,
    is_parameter_server,
    is_multi_worker,
    training_mode,
    coordinator,
    to_v2,
    for_training,
    for_evaluation,
    check,
    fields_set)
