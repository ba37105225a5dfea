"""Whole legacy programs, in the shape public samples have, run unchanged."""
