"""Old import path of `estimator_compat.export.exporters` (kept for callers)."""

# pylint: disable=unused-import
from estimator_compat.export.exporters import (
    LatestExporter,
    FinalExporter,
    BestExporter)
