"""Runs a TensorFlow 1.x program file unchanged on TensorFlow 2.

  python tests/legacy_programs/tf1_shim.py PROGRAM.py [ARGS...]
  python tests/legacy_programs/tf1_shim.py -m PACKAGE.MODULE [ARGS...]

In the program's own files (PROGRAM.py and the modules beside it),
`import tensorflow as tf` gives `tf.compat.v1`, plus the few `tf.contrib`
names BERT-era programs used: `contrib.tpu` (`tf.compat.v1.estimator.tpu`
and `tf.compat.v1.tpu.CrossShardOptimizer`), `contrib.data.map_and_batch`,
`contrib.layers.layer_norm` (a stand-in creating the same `LayerNorm/beta`
and `LayerNorm/gamma` variables) and `contrib.cluster_resolver`. Shapes
are TF1 ones (`tf.compat.v1.disable_v2_tensorshape()`, for
`shape[-1].value`), in the whole process; other modules keep TensorFlow
2's API. This is test harness, not library code:
it runs the same way on the real Estimator (TF 2.15, for the goldens) and,
through run_tf1_unchanged.py, after `estimator_compat.install()`.
"""

import builtins
import os
import runpy
import sys
import types

import tensorflow as tf

_V1 = tf.compat.v1


def layer_norm(inputs, center=True, scale=True, activation_fn=None,
               reuse=None, variables_collections=None,
               outputs_collections=None, trainable=True, begin_norm_axis=1,
               begin_params_axis=-1, scope=None):
  """tf.contrib.layers.layer_norm: normalizes over the trailing axes."""
  del variables_collections, outputs_collections
  with _V1.variable_scope(scope, "LayerNorm", [inputs], reuse=reuse):
    rank = inputs.shape.rank
    norm_axis = begin_norm_axis % rank
    params_shape = inputs.shape[begin_params_axis % rank:]
    dtype = inputs.dtype.base_dtype
    beta = gamma = None
    if center:
      beta = _V1.get_variable("beta", params_shape, dtype,
                              initializer=_V1.zeros_initializer(),
                              trainable=trainable)
    if scale:
      gamma = _V1.get_variable("gamma", params_shape, dtype,
                               initializer=_V1.ones_initializer(),
                               trainable=trainable)
    mean, variance = tf.nn.moments(inputs, list(range(norm_axis, rank)),
                                   keepdims=True)
    outputs = tf.nn.batch_normalization(inputs, mean, variance, offset=beta,
                                        scale=gamma, variance_epsilon=1e-12)
    return activation_fn(outputs) if activation_fn else outputs


def _contrib() -> types.SimpleNamespace:
  estimator_tpu = _V1.estimator.tpu
  return types.SimpleNamespace(
      tpu=types.SimpleNamespace(
          TPUEstimator=estimator_tpu.TPUEstimator,
          TPUEstimatorSpec=estimator_tpu.TPUEstimatorSpec,
          RunConfig=estimator_tpu.RunConfig,
          TPUConfig=estimator_tpu.TPUConfig,
          InputPipelineConfig=estimator_tpu.InputPipelineConfig,
          CrossShardOptimizer=_V1.tpu.CrossShardOptimizer),
      data=types.SimpleNamespace(
          map_and_batch=tf.data.experimental.map_and_batch),
      layers=types.SimpleNamespace(layer_norm=layer_norm),
      cluster_resolver=tf.distribute.cluster_resolver)


class _TF1(types.ModuleType):
  """`tensorflow` as a TF 1.x program saw it."""

  def __getattr__(self, name):
    if name == "contrib":
      return _contrib()
    return getattr(_V1, name)


def run(program: str, argv: list) -> None:
  """Runs `program` as __main__ with `argv`, its files seeing TF 1.x."""
  program_dir = os.path.dirname(os.path.abspath(program))
  tf1 = _TF1("tensorflow")
  real_import = builtins.__import__

  def tf1_import(name, globals=None, locals=None, fromlist=(), level=0):  # pylint: disable=redefined-builtin
    caller = (globals or {}).get("__file__") or ""
    if name == "tensorflow" and not fromlist and (
        os.path.dirname(os.path.abspath(caller)) == program_dir):
      return tf1
    return real_import(name, globals, locals, fromlist, level)

  builtins.__import__ = tf1_import
  _V1.disable_v2_tensorshape()
  sys.path.insert(0, program_dir)
  sys.argv = [program] + list(argv)
  runpy.run_path(program, run_name="__main__")


def run_module(module: str, argv: list) -> None:
  """Runs an installed module as __main__ (`python -m module argv`).

  For packages that already import `tensorflow.compat.v1` but still reach
  for `tensorflow.contrib` (bert-tensorflow 1.0.4's modeling.py does):
  `tensorflow.contrib` and its submodules resolve to the names above.
  """
  contrib = _contrib()
  package = types.ModuleType("tensorflow.contrib")
  sys.modules["tensorflow.contrib"] = package
  for name, names in vars(contrib).items():
    if isinstance(names, types.SimpleNamespace):
      submodule = types.ModuleType(f"tensorflow.contrib.{name}")
      submodule.__dict__.update(vars(names))
    else:  # already a module (cluster_resolver)
      submodule = names
    setattr(package, name, submodule)
    sys.modules[f"tensorflow.contrib.{name}"] = submodule
  _V1.disable_v2_tensorshape()
  sys.argv = [module] + list(argv)
  runpy.run_module(module, run_name="__main__", alter_sys=True)


def main(argv: list) -> None:
  """`tf1_shim.py PROGRAM.py ARGS` or `tf1_shim.py -m MODULE ARGS`."""
  if argv[0] == "-m":
    run_module(argv[1], argv[2:])
  else:
    run(argv[0], argv[1:])


if __name__ == "__main__":
  main(sys.argv[1:])
