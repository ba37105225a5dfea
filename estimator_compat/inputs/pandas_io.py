"""pandas_input_fn: the legacy arguments over a DataFrame (pandas optional)."""

from typing import Any, Callable, Optional

import numpy as np

from estimator_compat.inputs.numpy_io import arrays_input_fn


def pandas_input_fn(x: Any,
                    y: Any = None,
                    batch_size: int = 128,
                    num_epochs: Optional[int] = 1,
                    shuffle: Optional[bool] = None,
                    queue_capacity: int = 1000,
                    num_threads: int = 1,
                    target_column: str = "target") -> Callable[[], Any]:
  """Returns an input_fn that feeds a pandas DataFrame to a model.

  Features are the DataFrame's columns (the index is dropped, as in the
  legacy function); labels are `y`, a Series or a DataFrame.

  Raises:
    ImportError: pandas is not installed (pip install estimator-compat[pandas]).
    TypeError / ValueError: bad arguments, with the fix.
  """
  del queue_capacity, num_threads
  try:
    import pandas as pd  # pylint: disable=g-import-not-at-top
  except ImportError as e:
    raise ImportError(
        "pandas_input_fn needs pandas. Fix: pip install pandas") from e
  if not isinstance(x, pd.DataFrame):
    raise TypeError(f"pandas_input_fn: x must be a DataFrame, got "
                    f"{type(x).__name__}.")
  if not isinstance(shuffle, bool):
    raise ValueError(
        f"pandas_input_fn: shuffle must be True or False, got {shuffle!r}. "
        "Fix: pass shuffle=True for training, shuffle=False for eval/predict.")
  if y is not None and target_column in x.columns:
    raise ValueError(
        f"pandas_input_fn: target_column {target_column!r} is already a "
        "column of x. Fix: pass another target_column.")
  if y is not None and not np.array_equal(x.index, y.index):
    raise ValueError("pandas_input_fn: x and y must have the same index.")
  features = {str(column): x[column].to_numpy() for column in x.columns}
  labels, unwrap_y = None, None
  if isinstance(y, pd.DataFrame):
    labels = {str(column): y[column].to_numpy() for column in y.columns}
  elif y is not None:
    labels, unwrap_y = {target_column: np.asarray(y)}, target_column
  return arrays_input_fn(features, labels, batch_size, num_epochs, shuffle,
                         unwrap_x=None, unwrap_y=unwrap_y)
