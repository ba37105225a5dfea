"""install(): makes `tf.estimator` resolve to estimator_compat."""

import sys
import types

import tensorflow  # noqa: F401  pylint: disable=unused-import

from estimator_compat.api import module_paths
from estimator_compat.tpu import tf_namespace


def install() -> types.ModuleType:
  """Points `tf.estimator` and `tf.compat.v1.estimator` at this package.

  `tf.compat.v1.estimator` is `estimator_compat.v1`: the same names, except
  those whose TF1 version differs (see `estimator_compat.v1.V1_PUBLIC`).

  After `estimator_compat.install()`, a legacy file that uses
  `tf.estimator.Estimator`, `tf.compat.v1.estimator.inputs.numpy_input_fn`
  or `import tensorflow_estimator` runs without edits, and so does one that
  imports them as modules (`import tensorflow.compat.v1.estimator as est`,
  `from tensorflow.compat.v2.estimator.export import ...`: every
  `tensorflow.*` path of `module_paths.TF_V1_NAMESPACES` and
  `TF_V2_NAMESPACES`, and TF 2.15's `tensorflow.python.estimator.*`). The
  real package's
  public module paths (`tensorflow_estimator.python.estimator.model_fn`,
  `...export.export_output`, `tensorflow_estimator.estimator`, ...; see
  `estimator_compat.api.module_paths`) become importable too, each with the
  public names estimator_compat implements, and TF 2.15's TPU embedding
  parameter classes (`tf.compat.v1.tpu.experimental.AdagradParameters`,
  ...) are back. Calling it twice is harmless.

  It also reads the distribution flags from the command line (`--strategy`,
  `--local_cluster`, `--min_shard_bytes`, `--max_shards`; see
  `estimator_compat.distribute.flags`) and removes them from `sys.argv`, so a
  legacy program runs distributed without edits. With `--local_cluster`
  this call runs the whole cluster and exits the process.

  Returns:
    The estimator_compat module.
  """
  package = sys.modules["estimator_compat"]
  module_paths.register_tensorflow_namespaces()
  module_paths.register()
  tf_namespace.add_embedding_parameters()
  from estimator_compat.distribute import flags as distribution_flags  # pylint: disable=g-import-not-at-top
  distribution_flags.apply()
  return package
