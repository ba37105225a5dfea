"""Runs one pytest file under `bazel test` (py_test needs a Python main)."""

import os
import sys

import pytest

if __name__ == "__main__":
  here = os.path.dirname(os.path.abspath(__file__))
  root = os.path.dirname(here)
  os.chdir(root)
  files = [os.path.join("tests", name) for name in sys.argv[1:]]
  sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", *files]))
