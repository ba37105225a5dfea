"""The function engine's loops of many steps in one call, over a TracedModel.

`StepLoops` is the part of TracedModel (traced_model.py) that runs steps:
`step` (N steps, the last fetching what hooks asked for), `repeat`
(evaluation's metric updates), `advance` (training's automatic loop, which
checks each step's global_step and loss), and what ran of a call whose input
ended. `steps_in_order` chains the steps so each one's record is written
before the next starts.
"""

from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import tensorflow as tf

from estimator_compat.engines.function.fetch_keys import (
    LOSS, FetchKey, FetchKind, is_variable)


def quiet_function(python_function: Callable[..., Any],
                   autograph: bool = True) -> Any:
  """tf.function of a loop made once per call of a mode.

  Each train() traces its loop once, by design; TensorFlow's warning about
  frequent retracing (a log line the Estimator never printed) would appear
  after a few train() calls.
  """
  function = tf.function(python_function, autograph=autograph)
  function._omit_frequent_tracing_warning = True  # pylint: disable=protected-access
  return function


def steps_in_order(num_steps: tf.Tensor, run_step: Callable[[], Any],
                   record: Callable[[tf.Tensor, Any], List[Any]],
                   reset: Any) -> tf.Tensor:
  """In a function: `num_steps` steps, each recorded before the next starts.

  TensorFlow orders stateful ops within one loop iteration only, so without
  this chain a step whose input ended could fail the call before the
  previous step's record was written. Here the first step starts after
  `reset`, and each step after the previous one's `record(steps_done,
  outputs)` ops (run once the step's outputs exist).

  Returns:
    The number of steps run, once the last record is written.
  """
  with tf.control_dependencies([reset]):
    start = tf.identity(tf.constant(0, tf.int64))

  def one_step(done):
    with tf.control_dependencies([done]):
      outputs = run_step()
    done += 1
    with tf.control_dependencies(
        [t for t in tf.nest.flatten(outputs) if t is not None]):
      written = record(done, outputs)
    with tf.control_dependencies(written):
      return tf.identity(done)

  return tf.while_loop(lambda done: done < num_steps, one_step, (start,))


