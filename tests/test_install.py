"""install(), the public names, and the tf-keras routing on import."""

import os
import subprocess
import sys
import textwrap

import tensorflow as tf

import estimator_compat

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LEGACY_NAMES = [
    "Estimator", "EstimatorSpec", "ModeKeys", "RunConfig", "TrainSpec",
    "EvalSpec", "train_and_evaluate", "WarmStartSettings", "VocabInfo",
    "SessionRunHook", "SessionRunArgs", "SessionRunContext",
    "SessionRunValues", "LoggingTensorHook", "StopAtStepHook",
    "NanTensorHook", "NanLossDuringTrainingError", "CheckpointSaverHook",
    "CheckpointSaverListener", "SummarySaverHook", "StepCounterHook",
    "FeedFnHook", "FinalOpsHook", "GlobalStepWaiterHook", "ProfilerHook",
    "Exporter", "inputs", "export",
]


def _run(code):
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
  env.pop("TF_USE_LEGACY_KERAS", None)
  return subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                        capture_output=True, text=True, env=env, timeout=120,
                        check=False)


def test_public_names():
  for name in LEGACY_NAMES:
    assert hasattr(estimator_compat, name), name
  assert estimator_compat.ModeKeys.PREDICT == "infer"
  assert callable(estimator_compat.inputs.numpy_input_fn)
  assert callable(estimator_compat.inputs.pandas_input_fn)
  assert estimator_compat.export.PredictOutput.__name__ == "PredictOutput"
  assert estimator_compat.LoggingTensorHook is (
      tf.compat.v1.train.LoggingTensorHook)


def test_install_makes_tf_estimator_resolve():
  result = _run("""
      import tensorflow as tf
      import estimator_compat
      estimator_compat.install()
      import tensorflow_estimator
      assert tf.estimator.Estimator is estimator_compat.Estimator
      assert tf.compat.v1.estimator.inputs.numpy_input_fn is (
          estimator_compat.inputs.numpy_input_fn)
      assert tf.estimator.inputs.pandas_input_fn is (
          estimator_compat.inputs.pandas_input_fn)
      assert tensorflow_estimator is estimator_compat
      print("ok", tf.keras.__name__)
  """)
  assert result.returncode == 0, result.stderr
  assert result.stdout.split() == ["ok", "tf_keras.api._v2.keras"]


def test_import_routes_tf_keras_and_v1_layers():
  result = _run("""
      import estimator_compat
      import tensorflow as tf
      with tf.Graph().as_default():
        tf.compat.v1.layers.dense(tf.zeros([1, 2]), 3)
        names = [v.op.name for v in tf.compat.v1.global_variables()]
      print(tf.keras.__name__, names)
  """)
  assert result.returncode == 0, result.stderr
  assert "tf_keras" in result.stdout
  assert "dense/kernel" in result.stdout


def test_keras3_already_resolved_raises_with_fix():
  result = _run("""
      import tensorflow as tf
      tf.keras.layers.Dense  # resolves tf.keras to Keras 3
      try:
        import estimator_compat
      except ImportError as e:
        print("ImportError:", e)
  """)
  assert result.returncode == 0, result.stderr
  assert "ImportError: estimator_compat needs tf.keras to be tf-keras" in (
      result.stdout)
  assert "TF_USE_LEGACY_KERAS=1" in result.stdout


def test_tensorflow_imported_first_but_keras_unresolved_is_fine():
  result = _run("""
      import tensorflow as tf
      import estimator_compat
      print(tf.keras.__name__)
  """)
  assert result.returncode == 0, result.stderr
  assert result.stdout.strip() == "tf_keras.api._v2.keras"
