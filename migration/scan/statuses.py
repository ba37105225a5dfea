"""The status of a canonical name, from estimator_compat's registry."""

from typing import Dict, Optional, Tuple

from estimator_compat.api import api_status
from estimator_compat.api import api_status_tf1

Status = api_status.Status

# Canonical prefixes of the Estimator API namespaces, and which API each is.
_NAMESPACES = (
    (("tf", "estimator"), api_status.V2),
    (("tf", "compat", "v1", "estimator"), api_status.V1),
    (("tf", "compat", "v2", "estimator"), api_status.V2),
)


def _lookup(chain: Tuple[str, ...], tf1_code: bool
            ) -> Optional[Tuple[int, Status]]:
  for prefix, namespace in _NAMESPACES:
    if chain[:len(prefix)] == prefix:
      found = api_status.api_status(namespace, chain[len(prefix):])
      return found and (found[0] + len(prefix), found[1])
  if chain[0] == "tensorflow_estimator":
    found = api_status.package_status(chain[1:])
    return found and (found[0] + 1, found[1])
  if chain[0] == "tf":
    found = api_status_tf1.tf_status(chain[1:], tf1_code)
    return found and (found[0] + 1, found[1])
  return None


class StatusLookup:
  """Answers (symbol, Status) for canonical chains, remembering answers."""

  def __init__(self):
    self._answers: Dict[Tuple[Tuple[str, ...], bool],
                        Optional[Tuple[str, Status]]] = {}

  def find(self, canonical: str, tf1_code: bool = False
           ) -> Optional[Tuple[str, Status]]:
    """The symbol a canonical chain uses and its status.

    Args:
      canonical: e.g. "tf.estimator.ModeKeys.TRAIN".
      tf1_code: see `api_status_tf1.tf_status`.

    Returns:
      (symbol, Status), e.g. ("tf.estimator.ModeKeys", supported); None for
      a chain that is no finding (a namespace, or a TensorFlow name that
      exists and is not one of the Estimator-related APIs).
    """
    chain = tuple(canonical.split("."))
    key = (chain, tf1_code)
    if key not in self._answers:
      found = _lookup(chain, tf1_code)
      self._answers[key] = found and (".".join(chain[:found[0]]), found[1])
    return self._answers[key]

  def is_tf1_only(self, canonical: str) -> bool:
    """Whether a `tf.` chain is a TF1 name TensorFlow 2 moved to compat.v1."""
    chain = tuple(canonical.split("."))
    if len(chain) < 2 or chain[0] != "tf" or chain[1] in ("contrib",
                                                          "compat"):
      return False
    found = self.find(canonical)
    return bool(found and found[1].status == api_status.TF_REMOVED and
                found[1].replacement.startswith("tf.compat.v1."))

