"""The keys of a step's extra fetches: what kind of graph element, which one.

A hook's SessionRunArgs name variables, operations and tensors; predict()
fetches each prediction by position. The traced step returns its outputs in
a dict, so each key is still a string (sortable beside the step's own keys
such as "loss"), but it carries its kind and name: nothing parses a prefix.
"""

import enum

# The names of what every step of a mode fetches, beside the hooks' keys.
LOSS = "__loss__"
TRAIN_OP = "__train_op__"
METRIC_UPDATE = "__metric_update__"


class FetchKind(enum.Enum):
  """What a fetch key stands for."""
  VARIABLE = "var"  # read before the step, as a TF1 session read it
  OPERATION = "op"
  TENSOR = "tensor"
  PREDICTION = "prediction"  # by position in the predictions dict


class FetchKey(str):
  """A fetch key: `kind` and `name`, spelled "<kind>:<name>" as a string."""

  kind: FetchKind
  name: str

  def __new__(cls, kind: FetchKind, name: str) -> "FetchKey":
    key = super().__new__(cls, f"{kind.value}:{name}")
    key.kind = kind
    key.name = name
    return key

  def __getnewargs__(self):
    return (self.kind, self.name)


def is_variable(key: str) -> bool:
  """Whether `key` fetches a variable (read outside the traced step)."""
  return isinstance(key, FetchKey) and key.kind is FetchKind.VARIABLE
