"""Module paths of tensorflow-estimator 2.15 that other packages import.

tensorflow-lattice 2.0's canned estimators (run unchanged against TF 2.15
and here, by hand) import `canned.optimizers` for
`get_optimizer_instance_v2` and call the estimator module's
`maybe_overwrite_model_dir_and_session_config`; before these were
registered, `import tensorflow_lattice` failed after `install()` with
ImportError.
"""

import os

import pytest
import tensorflow as tf

import estimator_compat as tfe


def test_canned_optimizers_resolve_names_as_tf215():
  tfe.install()
  from tensorflow_estimator.python.estimator.canned import optimizers  # pylint: disable=g-import-not-at-top
  v1 = optimizers.get_optimizer_instance("Adagrad", learning_rate=0.1)
  assert isinstance(v1, tf.compat.v1.train.AdagradOptimizer)
  v2 = optimizers.get_optimizer_instance_v2("Adam", learning_rate=0.1)
  assert isinstance(v2, tf.keras.optimizers.legacy.Adam)
  assert float(v2.learning_rate) == pytest.approx(0.1)


def test_maybe_overwrite_model_dir_and_session_config(tmp_path):
  tfe.install()
  from tensorflow_estimator.python.estimator import estimator as estimator_lib  # pylint: disable=g-import-not-at-top
  overwrite = estimator_lib.maybe_overwrite_model_dir_and_session_config
  config = overwrite(None, str(tmp_path))
  assert isinstance(config, tfe.RunConfig)
  assert config.model_dir == str(tmp_path)
  assert config.session_config is not None
  kept = overwrite(tfe.RunConfig(model_dir=str(tmp_path / "a")), None)
  assert kept.model_dir == str(tmp_path / "a")
  temporary = overwrite(tfe.RunConfig(), None)
  assert os.path.isdir(temporary.model_dir)
  with pytest.raises(ValueError, match="`model_dir` are set both in "
                     "constructor and `RunConfig`, but with different"):
    overwrite(tfe.RunConfig(model_dir=str(tmp_path / "a")),
              str(tmp_path / "b"))
  with pytest.raises(ValueError):
    overwrite("not a config", None)


def test_an_empty_model_dir_argument_means_none_as_in_tf215(tmp_path):
  tfe.install()
  from tensorflow_estimator.python.estimator import estimator as estimator_lib  # pylint: disable=g-import-not-at-top
  overwrite = estimator_lib.maybe_overwrite_model_dir_and_session_config
  kept = overwrite(tfe.RunConfig(model_dir=str(tmp_path)), "")
  assert kept.model_dir == str(tmp_path)
  assert os.path.isdir(overwrite(None, "").model_dir)
