"""One mode of a legacy model_fn, traced once, run as pruned functions.

The model_fn is traced a single time with `tf.compat.v1.wrap_function` (TF1
semantics: no automatic control dependencies), its variables held eagerly by
`VariableCapture` under their legacy names. Each step then runs a function
pruned from that graph to exactly what is fetched, like `Session.run`: an
EVAL model_fn that also builds a train_op does not train, and hooks can fetch
any tensor of the graph, including ones their `begin()` created there.

This module traces and prunes; the loops of many steps in one call are
step_loops.py's `StepLoops`, batched prediction prediction_batches.py's
`PredictionBatches`, both mixed into `TracedModel`.
"""

import contextlib
from typing import Any, Callable, Dict, List, Optional, Tuple

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.eager import wrap_function as wrap_lib
from tensorflow.python.framework import func_graph
from tensorflow.python.training import training_util

from estimator_compat.front import tf_logging as logging
from estimator_compat.engines.function.fetch_keys import (
    LOSS, METRIC_UPDATE, TRAIN_OP, FetchKey, FetchKind)
from estimator_compat.engines.function.fetches import (
    GraphFetcher, as_graph_fetch, depends_on, reached_ops)
from estimator_compat.errors import (GRAPH_ENGINE_FIX, NeedsGraphEngine,
                                     UnsupportedOnFunctionEngine)
from estimator_compat.engines import summary_read_order
from estimator_compat.engines.function import iterator_release
from estimator_compat.engines.function import op_seeds
from estimator_compat.engines.function import outside_variables
from estimator_compat.engines.function import random_streams
from estimator_compat.engines.function import step_reuse
from estimator_compat.engines.function import tables
from estimator_compat.engines.function import tf1_code
from estimator_compat.engines.function.legacy_updates import (
    layer_updates_in_collection)
from estimator_compat.engines.function.python_parts import PythonParts
from estimator_compat.engines.function.prediction_batches import (
    PredictionBatches)
from estimator_compat.engines.function.step_loops import (StepLoops,
                                                          quiet_function)
from estimator_compat.engines.function.variables import VariableCapture
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.front.model_fn_call import ModelSetup, call_model_fn
from estimator_compat.spec import EstimatorSpec

__all__ = ["LOSS", "METRIC_UPDATE", "TRAIN_OP", "TracedModel", "split_spec"]

def split_spec(element_spec: Any):
  """(features spec, labels spec or None) of a dataset element."""
  if isinstance(element_spec, tuple) and len(element_spec) == 2:
    return element_spec
  return element_spec, None


def _nonempty_weight(features) -> tf.Tensor:
  """1.0 if this replica's batch has examples, else 0.0.

  When the input ends unevenly, a distributed dataset hands some replicas an
  empty final batch; its loss must not count in the mean loss.
  """
  first = tf.nest.flatten(features)[0]
  if isinstance(first, tf.SparseTensor):
    rows = first.dense_shape[0]
  else:
    rows = tf.shape(first, out_type=tf.int64)[0]
  return tf.cast(rows > 0, tf.float32)


def _check_random_streams(graph: tf.Graph, mode: str) -> None:
  """Kernel-state random ops left in the trace need the graph engine.

  Steps run through several functions, each with its own kernel, so such an
  op would not continue one stream across steps as in a Session
  (random_streams.py replaces the common ones; these it could not).

  Raises:
    NeedsGraphEngine: such ops are in the traced graph.
  """
  names = random_streams.kernel_state_ops(graph)
  if names:
    shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
    raise NeedsGraphEngine(
        f"The model_fn ({mode}) has random ops whose state lives in their "
        f"kernel ({shown}: in a tf.cond or loop body, or of a kind the "
        "function engine cannot share across its step functions); a TF1 "
        "Session kept one stream per op across steps. "
        f"{GRAPH_ENGINE_FIX}")


def _with_nested_graphs(graph: tf.Graph) -> List[tf.Graph]:
  """`graph` and the body graphs of its control flow (while_v2, cond_v2).

  Those capture what a function called inside them captured (here the input
  iterator's handle) directly.
  """
  graphs, found = [], [graph]
  while found:
    graph = found.pop()
    graphs.append(graph)
    for op in graph.get_operations():
      for name in ("_cond_graph", "_body_graph", "_true_graph", "_false_graph"):
        nested = getattr(op, name, None)
        if nested is not None:
          found.append(nested)
      found.extend(getattr(op, "_branch_graphs", None) or [])
  return graphs


