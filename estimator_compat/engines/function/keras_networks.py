"""tf-keras functional and Sequential models that TF1 built otherwise.

Under the Estimator a model_fn ran in a TF1 graph, where tf-keras chose its
graph-mode (v1) Model and Layer classes. The function engine traces model_fn
in a TF2 function, where tf-keras chooses its v2 classes. For layers called
directly and for subclassed models both give the same variables and values
(checked against TF 2.15.1 + tensorflow-estimator 2.15.0), but a graph
network (`tf.keras.Sequential`, or a functional `tf.keras.Model(inputs,
outputs)`) built inside model_fn differs in two ways:

- a random layer in it (`Dropout`, `GaussianNoise`, ...) draws other random
  numbers: the v2 network calls its layers more often while it is built, and
  each call moves a seeded layer's seed;
- a Sequential given no input shape is built on its first call, where TF1
  named its variables under the model's scope (`sequential/dense/kernel`)
  and v2 does not (`dense/kernel`).

Both would train other values or write other checkpoint names with no error,
so such a call goes to the graph engine, which runs tf-keras's v1 classes as
TF 2.15 did. Found on the first trace, before any step runs or file is
written: the deferred build from the frames that create a variable, the
random numbers from the random ops a network's call left in the graph.
"""

import sys
from typing import Any, Dict, List

import tensorflow as tf

from estimator_compat.engines.function.random_streams import KERNEL_STATE_OPS
from estimator_compat.errors import GRAPH_ENGINE_FIX, NeedsGraphEngine

# Where tf-keras builds a Sequential given no input shape, on its first call.
_DEFERRED_BUILD = "_build_graph_network_for_inferred_shape"
# Where a tf-keras graph network runs its layers when it is called.
_NETWORK_CALL = ("functional.py", "_run_internal_graph")
# Enough to reach the Sequential from a variable creator: the layer's build,
# add_weight and the variable creators in between.
_MAX_FRAMES = 80
# Where a tf-keras layer's (or model's) call opens its name scope.
_LAYER_CALL_FILES = ("/engine/base_layer.py", "/engine/base_layer_v1.py")


def note_creation(deferred: Dict[int, Any]) -> None:
  """Records a Sequential being built on its first call, if one is creating
  the variable being made now (id -> the Sequential)."""
  frame = sys._getframe(1)  # pylint: disable=protected-access
  for _ in range(_MAX_FRAMES):
    if frame is None:
      return
    if frame.f_code.co_name == _DEFERRED_BUILD:
      owner = frame.f_locals.get("self")
      deferred[id(owner)] = owner
      return
    frame = frame.f_back


def _outermost_keras_call(frame: Any) -> Any:
  """The outermost tf-keras layer or model whose call is creating a
  variable (from the creating frame outwards), or None."""
  outermost = None
  while frame is not None:
    code = frame.f_code
    if code.co_name == "__call__" and code.co_filename.endswith(
        _LAYER_CALL_FILES):
      outermost = frame.f_locals.get("self", outermost)
    frame = frame.f_back
  return outermost


def note_named_call(roots: Dict[str, int], reused: List[str]) -> None:
  """Records the outermost tf-keras call making a variable: `roots` maps a
  name to the first layer's id; a second layer of that name adds the name
  to `reused` (see check_named_calls).

  In the Estimator's TF1 graph each call of a tf-keras layer or model opened
  a name scope the graph made unique: a second model named `dnn` (a canned
  DNN's model_fn called twice, as neural-structured-learning's adversarial
  regularization does) made its variables under `dnn_1/`. Traced here, its
  absolute name scope is `dnn/` again, so its checkpoint names would differ
  from TF 2.15's with no error.
  """
  layer = _outermost_keras_call(sys._getframe(1))  # pylint: disable=protected-access
  name = getattr(layer, "name", None)
  if name and roots.setdefault(name, id(layer)) != id(layer):
    reused.append(name)


def check_named_calls(reused: List[str]) -> None:
  """NeedsGraphEngine if a second tf-keras layer reused a name (above).

  Raised once the trace is done (raised inside a layer's call, autograph
  would wrap it into another error).
  """
  if reused:
    raise NeedsGraphEngine(
        f"model_fn calls a second tf-keras layer or model named "
        f"{reused[0]!r} that makes variables; the Estimator's TF1 graph "
        f"named its variables under a unique scope ({reused[0]}_1/...), "
        "which the function engine's absolute tf-keras scopes do not "
        f"reproduce. {GRAPH_ENGINE_FIX}")


def _random_op_in_network(graph: tf.Graph) -> Any:
  """The first random op that a tf-keras graph network's call made (a TF1
  one, or the stateless op random_streams made in its place)."""
  for op in graph.get_operations():
    if op.type not in KERNEL_STATE_OPS and not op.type.startswith("StatelessRandom"):
      continue
    for frame in op.traceback:
      if frame.name == _NETWORK_CALL[1] and frame.filename.endswith(
          _NETWORK_CALL[0]):
        return op
  return None


def check(deferred: Dict[int, Any], graph: tf.Graph) -> None:
  """Raises NeedsGraphEngine for a network TF1 built otherwise (module doc).

  Args:
    deferred: the Sequentials built on their first call, from note_creation.
    graph: the traced graph.

  Raises:
    NeedsGraphEngine: a Sequential was given no input shape, or a Sequential
      or functional model called in model_fn draws random numbers.
  """
  for network in deferred.values():
    name = getattr(network, "name", "sequential")
    raise NeedsGraphEngine(
        f"model_fn builds tf.keras.Sequential {name!r} on its first call "
        "(no input shape), where TF1 named its variables under the model's "
        f"scope ({name}/dense/kernel) and a TF2 function does not. "
        f"{GRAPH_ENGINE_FIX}")
  op = _random_op_in_network(graph)
  if op is not None:
    raise NeedsGraphEngine(
        "model_fn calls a tf.keras Sequential or functional model that draws "
        f"random numbers ({op.name}, e.g. a Dropout layer), which tf-keras's "
        "TF1 graph-mode model drew otherwise than a TF2 function does. "
        f"{GRAPH_ENGINE_FIX}")
