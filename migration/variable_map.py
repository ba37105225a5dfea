"""Legacy variable names for a TF2 rewrite's variables, both ways.

A migration check compares the old run's variables, named as the Estimator's
checkpoints name them (`dense/kernel`, `dense/kernel/Adam`, `global_step`),
with a rewrite's. `VariableMap` pairs them:

- model variables: by the map the user gives (legacy name -> the new
  variable's name), else automatically: by name once each side's names are
  stripped of ':0' and of a leading model scope, else by shape where each
  shape occurs once on both sides. Anything left over, or a shape that two
  variables share, needs the explicit map (the error lists them).
- optimizer state, for tf-keras Adam and SGD: `X/Adam` and `X/Adam_1` are
  Adam's `m` and `v` of X; `global_step` is `iterations`; v1 Adam's
  `beta1_power`/`beta2_power` are beta ** (iterations + 1), derived (they
  are not variables in tf-keras).

Values then move both ways under legacy names: `load` assigns a legacy
checkpoint to the new variables, `values` reads them back by legacy name.
"""

import re
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np
import tensorflow as tf

_OPTIMIZER_STATE = re.compile(r"/(Adam(_1)?|Momentum|Adagrad|RMSProp(_1)?|"
                              r"Ftrl(_1)?)$")
_DERIVED = ("beta1_power", "beta2_power")


def new_name(variable: Any) -> str:
  """A new variable's name without ':0'."""
  return variable.name.split(":")[0]


def _stripped(name: str) -> str:
  """A model-scoped Keras name as a v1 layer names it: no model prefix."""
  parts = name.split("/")
  return "/".join(parts[1:]) if len(parts) > 2 else name


def is_optimizer_state(legacy: str) -> bool:
  return legacy in _DERIVED or legacy == "global_step" or bool(
      _OPTIMIZER_STATE.search(legacy))


