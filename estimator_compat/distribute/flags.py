"""Distribution flags any legacy program accepts once it calls install().

  python legacy_program.py --strategy=parameter_server \\
      --local_cluster=worker:2,ps:1

`install()` reads these flags from the command line (and removes them, so a
program's own flag parsing never sees them):
  --strategy       default | one_device | mirrored | multi_worker_mirrored |
                   parameter_server: the strategy of Estimators whose
                   RunConfig names none.
  --local_cluster  e.g. worker:2,ps:1[,evaluator:1]: run this program as a
                   loopback cluster (see local_cluster.py); this process
                   becomes the launcher and exits with the chief's code.
  --min_shard_bytes, --max_shards: partition variables under
                   parameter-server training (RunConfig fields win).
In a task started by --local_cluster, a ps or worker task of
parameter-server training only serves: install() starts its server and
exits 0 when the chief is done, so the program's training code runs on the
chief alone.
"""

import os
import sys
from typing import List, Optional, Sequence

from absl import flags
from absl import logging

from estimator_compat.distribute import strategies
from estimator_compat.front import configuration

_FLAGS = flags.FlagValues()
flags.DEFINE_enum("strategy", None, list(strategies.NAMES),
                  "tf.distribute strategy for Estimators whose RunConfig "
                  "names none.", flag_values=_FLAGS)
flags.DEFINE_string("local_cluster", None,
                    "Run as a loopback cluster, e.g. worker:2,ps:1.",
                    flag_values=_FLAGS)
flags.DEFINE_integer("min_shard_bytes", None,
                     "Parameter-server training: minimum bytes per variable "
                     "shard.", lower_bound=1, flag_values=_FLAGS)
flags.DEFINE_integer("max_shards", None,
                     "Parameter-server training: maximum shards per "
                     "variable.", lower_bound=1, flag_values=_FLAGS)
_NAMES = ("strategy", "local_cluster", "min_shard_bytes", "max_shards")


def _ours(argv: Sequence[str]) -> List[str]:
  """The arguments of argv[1:] that are our flags (with their values)."""
  mine, i = [], 1
  while i < len(argv):
    arg = argv[i]
    name = arg[2:].split("=", 1)[0] if arg.startswith("--") else None
    if name in _NAMES:
      mine.append(arg)
      if "=" not in arg and i + 1 < len(argv):
        mine.append(argv[i + 1])
        i += 1
    i += 1
  return mine


def apply(argv: Optional[List[str]] = None) -> None:
  """Applies our flags from argv (default sys.argv) and removes them there.

  May not return: with --local_cluster this process runs the cluster and
  exits; a serving task exits when the chief is done.

  Raises:
    flags.Error: a malformed flag value (the message names it).
    ValueError: an impossible combination, with the fix.
  """
  argv = sys.argv if argv is None else argv
  mine = _ours(argv)
  if not mine:
    _serve_if_server_task()
    return
  _FLAGS.unparse_flags()
  _FLAGS([argv[0]] + mine)
  for arg in mine:
    argv.remove(arg)
  # Handed to the front as a value. The tasks of --local_cluster parse the
  # same flags from their command line (local_cluster.launch keeps them).
  configuration.set_strategy_flags(configuration.StrategyChoice(
      _FLAGS.strategy, _FLAGS.min_shard_bytes, _FLAGS.max_shards))
  if _FLAGS.local_cluster:
    # pylint: disable=g-import-not-at-top
    from estimator_compat.distribute import local_cluster
    sys.exit(local_cluster.launch(_FLAGS.local_cluster, _FLAGS.strategy))
  _serve_if_server_task()


def _serve_if_server_task() -> None:
  """In a --local_cluster task: ps/worker of PS training serve, then exit."""
  # pylint: disable=g-import-not-at-top
  from estimator_compat.distribute import cluster_tasks
  if not os.environ.get(cluster_tasks.DONE_FILE_ENV):
    return
  from estimator_compat.run_config import RunConfig
  config = RunConfig()
  choices = configuration.resolve(config)
  if cluster_tasks.serves_only(config, choices):
    try:
      cluster_tasks.serve_until_done(config, choices, None)
    except cluster_tasks.ChiefGoneError as e:
      logging.error("%s", e)
      sys.exit(1)
    sys.exit(0)
  if strategies.training_mode(config, choices.strategy) == (
      "multi_worker_mirrored"):
    # Collective ops are configured at startup, before other TF work.
    strategies.for_training(config, choices.strategy)
