"""TF1 random ops as one stream per op, whichever step function runs it.

A TF1 random op (`RandomUniform`, `RandomStandardNormal`, `TruncatedNormal`,
`RandomUniformInt`: what tf.random.*, tf.nn.dropout and the v1 layers call)
keeps its Philox state in its kernel. Under a Session one kernel serves every
step, so step k draws the k-th values of the op's stream. The function
engine runs a step through one of several functions pruned from the traced
graph (the hooks' fetch sets, the many-steps loop), each with its own kernel:
each would restart the stream.

While the model_fn is traced, these ops are made instead as their stateless
counterparts over a counter that every function shares (a resource variable
per op, outside the checkpoint, as the kernel's state was): the kernel
reserved 256 x (values) Philox counters per run, so the op's run k is the
stateless op at key `seed` and counter `(256 x values drawn before, seed2)`.
The values are those of the Session bit for bit (tests/test_random_streams.py
checks each op against a TF1 Session), and a new trace starts the stream
again, as the Estimator's new graph per call did.

Only ops created directly in the traced graph are replaced; one inside a
nested graph (a tf.cond branch, a while loop body) or any other kernel-state
random op (Multinomial, RandomShuffle, RandomGamma, the candidate samplers
of nce_loss and sampled_softmax_loss, ...) stays as it is, and
`kernel_state_ops` finds it, so that the call can run on the graph engine.
"""

import contextlib
import random
import threading
from typing import Any, Callable, Dict, Iterator, List, Set

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.ops import gen_random_ops
from tensorflow.python.ops import gen_stateless_random_ops_v2 as stateless
from tensorflow.python.ops import resource_variable_ops

from estimator_compat.engines.function import outside_variables

_PHILOX = 1  # The Philox algorithm id of the stateless V2 ops.
_COUNTERS_PER_VALUE = 256  # What the TF1 kernels reserve per output value.

# Random ops whose state lives in their kernel.
KERNEL_STATE_OPS = frozenset([
    "RandomUniform", "RandomUniformInt", "RandomStandardNormal",
    "TruncatedNormal", "ParameterizedTruncatedNormal", "RandomGamma",
    "RandomPoisson", "RandomPoissonV2", "RandomShuffle", "Multinomial",
    "RandomCrop", "SampleDistortedBoundingBox", "SampleDistortedBoundingBoxV2",
    "RandomShuffleQueue", "RandomShuffleQueueV2",
    # The candidate samplers of nce_loss and sampled_softmax_loss.
    "LogUniformCandidateSampler", "UniformCandidateSampler",
    "LearnedUnigramCandidateSampler", "FixedUnigramCandidateSampler",
    "ThreadUnsafeUnigramCandidateSampler", "AllCandidateSampler"])

_lock = threading.Lock()
_active: Set[int] = set()  # id() of the graphs being traced
_installed: Dict[str, Callable[..., Any]] = {}  # function -> TF's own


def _counter() -> tf.Variable:
  """The op's shared Philox counter: eager, unsaved, past any creator scope.

  Constructed as ResourceVariable itself, so that neither VariableCapture
  (the checkpoint) nor a strategy's scope (a distributed variable) takes it.
  """
  with tf.init_scope():
    return outside_variables.engine_variable(
        resource_variable_ops.ResourceVariable(
            0, dtype=tf.int64, trainable=False, name="random_stream_counter"))


# Each replaced gen_random_ops function: its op type (also the name TF1 gave
# its output), its parameters before seed, seed2 and name, and the stateless
# op that draws the same values (it takes those parameters but the shape as
# keywords).
_REPLACED = {
    "random_uniform": ("RandomUniform", ("shape", "dtype"),
                       stateless.stateless_random_uniform_v2),
    "random_standard_normal": ("RandomStandardNormal", ("shape", "dtype"),
                               stateless.stateless_random_normal_v2),
    "truncated_normal": ("TruncatedNormal", ("shape", "dtype"),
                         stateless.stateless_truncated_normal_v2),
    "random_uniform_int": ("RandomUniformInt", ("shape", "minval", "maxval"),
                           stateless.stateless_random_uniform_int_v2),
}


def _stream(function: str) -> Callable[..., Any]:
  """gen_random_ops.<function> that draws from a shared stream in active
  graphs (and is TF's own elsewhere)."""
  original = _installed[function]
  kind, leading, draw_stateless = _REPLACED[function]
  names = leading + ("seed", "seed2", "name")

  def draw(*args, **kwargs):
    if id(tf.compat.v1.get_default_graph()) not in _active:
      return original(*args, **kwargs)
    inputs = dict(zip(names, args))
    inputs.update(kwargs)
    seed, seed2 = inputs.get("seed") or 0, inputs.get("seed2") or 0
    name = inputs.get("name")
    if not seed and not seed2:
      # The kernel drew both seeds at random (an unseeded op).
      seed, seed2 = random.getrandbits(63), random.getrandbits(63)
    counter = _counter()
    with tf.name_scope(f"{name or kind}_stream"):
      drawn = counter.read_value()
      values = draw_stateless(
          inputs["shape"], tf.constant([seed], tf.uint64),
          tf.stack([tf.bitcast(drawn, tf.uint64),
                    tf.constant(seed2, tf.uint64)]), _PHILOX,
          **{p: inputs[p] for p in leading[1:]})
      with tf.control_dependencies([drawn]):
        moved = counter.assign_add(
            tf.size(values, out_type=tf.int64) * _COUNTERS_PER_VALUE,
            read_value=False)
    with tf.control_dependencies([moved]):
      return tf.identity(values, name=name or kind)

  return draw


def _install() -> None:
  """Wraps gen_random_ops' four functions once; they pass through unless
  the op is made in a graph that `shared` marks active."""
  with _lock:
    if _installed:
      return
    for function in _REPLACED:
      _installed[function] = getattr(gen_random_ops, function)
      setattr(gen_random_ops, function, _stream(function))


@contextlib.contextmanager
def shared(graph: tf.Graph) -> Iterator[None]:
  """While active, TF1 random ops made in `graph` draw from shared streams."""
  _install()
  _active.add(id(graph))
  try:
    yield
  finally:
    _active.discard(id(graph))


def kernel_state_ops(graph: tf.Graph) -> List[str]:
  """Names of the kernel-state random ops left in `graph` or its functions."""
  found = [op.name for op in graph.get_operations()
           if op.type in KERNEL_STATE_OPS]
  if not graph._functions:  # pylint: disable=protected-access
    return found  # (Serializing the graph costs more than this check.)
  for function in graph.as_graph_def().library.function:
    found.extend(f"{function.signature.name}/{node.name}"
                 for node in function.node_def if node.op in KERNEL_STATE_OPS)
  return found