class TracedModel(StepLoops, PredictionBatches):
  """The model_fn of one mode, traced once, run by fetch set.

  Args:
    setup: the Estimator's model setup.
    mode: a ModeKeys value.
    dataset: the input; the step functions read it through an iterator
      inside the graph (no per-step trip through Python).
    build_fn: called inside the trace with the EstimatorSpec; returns the
      named tensors or ops that every step fetches (and may build hooks and
      call their begin() there).
    strategy: a tf.distribute strategy to run the model_fn under, once per
      replica (then `dataset` is its distributed dataset), or None.
    metrics_fn: called on each replica's EstimatorSpec right after model_fn
      returns (under a strategy also with the weight of the replica's batch
      in the mean loss); returns (metric values, update op). `metric_values` then holds
      the first replica's values (v1 metrics aggregate across replicas) and
      `metric_update` the updates of all replicas.
    parts: where the input_fn's result held Python values (or lists), what
      rebuilds it around each Dataset element (python_parts.py); None when
      the element is what model_fn gets.
  """

  def __init__(self, setup: ModelSetup, mode: str, dataset: Any,
               build_fn: Callable[[EstimatorSpec], Dict[str, Any]],
               strategy: Optional[tf.distribute.Strategy] = None,
               metrics_fn: Optional[Callable[..., Any]] = None,
               parts: Optional[PythonParts] = None):
    self._setup = setup
    self._mode = mode
    self._build_fn = build_fn
    self._strategy = strategy
    self._metrics_fn = metrics_fn
    self.metric_values: Dict[str, Any] = {}
    self.metric_update = None
    self.capture = VariableCapture()
    self._parts = parts
    self._has_labels = (parts.has_labels if parts is not None else
                        split_spec(dataset.element_spec)[1] is not None)
    # Unseeded random ops in model_fn are numbered after input_fn's.
    self._input_op_seeds = op_seeds.used_by(dataset)
    # The batches an evaluation or prediction input holds, where tf.data
    # knows it without reading (None: unknown, endless, distributed, or
    # training, which does not ask).
    self.input_batches: Optional[int] = None
    if mode != ModeKeys.TRAIN and isinstance(dataset, tf.data.Dataset):
      cardinality = int(dataset.cardinality())
      self.input_batches = cardinality if cardinality >= 0 else None
    with tf.device("/cpu:0"):
      self._iterator = iter(dataset)
    self.spec: Optional[EstimatorSpec] = None
    self.read_tensor_name: Optional[str] = None
    self.step_after_name: Optional[str] = None
    self._fetches: Dict[str, Any] = {}
    self._input_ops = []
    self._element: Any = None
    # What tf.compat.v1.wrap_function does, minus its variable holder (our
    # VariableCapture creates the variables; the holder's creator breaks
    # tf-keras functional models such as Sequential(input_shape=...)).
    # Under a strategy, its scope is also entered outside the trace: replica
    # threads create variables eagerly (lifted out of the trace), where only
    # the outer scope's creator makes them distributed variables.
    with strategy.scope() if strategy else contextlib.nullcontext(), (
        tf1_code.graph_only_errors(mode)):
      graph = func_graph.func_graph_from_py_func(
          "estimator_model_fn", self._trace, args=(), kwargs={},
          add_control_dependencies=False, collections={})
    self._wrapped = wrap_lib.WrappedFunction(
        graph, variable_holder=wrap_lib.VariableHolder(share_variables=False))
    if mode != ModeKeys.PREDICT:
      _check_random_streams(graph, mode)
    tf1_code.check_savers(graph, mode)
    runner = getattr(build_fn, "runner", None)
    if runner is not None:
      tf1_code.check_hook_train_ops(runner.hooks, graph, self._input_ops)
    self.graph = self._wrapped.graph
    self._table_initializers = tables.initializers(self.graph,
                                                   self._input_ops, mode)
    self._pruned: Dict[Any, Any] = {}
    # TRAIN: the fetch sets whose summary reads were ordered before the
    # step's updates in this trace's graph, in order (see `_function`), and
    # the kept steps of an earlier call, taken only where this call's graph
    # is in the very state it was in when they were made.
    self._ordered: Tuple[Any, ...] = ()
    self._made_at: Dict[Any, Any] = {}
    self._kept_pruned: Dict[Any, Any] = {}
    self._kept_loops: Dict[Any, Any] = {}
    self._loop_keys: Dict[int, Any] = {}
    self._session_runs: Dict[Any, Any] = {}
    self._loops: Dict[Any, Any] = {}
    self._advance_loops: Dict[bool, Any] = {}
    self._batches_loop: Any = None
    self._before_end: Optional[Tuple[tf.Variable, tf.Variable]] = None
    # Every function made from the trace, for release().
    self._functions: List[Any] = []
    # The loops' own helper variables (reset by each loop call).
    self._own_variables: List[tf.Variable] = []
    self._reuse_key = self._steps_key()
    self._adopt(step_reuse.take(self._reuse_key))
    # Where a TF1 session would finalize its graph.
    logging.info("Graph was finalized.")
    self.fetcher = GraphFetcher(self.graph, self.capture.by_name(),
                                self._session_run_function, self._input_ops)

  def _steps_key(self) -> Optional[bytes]:
    """The key under which this trace's steps are kept, or None."""
    if self._strategy is not None or self._table_initializers:
      return None
    names = [f"{key}={getattr(value, 'name', value)}"
             for key, value in sorted(self._fetches.items(), key=str)]
    names += [getattr(v, "name", str(v))
              for v in tf.nest.flatten(self.metric_values)]
    names.append(str(self.read_tensor_name))
    names.append(str(self.step_after_name))
    return step_reuse.digest(self.graph, self._mode, names)

  def _adopt(self, kept: Optional[step_reuse.KeptSteps]) -> None:
    """Takes over an earlier call's steps of the same trace, bound anew."""
    if kept is None:
      return
    kept.bind(self.graph.external_captures)
    if self._mode == ModeKeys.TRAIN:
      self._kept_pruned.update(kept.functions["pruned"])
      self._kept_loops.update(kept.functions["loops"])
    else:
      self._pruned.update(kept.functions["pruned"])
      self._loops.update(kept.functions["loops"])
      self._advance_loops.update(kept.functions["advance"])
      self._batches_loop = kept.functions["batches"].get("loop")
    self._before_end = kept.before_end
    self._own_variables = list(kept.own)
    for table in kept.functions.values():
      for entry in table.values():
        self._functions.append(entry[0] if isinstance(entry, tuple)
                               else entry)

  def _keep(self) -> None:
    """Keeps this trace's steps, unbound, for a later call of the same."""
    if self._reuse_key is None:
      return
    if self._mode == ModeKeys.TRAIN:
      pruned = dict(self._kept_pruned)
      pruned.update((self._made_at[keys], function)
                    for keys, function in self._pruned.items()
                    if keys in self._made_at)
      pruned.update(self._session_runs)
      loops = dict(self._kept_loops)
      loops.update((self._loop_keys[id(loop)], loop)
                   for loop in list(self._loops.values()) +
                   list(self._advance_loops.values())
                   if id(loop) in self._loop_keys)
      tables = {"pruned": pruned, "loops": loops, "advance": {},
                "batches": {}}
    else:
      batches = ({"loop": self._batches_loop} if self._batches_loop
                 else {})
      tables = {"pruned": dict(self._pruned), "loops": dict(self._loops),
                "advance": dict(self._advance_loops), "batches": batches}
    kept = step_reuse.KeptSteps(tables, self.graph.external_captures,
                                self._own_variables)
    kept.before_end = self._before_end
    kept.unbind()
    step_reuse.keep(self._reuse_key, kept)

  def _trace(self):
    graph = tf.compat.v1.get_default_graph()
    strategy = self._strategy
    with contextlib.ExitStack() as stack:
      # model_fn, its metrics and its hooks' begin() compare and hash
      # Tensors, and find v1 optimizers' non-slot variables, as in the
      # Estimator's TF1 graph.
      stack.enter_context(tf1_code.tf1_tensor_equality())
      stack.enter_context(tf1_code.tf1_non_slot_lookup())
      stack.enter_context(tf1_code.tf1_gradients_in_control_flow())
      if strategy is not None:
        # Entered inside the trace, before the variable scope, so that each
        # variable gets one distributed wrapper (feasibility.md, Mirrored 3).
        stack.enter_context(strategy.scope())
        if self._mode == ModeKeys.TRAIN:
          # v1 optimizers scale MEAN losses by 1/replicas, as under the
          # Estimator; without it they sum the replicas' gradients.
          stack.enter_context(strategy._scale_loss_for_estimator_enabled())  # pylint: disable=protected-access
      stack.enter_context(self.capture.scope(self._setup.config.tf_random_seed))
      op_seeds.continue_numbering(graph, self._input_op_seeds)
      stack.enter_context(op_seeds.eager_requests_numbered_in(graph))
      stack.enter_context(random_streams.shared(graph))
      stack.enter_context(tables.own_names())
      stack.enter_context(layer_updates_in_collection())
      global_step = tf.compat.v1.train.get_or_create_global_step()
      # The read tensor the standard hooks look up (TF's helper needs a graph
      # variable; this one is held eagerly).
      with tf.name_scope("global_step/"):
        value = (strategy.extended.read_var(global_step) if strategy
                 else global_step.read_value())
        read = tf.identity(value, name="read_for_hooks")
      graph.add_to_collection(training_util.GLOBAL_STEP_READ_KEY, read)
      self.read_tensor_name = read.name
      # The model consumes the batch only after that read, so hooks see the
      # step before this step's increment (no race, unlike a TF1 session).
      with tf.control_dependencies([read]):
        if strategy is None:
          with tf.device("/cpu:0"):
            # What get_next delivered: where predict_batches feeds its own.
            self._element = self._iterator.get_next()
            element = tf.nest.map_structure(
                lambda t: tf.identity(t) if isinstance(t, tf.Tensor) else t,
                self._element)
        else:
          element = self._iterator.get_next()
      self._input_ops = [
          t.op for t in tf.nest.flatten(element, expand_composites=True)
          if isinstance(t, tf.Tensor)]
      if self._parts is not None:
        # The input_fn's Python values around this step's tensors.
        element = self._parts.rebuild(element)
      features, labels = element if self._has_labels else (element, None)
      labels = labels if self._mode != ModeKeys.PREDICT else None
      # With jit_compile, the model's operations (not the input's, not the
      # hooks') are marked for XLA, which compiles those it supports.
      with (tf.xla.experimental.jit_scope(compile_ops=True)
            if self._setup.config.jit_compile else contextlib.nullcontext()):
        with outside_variables.refused(lambda: self.capture.variables):
          if strategy is None:
            self.spec = call_model_fn(self._setup, features, labels,
                                      self._mode)
            if self._metrics_fn is not None:
              self.metric_values, self.metric_update = self._metrics_fn(
                  self.spec)
          else:
            self.spec = self._call_on_replicas(strategy, features, labels)
      fetches = dict(self._build_fn(self.spec))
      if fetches.get(TRAIN_OP) is not None:
        # The step's global step once its train_op ran (the automatic loop
        # checks that each step moved it by one).
        with tf.control_dependencies([as_graph_fetch(fetches[TRAIN_OP],
                                                     graph)]):
          after = (strategy.extended.read_var(global_step) if strategy
                   else global_step.read_value())
          self.step_after_name = tf.identity(
              after, name="global_step/after_step").name
      fetches[METRIC_UPDATE] = self.metric_update
      if self.spec.loss is not None:
        fetches[LOSS] = self.spec.loss
      # Variables (e.g. train_op=assign_add(...)) as the tensors they read.
      self._fetches = {k: as_graph_fetch(v, graph)
                       for k, v in fetches.items() if v is not None}
      self.metric_values = tf.nest.map_structure(
          lambda v: as_graph_fetch(v, graph), self.metric_values)

  def initialize_tables(self) -> None:
    """Runs the model_fn's lookup-table initializers once, for this call.

    As the Estimator's default Scaffold did (see tables.py): once per call,
    after the restore and before the first step; every step function of
    this trace finds the same tables.
    """
    if self._table_initializers:
      self.prune(self._table_initializers)()

  def _call_on_replicas(self, strategy: tf.distribute.Strategy, features,
                        labels) -> EstimatorSpec:
    """model_fn once per replica; one spec as the Estimator combined them.

    Loss: the replicas' losses reduced as the Estimator reported them (MEAN
    when a v1 optimizer scaled them, else SUM); train_op: all replicas';
    hooks, predictions and the rest: the first replica's.
    """
    specs: Dict[int, EstimatorSpec] = {}
    metrics: Dict[int, Any] = {}

    def replica_fn(replica_features, replica_labels):
      replica = tf.distribute.get_replica_context().replica_id_in_sync_group
      replica = replica if isinstance(replica, int) else int(
          tf.get_static_value(replica))
      spec = call_model_fn(self._setup, replica_features, replica_labels,
                           self._mode)
      specs[replica] = spec
      if self._metrics_fn is not None:
        metrics[replica] = self._metrics_fn(
            spec, _nonempty_weight(replica_features))
      if spec.loss is None:
        return tf.constant(0.0)
      return spec.loss

    losses = strategy.run(replica_fn, args=(features, labels))
    # This worker's first replica (ids are global across multi-worker
    # clusters, so a second worker's first replica is not 0).
    first = specs[min(specs)]
    graph = tf.compat.v1.get_default_graph()
    if getattr(graph, "_is_loss_scaled_by_optimizer", False):
      reduce_op = tf.compat.v1.distribute.get_loss_reduction()
    else:
      reduce_op = tf.distribute.ReduceOp.SUM
    loss = None
    if first.loss is not None:
      loss = strategy.reduce(reduce_op, losses, axis=None)
    train_op = None
    if first.train_op is not None:
      train_op = tf.group(*[specs[i].train_op for i in sorted(specs)])
    if metrics:
      self.metric_values = metrics[min(metrics)][0]
      self.metric_update = tf.group(*[metrics[i][1] for i in sorted(metrics)])
    return first._replace(loss=loss, train_op=train_op)

  def _lookup(self, key: FetchKey):
    try:
      if key.kind is FetchKind.OPERATION:
        return self.graph.get_operation_by_name(key.name)
      return self.graph.get_tensor_by_name(key.name)
    except KeyError:
      raise UnsupportedOnFunctionEngine(
          f"A hook asked for {key.name!r}, which is not in the model's graph. "
          f"{GRAPH_ENGINE_FIX}") from None

  def _call_time_inputs(self, fetches: Any):
    """(placeholders, closures) of the values `fetches` need at each call.

    Collective ops under a strategy take a fresh instance key per call
    (`FuncGraph.capture_call_time_value`); a pruned function must take them
    as inputs and get `closure()` at each call, as tf.function does. Only
    the keys its own collectives use: each `closure()` call takes the next
    key, and under multi-worker training every worker must take the same
    keys in the same order, so a function one task runs alone (a hook's
    `session.run` on the chief) must take none.
    """
    captures = self.graph._function_captures  # pylint: disable=protected-access
    needed = reached_ops(tf.nest.flatten(fetches, expand_composites=True))
    placeholders, closures = [], []
    for key, internal in captures.by_ref_internal.items():
      inputs = tf.nest.flatten(internal)
      if any(t.op in needed for t in inputs):
        placeholders.extend(inputs)
        closures.append(captures.by_ref_external[key])
    return placeholders, closures

  def _prune_wrapped(self, feeds: Any, fetches: Any) -> Any:
    pruned = self._wrapped.prune(feeds, fetches)
    self._functions.append(pruned)
    return pruned

  def _loop_function(self, python_function: Callable[..., Any]) -> Any:
    function = quiet_function(python_function, autograph=False)
    self._functions.append(function)
    return function

  def release(self) -> None:
    """Lets the input iterator go now that the call is over.

    Every function traced from the model captured the iterator's resource
    handle, and TensorFlow's function graphs are reference cycles: without
    this, the iterator (and the threads its input pipeline runs, four for a
    numpy_input_fn) lived until Python's cycle collector next ran a full
    pass, so a process calling train/evaluate/predict in a loop grew by a
    few OS threads per call (issue 28). The functions are not called again.
    The iterator itself is dropped on a background thread
    (iterator_release.py): its teardown waits for the pipeline's threads.
    """
    self._keep()
    concrete = [self._wrapped]
    for function in self._functions:
      if isinstance(function, list):
        function.clear()
      elif hasattr(function, "_list_all_concrete_functions"):
        concrete += function._list_all_concrete_functions()  # pylint: disable=protected-access
      else:
        concrete.append(function)
    graphs = []
    for function in concrete:
      function._captured_inputs = []  # pylint: disable=protected-access
      graphs += _with_nested_graphs(function.graph)
    for graph in graphs:
      captures = graph.function_captures
      captures.clear()
      captures._cached_by_val_capture_tuples = []  # pylint: disable=protected-access
    self._functions = []
    self._pruned.clear()
    self._kept_pruned.clear()
    self._kept_loops.clear()
    self._session_runs.clear()
    self._loops.clear()
    self._advance_loops.clear()
    self._batches_loop = None
    self._element = None
    holder = [self._iterator]
    self._iterator = None
    iterator_release.let_go(holder)

  def prune(self, fetches: Any) -> Callable[[], Any]:
    """A function of no arguments computing `fetches` (graph elements)."""
    placeholders, closures = self._call_time_inputs(fetches)
    pruned = self._prune_wrapped(placeholders, fetches)
    if not closures:
      return pruned

    def function():
      return pruned(*[t for c in closures for t in c()])

    return function

  def _function(self, keys: Tuple[str, ...]):
    """The step fetching every step's outputs plus `keys`; takes no args."""
    function = self._pruned.get(keys)
    if function is None:
      fetches = dict(self._fetches)
      fetched = {key: self._lookup(key) for key in keys}
      fetches.update(fetched)
      if self._strategy is None and TRAIN_OP in fetches:
        # The summaries' variable reads before the step's updates (G16).
        # This adds control inputs to the graph that every later pruned
        # function of this trace has too (where it runs those updates).
        if summary_read_order.reads_before_updates(
            fetches[TRAIN_OP], summary_read_order.summary_ops(fetched)):
          self._ordered += (keys,)
      # An earlier call's step for these keys, pruned when its graph had
      # the same control inputs as this one has now, is the same function.
      made_at = (keys, self._ordered)
      function = self._kept_pruned.pop(made_at, None)
      if function is None:
        function = self.prune(fetches)
      self._pruned[keys] = function
      self._made_at[keys] = made_at
    return function

  def _session_run_function(self, fetches: List[Any]) -> Callable[[], Any]:
    """`prune(fetches)` for a hook's session.run (GraphFetcher caches it).

    In TRAIN an earlier call's function is taken where the graph was in the
    same state (see `_function`).
    """
    made_at = (("\0session_run",) + tuple(
        (isinstance(f, tf.Operation), f.name) for f in fetches), self._ordered)
    function = self._kept_pruned.pop(made_at, None)
    if function is None:
      function = self.prune(fetches)
    self._session_runs[made_at] = function
    return function

  def _kept_loop(self, key: Any, step_keys: Tuple[Any, ...]) -> Any:
    """TRAIN: a kept loop `key` over the steps of `step_keys`, or None.

    Taken only where each of those steps was pruned when the graph was in
    the state its step function of this call was pruned in (`_function`).
    """
    made_at = (key,) + tuple(self._made_at[keys] for keys in step_keys)
    loop = self._kept_loops.pop(made_at, None)
    if loop is not None:
      self._loop_keys[id(loop)] = made_at
    return loop

  def _made_loop(self, key: Any, step_keys: Tuple[Any, ...],
                 loop: Any) -> None:
    """TRAIN: notes what the new loop `key` runs, for `_keep`."""
    self._loop_keys[id(loop)] = (key,) + tuple(
        self._made_at[keys] for keys in step_keys)

  def run_without_input(self, fetches: Dict[str, Any]) -> Dict[str, Any]:
    """Evaluates graph tensors that depend on variables only (no input).

    Raises:
      ValueError: a fetch depends on the input batch.
    """
    try:
      needed = depends_on(tf.nest.flatten(fetches, expand_composites=True),
                          self._input_ops)
      if needed is not None:
        raise ValueError(f"{needed.name} reads the input batch.")
      key = ("\0without_input",) + tuple(
          t.name for t in tf.nest.flatten(fetches, expand_composites=True))
      function = self._pruned.get(key)
      if function is None:
        function = self._prune_wrapped([], fetches)
        self._pruned[key] = function
    except ValueError as e:
      raise ValueError(
          "An eval metric value depends on the input batch, so it cannot be "
          "read after the evaluation loop. Fix: compute metric values from "
          "metric variables (tf.compat.v1.metrics.*), or use the graph engine "
          "(RunConfig(engine='graph')).") from e
    return function()
