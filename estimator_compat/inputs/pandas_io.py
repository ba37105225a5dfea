"""pandas_input_fn: the legacy arguments over a DataFrame (pandas optional)."""

from typing import Any, Callable, Optional

import numpy as np

from estimator_compat.inputs.numpy_io import arrays_input_fn
from estimator_compat.inputs.numpy_io import check_batch_and_epochs
from estimator_compat.inputs.numpy_io import check_shuffle


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
    TypeError: pandas is not installed (as the Estimator raised), or bad
      argument types, with the fix.
    ValueError: bad arguments, with the fix.
  """
  del queue_capacity, num_threads
  try:
    import pandas as pd  # pylint: disable=g-import-not-at-top
  except ImportError as e:
    raise TypeError(
        "pandas_input_fn should not be called without pandas installed. "
        "Fix: pip install pandas") from e
  check_shuffle(shuffle)
  if not isinstance(target_column, str):
    raise TypeError(
        "target_column must be a string type. Fix: name the label column "
        "with a string; a y DataFrame keeps its own column names.")
  if not isinstance(x, pd.DataFrame):
    raise TypeError(f"pandas_input_fn: x must be a DataFrame, got "
                    f"{type(x).__name__}.")
  check_batch_and_epochs("pandas_input_fn", batch_size, num_epochs)
  if y is not None and target_column in x:
    raise ValueError(
        f"Cannot use name {target_column} for target column: DataFrame "
        f"already has a column with that name: {x.columns}. Fix: pass "
        "another target_column.")
  if y is not None and not np.array_equal(x.index, y.index):
    raise ValueError(
        f"Index for x and y are mismatched.\nIndex for x: {x.index}\n"
        f"Index for y: {y.index}\nFix: give x and y the same index (e.g. "
        "y = y.reindex(x.index)).")
  features = {str(column): x[column].to_numpy() for column in x.columns}
  labels, unwrap_y = None, None
  if isinstance(y, pd.DataFrame):
    # Label names may repeat the features' (the Estimator kept them apart).
    labels = {str(column): y[column].to_numpy() for column in y.columns}
  elif y is not None:
    labels, unwrap_y = {target_column: np.asarray(y)}, target_column
  return arrays_input_fn(features, labels, batch_size, num_epochs, shuffle,
                         unwrap_x=None, unwrap_y=unwrap_y)
