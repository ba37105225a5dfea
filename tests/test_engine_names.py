"""Which engine a call runs on, by name (front/configuration.py resolves the
name, estimator_compat/engines gives its module)."""

import pytest
import tensorflow as tf

from estimator_compat import engines
from estimator_compat.engines import init_errors
from estimator_compat.front import configuration


def test_the_config_wins_over_the_environment(monkeypatch):
  monkeypatch.setenv(configuration.ENGINE_ENV, "function")
  assert configuration.engine_name("graph") == "graph"
  assert configuration.engine_name() == "function"
  assert configuration.engine_chosen() and configuration.engine_chosen("graph")
  monkeypatch.delenv(configuration.ENGINE_ENV)
  assert configuration.engine_name() == configuration.DEFAULT_ENGINE
  assert not configuration.engine_chosen()


def test_an_unknown_engine_names_where_it_came_from(monkeypatch):
  with pytest.raises(ValueError) as raised:
    configuration.engine_name("eager")
  assert str(raised.value) == (
      "Unknown engine 'eager' (from RunConfig(engine=...)). Fix: use one of "
      "('graph', 'function').")
  monkeypatch.setenv(configuration.ENGINE_ENV, "tf1")
  with pytest.raises(ValueError, match="'tf1' \\(from ESTIMATOR_COMPAT_ENGINE"
                     "\\)"):
    configuration.engine_name()


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
