"""Old import path of `estimator_compat.distribute.cluster_tasks` (kept for callers)."""

# pylint: disable=unused-import
from estimator_compat.distribute.cluster_tasks import (
    DONE_FILE,
    free_ports,
    loopback_cluster,
    tf_config,
    DONE_FILE_ENV,
    CHIEF_PID_ENV,
    done_path,
    mark_done,
    mark_done_at_exit,
    done_since,
    ChiefGoneError,
    process_alive,
    serves_only,
    serve_until_done)
