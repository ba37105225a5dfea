"""Old import path of `migration.recording_writer` (kept for callers)."""

# pylint: disable=unused-import
from migration.recording_writer import (
    PHASES,
    Settings,
    Runtime,
    read_checkpoint,
    read_losses,
    stack_predictions,
    jsonable,
    serving_inputs,
    record)
