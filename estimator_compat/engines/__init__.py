"""Engines run one call of a mode (train, evaluate, predict) for the front."""
