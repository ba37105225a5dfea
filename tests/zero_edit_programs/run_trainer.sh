#!/bin/sh
# How a scheduler starts the trainer: the `python` on PATH, nothing else.
set -e
python "$(dirname "$0")/absl_trainer.py" "$@"
