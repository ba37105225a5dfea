"""How many steps or batches one automatic call runs."""


class CallSizer:
  """The most steps per automatic call: about `seconds` of work.

  Starts at `first` steps and follows the measured time per step, growing
  at most 4x per call, never past `most`. Only time-based cadences (checked
  at call boundaries) see where calls end.
  """

  def __init__(self, seconds: float = 1.0, first: int = 10,
               most: int = 1000):
    self._seconds = seconds
    self._limit = first
    self._most = most

  def limit(self) -> int:
    return self._limit

  def record(self, steps: int, seconds: float) -> None:
    """After a call of `steps` steps that took `seconds`."""
    if steps <= 0:
      return
    fits = int(self._seconds * steps / max(seconds, 1e-9))
    self._limit = max(1, min(self._most, 4 * self._limit, fits))
