"""Which engine a call runs on, by name (estimator_compat/engines)."""

import pytest
import tensorflow as tf

from estimator_compat import engines
from estimator_compat.engines import init_errors


def test_the_config_wins_over_the_environment(monkeypatch):
  monkeypatch.setenv(engines.ENV_VAR, "function")
  assert engines.resolve_engine_name("graph") == "graph"
  assert engines.resolve_engine_name() == "function"
  assert engines.engine_chosen() and engines.engine_chosen("graph")
  monkeypatch.delenv(engines.ENV_VAR)
  assert engines.resolve_engine_name() == engines.DEFAULT_ENGINE
  assert not engines.engine_chosen()


def test_an_unknown_engine_names_where_it_came_from(monkeypatch):
  with pytest.raises(ValueError) as raised:
    engines.resolve_engine_name("eager")
  assert str(raised.value) == (
      "Unknown engine 'eager' (from RunConfig(engine=...)). Fix: use one of "
      "('graph', 'function').")
  monkeypatch.setenv(engines.ENV_VAR, "tf1")
  with pytest.raises(ValueError, match="'tf1' \\(from ESTIMATOR_COMPAT_ENGINE"
                     "\\)"):
    engines.resolve_engine_name()


def test_each_name_gives_its_engine_module():
  assert engines.get_engine("function").__name__ == (
      "estimator_compat.engines.function.loops")
  assert engines.get_engine("graph").__name__ == (
      "estimator_compat.engines.graph")


def test_an_uninitialized_iterator_at_setup_gets_the_fix():
  error = tf.errors.FailedPreconditionError(
      None, None, "GetNext() failed because the iterator has not been "
      "initialized.")
  explained = init_errors.explained(error)
  assert type(explained) is tf.errors.FailedPreconditionError
  assert explained.message.startswith("GetNext() failed because")
  assert explained.message.endswith(init_errors.INITIALIZER_READS_INPUT_FIX)
  # Once only; other errors are left as they are.
  assert init_errors.explained(explained) is explained
  other = tf.errors.FailedPreconditionError(None, None, "uninitialized value")
  assert init_errors.explained(other) is other
  aborted = tf.errors.AbortedError(
      None, None, "iterator has not been initialized")
  assert init_errors.explained(aborted) is aborted
