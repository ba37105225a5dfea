"""The library's log lines, through TensorFlow's logger as the Estimator's.

`tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)` in a plain
script or notebook shows them, each once. absl.logging is not used in the
library: its first call runs `logging.basicConfig()` when the root logger has
no handler, after which every line of the "tensorflow" logger (which has its
own handler and propagates) is printed twice.

The functions keep absl.logging's call shapes, so a module imports this one
as `logging`.
"""

from typing import Any

import tensorflow as tf


def info(msg: str, *args: Any) -> None:
  """Logs `msg % args` at INFO on the "tensorflow" logger."""
  tf.compat.v1.logging.info(msg, *args)


def warning(msg: str, *args: Any) -> None:
  """Logs `msg % args` at WARNING on the "tensorflow" logger."""
  tf.compat.v1.logging.warning(msg, *args)


def error(msg: str, *args: Any) -> None:
  """Logs `msg % args` at ERROR on the "tensorflow" logger."""
  tf.compat.v1.logging.error(msg, *args)
