"""Old import path of `migration.recording_reader` (kept for callers)."""

# pylint: disable=unused-import
from migration.recording_reader import (
    Recording)
