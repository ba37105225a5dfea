"""install(): makes `tf.estimator` resolve to estimator_compat."""

import importlib
import sys
import types

import tensorflow as tf

from estimator_compat import module_paths


def install() -> types.ModuleType:
  """Points `tf.estimator` and `tf.compat.v1.estimator` at this package.

  `tf.compat.v1.estimator` is `estimator_compat.v1`: the same names, except
  those whose TF1 version differs (see `estimator_compat.v1.V1_PUBLIC`).

  After `estimator_compat.install()`, a legacy file that uses
  `tf.estimator.Estimator`, `tf.compat.v1.estimator.inputs.numpy_input_fn`
  or `import tensorflow_estimator` runs without edits. The real package's
  public module paths (`tensorflow_estimator.python.estimator.model_fn`,
  `...export.export_output`, `tensorflow_estimator.estimator`, ...; see
  `estimator_compat.module_paths`) become importable too, each with the
  public names estimator_compat implements. Calling it twice is harmless.

  It also reads the distribution flags from the command line (`--strategy`,
  `--local_cluster`, `--min_shard_bytes`, `--max_shards`; see
  `estimator_compat.distribute.flags`) and removes them from `sys.argv`, so a
  legacy program runs distributed without edits. With `--local_cluster`
  this call runs the whole cluster and exits the process.

  Returns:
    The estimator_compat module.
  """
  package = sys.modules["estimator_compat"]
  tf.estimator = package
  tf.compat.v1.estimator = importlib.import_module("estimator_compat.v1")
  tf.compat.v2.estimator = package
  sys.modules.setdefault("tensorflow.estimator", package)
  module_paths.register()
  from estimator_compat.distribute import flags as distribution_flags  # pylint: disable=g-import-not-at-top
  distribution_flags.apply()
  return package
