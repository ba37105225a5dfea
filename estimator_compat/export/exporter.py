"""The base class of exporters (`tf.estimator.Exporter`)."""

import abc
from typing import Any, Dict


class Exporter(abc.ABC):
  """Base class of exporters run after evaluations (`EvalSpec.exporters`)."""

  @property
  @abc.abstractmethod
  def name(self) -> str:
    """Directory name under model_dir/export/."""

  @abc.abstractmethod
  def export(self, estimator: Any, export_path: str,
             checkpoint_path: str, eval_result: Dict[str, Any],
             is_the_final_export: bool) -> Any:
    """Exports the model; returns what train_and_evaluate reports."""
