"""What `tf.estimator.experimental` and its TF1 twin hold, and what not yet.

Both namespaces of TF 2.15 share the hooks and helpers below; they differ
only in canned-estimator names: the TF2 one has the RNN estimators, the
TF1 one the logit builders and KMeans; LinearSDCA is in both. Names not
offered yet name their family, so the error can say why.
"""

import importlib
from typing import Any, Callable, Dict, List, Optional

# Public name -> the module defining it; the same object in both namespaces.
OFFERED: Dict[str, str] = {
    "InMemoryEvaluatorHook": "estimator_compat.in_training.in_memory_evaluator",
    "LinearSDCA": "estimator_compat.canned.linear",
    "build_raw_supervised_input_receiver_fn":
        "estimator_compat.export.supervised",
    "call_logit_fn": "estimator_compat.canned.logit_fn",
    "make_early_stopping_hook": "estimator_compat.in_training.early_stopping",
    "make_stop_at_checkpoint_step_hook":
        "estimator_compat.in_training.checkpoint_step_hook",
    "stop_if_higher_hook": "estimator_compat.in_training.early_stopping",
    "stop_if_lower_hook": "estimator_compat.in_training.early_stopping",
    "stop_if_no_decrease_hook": "estimator_compat.in_training.early_stopping",
    "stop_if_no_increase_hook": "estimator_compat.in_training.early_stopping",
}

# TF 2.15's canned-estimator names of each namespace -> what they belong to.
NOT_OFFERED_V2: Dict[str, str] = {}
NOT_OFFERED_V1: Dict[str, str] = {}
# Names only the TF2 namespace has: the canned RNN estimators.
OFFERED_V2_ONLY: Dict[str, str] = {
    "RNNClassifier": "estimator_compat.canned.rnn",
    "RNNEstimator": "estimator_compat.canned.rnn",
}
# Names only the TF1 namespace has: the canned estimators' logit builders,
# and KMeans.
OFFERED_V1_ONLY: Dict[str, str] = {
    "KMeans": "estimator_compat.canned.kmeans",
    "dnn_logit_fn_builder": "estimator_compat.canned.dnn",
    "linear_logit_fn_builder": "estimator_compat.canned.linear",
}


def namespace_getattr(namespace: str, not_offered: Dict[str, str],
                      module_globals: Dict[str, Any],
                      offered: Optional[Dict[str, str]] = None
                      ) -> Callable[[str], Any]:
  """A PEP 562 `__getattr__` loading offered names on first use.

  Args:
    namespace: the API path, for error messages.
    not_offered: TF 2.15 names of this namespace we lack, with their family.
    module_globals: the namespace module's globals, where a loaded name is
      kept.
    offered: the names this namespace offers -> their modules (default
      OFFERED).
  """
  offered = OFFERED if offered is None else offered

  def module_getattr(name: str) -> Any:
    module_name = offered.get(name)
    if module_name is None:
      if name in not_offered:
        raise AttributeError(
            f"module {namespace!r} has no attribute {name!r}: it belongs to "
            f"{not_offered[name]}, which estimator_compat does not offer yet. "
            "Fix: build the model with a custom model_fn, or keep this "
            "program on TF 2.15's tensorflow-estimator for now.")
      raise AttributeError(f"module {namespace!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    module_globals[name] = value
    return value

  return module_getattr


def namespace_dir() -> List[str]:
  return sorted(set(OFFERED) | set(OFFERED_V2_ONLY))


def namespace_dir_v1() -> List[str]:
  return sorted(set(OFFERED) | set(OFFERED_V1_ONLY))