class VariableMap:
  """Legacy name -> a way to read and write the rewrite's value.

  Args:
    structure: the old recording's variables ({name, shape, dtype,
      trainable} each).
    variables: the rewrite's model variables.
    optimizer: its tf-keras optimizer, or None.
    explicit: legacy name -> new variable name, for what automatic pairing
      cannot decide.

  Raises:
    ValueError: a legacy model variable pairs with none or several new ones.
  """

  def __init__(self, structure: Sequence[Dict[str, Any]],
               variables: Sequence[tf.Variable], optimizer: Any = None,
               explicit: Optional[Dict[str, str]] = None):
    self._variables = list(variables)
    self._optimizer = optimizer
    self.model: Dict[str, tf.Variable] = {}
    legacy = [v for v in structure if not is_optimizer_state(v["name"])]
    self._pair(legacy, dict(explicit or {}))
    self.unmapped_new = [v for v in self._variables
                         if not any(v is m for m in self.model.values())]
    self._readers: Dict[str, Callable[[], np.ndarray]] = {}
    self._writers: Dict[str, Callable[[np.ndarray], None]] = {}
    for name, variable in self.model.items():
      self._readers[name] = variable.numpy
      self._writers[name] = variable.assign
    self._optimizer_state(structure)

  def _pair(self, legacy: List[Dict[str, Any]], explicit: Dict[str, str]):
    by_name = {new_name(v): v for v in self._variables}
    by_stripped = {}
    for v in self._variables:
      by_stripped.setdefault(_stripped(new_name(v)), []).append(v)
    left = []
    for entry in legacy:
      name = entry["name"]
      if name in explicit:
        if explicit[name] not in by_name:
          raise ValueError(
              f"variable_map maps {name!r} to {explicit[name]!r}, which the "
              f"rewrite does not have. Its variables: {sorted(by_name)}.")
        self.model[name] = by_name[explicit[name]]
      elif name in by_name:
        self.model[name] = by_name[name]
      elif len(by_stripped.get(name, [])) == 1:
        self.model[name] = by_stripped[name][0]
      else:
        left.append(entry)
    taken = {id(v) for v in self.model.values()}
    free = [v for v in self._variables if id(v) not in taken]
    ambiguous = []
    for entry in left:
      shape = list(entry["shape"])
      same_old = [e for e in left if list(e["shape"]) == shape]
      same_new = [v for v in free if v.shape.as_list() == shape]
      if len(same_old) == 1 and len(same_new) == 1:
        self.model[entry["name"]] = same_new[0]
      elif same_new:
        ambiguous.append(entry["name"])
    if ambiguous:
      raise ValueError(
          f"Cannot pair the legacy variables {ambiguous} with the rewrite's "
          "by name or by a shape only one variable has. Fix: pass "
          "variable_map={legacy_name: new_variable_name, ...}; the rewrite's "
          f"variables are {[new_name(v) for v in free]}.")

  def _optimizer_state(self, structure: Sequence[Dict[str, Any]]) -> None:
    optimizer = self._optimizer
    if optimizer is None:
      return
    names = {v["name"] for v in structure}
    iterations = optimizer.iterations
    if "global_step" in names:
      self._readers["global_step"] = lambda: np.int64(iterations.numpy())
      self._writers["global_step"] = lambda value: iterations.assign(
          np.asarray(value).astype(iterations.dtype.as_numpy_dtype))
    config = optimizer.get_config()
    for legacy, key in (("beta1_power", "beta_1"), ("beta2_power", "beta_2")):
      if legacy in names and key in config:
        beta = float(config[key])
        self._readers[legacy] = (
            lambda beta=beta: np.float32(beta ** (int(iterations.numpy()) + 1)))
        self._writers[legacy] = lambda value: None  # Derived from iterations.
    slots = {"Adam": "m", "Adam_1": "v"}
    for legacy, variable in self.model.items():
      for suffix, slot in slots.items():
        slot_name = f"{legacy}/{suffix}"
        if slot_name in names and variable.trainable:
          self._readers[slot_name] = (
              lambda variable=variable, slot=slot:
              self._slot(variable, slot).numpy())
          self._writers[slot_name] = (
              lambda value, variable=variable, slot=slot:
              self._slot(variable, slot).assign(value))

  def _slot(self, variable: tf.Variable, slot: str) -> tf.Variable:
    """tf-keras Adam's `m`/`v` of a variable (built before the map)."""
    optimizer = self._optimizer
    if hasattr(optimizer, "get_slot"):  # tf.keras.optimizers.legacy.*
      return optimizer.get_slot(variable, slot)
    wanted = f"{slot}/{new_name(variable)}"
    for candidate in optimizer.variables:
      if new_name(candidate) == wanted:
        return candidate
    raise ValueError(f"The rewrite's optimizer has no {wanted!r}. Fix: "
                     "build it (optimizer.build(trainable_variables)) "
                     "before the check, or pass variable_map.")

  def names(self) -> List[str]:
    return sorted(self._readers)

  def structure(self) -> List[Dict[str, Any]]:
    """The rewrite's variables as the old recording describes its own."""
    described = []
    for name in self.names():
      variable = self.model.get(name)
      value = np.asarray(self._readers[name]())
      described.append({
          "name": name, "shape": list(value.shape),
          "dtype": (variable.dtype.base_dtype.name if variable is not None
                    else value.dtype.name),
          "trainable": bool(variable is not None and variable.trainable)})
    for variable in self.unmapped_new:
      described.append({"name": new_name(variable),
                        "shape": variable.shape.as_list(),
                        "dtype": variable.dtype.base_dtype.name,
                        "trainable": bool(variable.trainable)})
    return sorted(described, key=lambda v: v["name"])

  def values(self) -> Dict[str, np.ndarray]:
    """Every mapped value by legacy name."""
    return {name: np.asarray(read()) for name, read in
            sorted(self._readers.items())}

  def load(self, checkpoint: str) -> None:
    """Assigns a legacy checkpoint's values to the mapped new variables."""
    reader = tf.train.load_checkpoint(checkpoint)
    for name, write in self._writers.items():
      if reader.has_tensor(name):
        write(reader.get_tensor(name))

  def gradients_by_name(self, gradients: Sequence[Any],
                        variables: Sequence[tf.Variable]
                       ) -> Dict[str, np.ndarray]:
    legacy = {id(v): name for name, v in self.model.items()}
    return {legacy[id(v)]: np.asarray(g) for g, v in zip(gradients, variables)
            if g is not None and id(v) in legacy}
