"""The errors and warnings every layer shares.

`NeedsGraphEngine` and `UnsupportedOnFunctionEngine` are raised where the
function engine cannot run a program exactly (the default engine then runs
the call on the graph engine); `GRAPH_ENGINE_FIX` is the fix sentence their
messages end with. `GUARD_WARNING` is logged when a train_op does not
advance global_step; a model_fn whose train_op leaves global_step alone on
purpose for some steps adds a tensor or op to `GUARD_EXEMPT_COLLECTION`
and the guard stays off. Imports nothing from the package.
"""

GRAPH_ENGINE_FIX = ("Fix: run this program on the graph engine: "
                    "RunConfig(engine='graph') or ESTIMATOR_COMPAT_ENGINE=graph.")


class UnsupportedOnFunctionEngine(ValueError):
  """A hook needs something only a TF1 Session can give."""


class NeedsGraphEngine(UnsupportedOnFunctionEngine):
  """The program needs a TF1 Session; found before any step ran.

  Raise it only while a call is being set up (input_fn, the trace of the
  model_fn, hooks' begin()), never once a step ran or a file was written:
  the default engine then runs the whole call again on the graph engine
  (logging the reason once), while an explicit engine='function' shows it
  as the error. The message says what needs the Session.
  """


GUARD_WARNING = (
    "train_op did not increase global_step, so training would never reach "
    "`steps`/`max_steps` (the legacy Estimator hung here). estimator_compat "
    "now increments global_step after each step. Fix your model_fn: "
    "optimizer.minimize(loss, global_step="
    "tf.compat.v1.train.get_global_step()).")

# Graph collection: non-empty when the train_op does not advance global_step
# on some steps by design (the BoostedTrees quantile steps, as in
# tensorflow-estimator 2.8); the global-step guard then stays off.
GUARD_EXEMPT_COLLECTION = "estimator_compat_global_step_guard_exempt"