class StepLoops:
  """TracedModel's loops of steps (mixed into TracedModel).

  Uses the trace's `_function`, `_loop_function`, `_fetches`, `_loops`,
  `_advance_loops`, `_before_end`, `_own_variables` and `step_after_name`,
  and in TRAIN `_kept_loop` / `_made_loop` (loops kept across calls).
  """

  _before_end: Optional[Tuple[tf.Variable, tf.Variable]]
  _kept_loop: Callable[..., Any]
  _made_loop: Callable[..., None]

  def step(self, keys: Iterable[str] = (), num_steps: int = 1
          ) -> Dict[str, Any]:
    """Runs `num_steps` steps on the next batches in one call.

    The first num_steps - 1 steps fetch only what every step fetches; the
    last one also fetches `keys` and its outputs are returned.

    Raises:
      tf.errors.OutOfRangeError: the input is exhausted.
    """
    keys = tuple(sorted(k for k in keys if not is_variable(k)))
    if num_steps == 1:
      return self._function(keys)()
    loop = self._loops.get(keys)
    if loop is None:
      plain, fetching = self._function(()), self._function(keys)
      loop = self._kept_loop(("step", keys), ((), keys))
    if loop is None:
      ran, loss = self._before_end_variables()

      def run_loop(n):
        done = steps_in_order(
            n - 1, plain,
            lambda done, outputs: [ran.assign(done),
                                   loss.assign(outputs[LOSS])],
            ran.assign(0))
        with tf.control_dependencies([done]):
          return fetching()

      loop = self._loop_function(run_loop)
      self._made_loop(("step", keys), ((), keys), loop)
    self._loops[keys] = loop
    return loop(tf.constant(num_steps, tf.int64))

  def _before_end_variables(self) -> Tuple[tf.Variable, tf.Variable]:
    """(steps run, last loss): what the training loops record per step."""
    if self._before_end is None:
      self._before_end = (
          tf.Variable(0, dtype=tf.int64, trainable=False),
          tf.Variable(tf.zeros([], self._fetches[LOSS].dtype),
                      shape=tf.TensorShape(None), trainable=False))
      self._own_variables.extend(self._before_end)
    return self._before_end

  def steps_before_end(self) -> Tuple[int, Any]:
    """What ran of a call whose input ended (its step() raised).

    Only for a `step()` of more than one step or an `advance()` that raised
    OutOfRangeError: the steps of that call that ran before the end, and the
    loss of the last of them (None when none ran).
    """
    ran, loss = self._before_end_variables()
    ran = int(ran.numpy())
    return ran, (loss.numpy() if ran else None)

  def repeat(self, num_steps: int) -> int:
    """Runs up to `num_steps` steps fetching only what every step fetches.

    In one call (evaluation: the metric updates).

    Returns:
      How many steps ran: `num_steps`, or fewer when the input ended (the
      steps before the end ran).
    """
    loop = self._loops.get("repeat")
    if loop is None:
      plain = self._function(())
      with tf.init_scope():
        ran = tf.Variable(0, dtype=tf.int64, trainable=False)
      self._own_variables.append(ran)

      def run_plain(n):
        # Counted only once the step's outputs exist: a step whose input
        # ended raises before it is counted.
        return steps_in_order(n, plain,
                              lambda done, unused: [ran.assign(done)],
                              ran.assign(0))

      loop = (self._loop_function(run_plain), ran)
      self._loops["repeat"] = loop
    function, ran = loop
    try:
      function(tf.constant(num_steps, tf.int64))
    except tf.errors.OutOfRangeError:
      return int(ran.numpy())
    return num_steps

  def advance(self, num_steps: int, step: int,
              check_nan: bool) -> Tuple[int, bool, Any, bool]:
    """Runs up to `num_steps` training steps fetching what every step fetches.

    In one call; after each step it checks that the step moved the global
    step from `step` by exactly one more (read once its train_op ran) and
    (when `check_nan`) that its loss is not NaN, and stops after the first
    that fails.

    Returns:
      (steps run, whether the last loss is NaN, the last loss, whether every
      step moved global_step by one).

    Raises:
      tf.errors.OutOfRangeError: the input ended (the steps before it ran,
        each moving global_step by one).
    """
    loop = self._advance_loops.get(check_nan)
    moved_key = FetchKey(FetchKind.TENSOR, self.step_after_name)
    if loop is None:
      plain = self._function((moved_key,))
      loop = self._kept_loop(("advance", check_nan), ((moved_key,),))
    if loop is None:
      loss_dtype = self._fetches[LOSS].dtype
      ran_so_far, last_loss = self._before_end_variables()

      def run_plain(n, start):

        def going(ran, nan, regular, loss):
          del loss
          return tf.logical_and(ran < n, tf.logical_and(
              regular, tf.logical_not(nan)))

        def one_step(ran, nan, regular, loss):
          del nan, regular
          # After the previous step's record (see steps_in_order).
          with tf.control_dependencies([loss]):
            outputs = plain()
          ran += 1
          # Recorded once the step ran (its outputs exist), for
          # steps_before_end().
          with tf.control_dependencies(
              [t for t in tf.nest.flatten(outputs) if t is not None]):
            written = [ran_so_far.assign(ran),
                       last_loss.assign(outputs[LOSS])]
          with tf.control_dependencies(written):
            loss = tf.reshape(outputs[LOSS], [])
          nan = tf.math.is_nan(loss) if check_nan else tf.constant(False)
          moved = tf.cast(outputs[moved_key], tf.int64)
          return ran, nan, tf.equal(moved, start + ran), loss

        with tf.control_dependencies([ran_so_far.assign(0)]):
          no_loss = tf.identity(tf.zeros([], loss_dtype))
        return tf.while_loop(
            going, one_step,
            (tf.constant(0, tf.int64), tf.constant(False), tf.constant(True),
             no_loss))

      loop = self._loop_function(run_plain)
      self._made_loop(("advance", check_nan), ((moved_key,),), loop)
    self._advance_loops[check_nan] = loop
    ran, nan, regular, loss = loop(tf.constant(num_steps, tf.int64),
                                   tf.constant(step, tf.int64))
    return int(ran), bool(nan), loss.numpy(), bool(regular)
