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
      # As in TF 2.15, `tensorflow_estimator.estimator` is the TF1 namespace.
      assert tensorflow_estimator.estimator is tf.compat.v1.estimator
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


def test_install_makes_the_real_module_paths_importable():
  result = _run("""
      import tensorflow as tf
      import estimator_compat as ec
      ec.install()
      from tensorflow_estimator.python.estimator import estimator as est_lib
      from tensorflow_estimator.python.estimator import model_fn as model_fn_lib
      from tensorflow_estimator.python.estimator import run_config
      from tensorflow_estimator.python.estimator import training
      from tensorflow_estimator.python.estimator import exporter
      from tensorflow_estimator.python.estimator import estimator_lib
      from tensorflow_estimator.python.estimator.export import export
      from tensorflow_estimator.python.estimator.export import export_lib
      from tensorflow_estimator.python.estimator.export import export_output
      from tensorflow_estimator.python.estimator.inputs import numpy_io
      from tensorflow_estimator.python.estimator.inputs import pandas_io
      from tensorflow_estimator.python.estimator.inputs import inputs
      from tensorflow_estimator.python.estimator.hooks import hooks
      from tensorflow_estimator.python.estimator.hooks import session_run_hook
      from tensorflow_estimator.python.estimator.mode_keys import ModeKeys
      import tensorflow_estimator.python.estimator.util
      import tensorflow_estimator as te
      from tensorflow_estimator.python.estimator.api._v1 import estimator as v1
      from tensorflow_estimator.python.estimator.api._v2 import estimator as v2
      import tensorflow_estimator.estimator.export as te_export
      assert est_lib.Estimator is est_lib.EstimatorV2 is ec.Estimator
      assert est_lib.WarmStartSettings is ec.WarmStartSettings
      assert model_fn_lib.EstimatorSpec is ec.EstimatorSpec
      assert model_fn_lib.ModeKeys is ModeKeys is ec.ModeKeys
      assert model_fn_lib.LOSS_METRIC_KEY == "loss"
      assert run_config.RunConfig is ec.RunConfig
      assert run_config.TaskType.CHIEF == "chief"
      assert training.TrainSpec is ec.TrainSpec
      assert training.train_and_evaluate is ec.train_and_evaluate
      assert exporter.LatestExporter is ec.LatestExporter
      assert estimator_lib.RunConfig is ec.RunConfig
      assert export.ServingInputReceiver is ec.export.ServingInputReceiver
      assert export.SINGLE_FEATURE_DEFAULT_NAME == "feature"
      assert export_lib.PredictOutput is ec.export.PredictOutput
      # TensorFlow's map, which the Estimator's export_lib re-exported.
      assert export_lib.EXPORT_TAG_MAP[ModeKeys.PREDICT] == ["serve"]
      assert export_lib.EXPORT_TAG_MAP[ModeKeys.EVAL] == ["eval"]
      supervised = ec.export.supervised
      for name in ("SupervisedInputReceiver", "UnsupervisedInputReceiver",
                   "build_raw_supervised_input_receiver_fn",
                   "build_supervised_input_receiver_fn_from_input_fn"):
        assert getattr(export, name) is getattr(supervised, name), name
        assert getattr(export_lib, name) is getattr(supervised, name), name
        assert not hasattr(tf.estimator.export, name), name  # As the real.
      assert (tf.estimator.experimental.build_raw_supervised_input_receiver_fn
              is supervised.build_raw_supervised_input_receiver_fn)
      # The TF1 namespace's canned names differ; the others are shared.
      assert tf.compat.v1.estimator.experimental is ec.v1.experimental
      assert (tf.compat.v1.estimator.experimental.InMemoryEvaluatorHook is
              tf.estimator.experimental.InMemoryEvaluatorHook)
      from tensorflow_estimator.estimator.experimental import (
          build_raw_supervised_input_receiver_fn)
      assert export_output.RegressionOutput is ec.export.RegressionOutput
      assert numpy_io.numpy_input_fn is ec.inputs.numpy_input_fn
      assert pandas_io.pandas_input_fn is ec.inputs.pandas_input_fn
      assert inputs.numpy_input_fn is ec.inputs.numpy_input_fn
      assert session_run_hook.SessionRunHook is ec.SessionRunHook
      assert v2 is ec and te.estimator is v1
      assert v1 is tf.compat.v1.estimator and v1.Estimator is ec.Estimator
      assert te_export is ec.export
      assert te.python.estimator.model_fn is model_fn_lib
      est_lib.ModeKeys.TRAIN
      print("ok")
  """)
  assert result.returncode == 0, result.stderr
  assert result.stdout.split() == ["ok"]


# The tensorflow.* paths of the Estimator's API trees that TF 2.15 imported as
# modules (checked there by importing each; `tensorflow._api.v2.estimator`
# and the TF2 trees' `tpu` did not import).
_V2_TREES = ("tensorflow", "tensorflow.compat.v2",
             "tensorflow.compat.v1.compat.v2", "tensorflow.compat.v2.compat.v2",
             "tensorflow._api.v2.compat.v2",
             "tensorflow._api.v2.compat.v1.compat.v2",
             "tensorflow._api.v2.compat.v2.compat.v2")
_V1_TREES = ("tensorflow.compat.v1", "tensorflow.compat.v1.compat.v1",
             "tensorflow.compat.v2.compat.v1", "tensorflow._api.v2.compat.v1",
             "tensorflow._api.v2.compat.v1.compat.v1",
             "tensorflow._api.v2.compat.v2.compat.v1")


def test_install_makes_the_tensorflow_estimator_paths_modules():
  result = _run(f"""
      import importlib
      import sys
      import estimator_compat as ec
      ec.install()
      import tensorflow as tf
      import tensorflow.compat.v1.estimator as est
      from tensorflow.compat.v1.estimator import EstimatorSpec
      from tensorflow.compat.v2.estimator import Estimator
      from tensorflow.compat.v1.estimator.tpu import TPUEstimator
      from tensorflow.compat.v1.estimator.inputs import numpy_input_fn
      from tensorflow.estimator.export import ServingInputReceiver
      from tensorflow.python.estimator.model_fn import EstimatorSpec as Spec
      from tensorflow.python.estimator.canned import dnn
      assert est is ec.v1 is tf.compat.v1.estimator
      assert EstimatorSpec is Spec is ec.EstimatorSpec
      assert Estimator is ec.Estimator and TPUEstimator is ec.tpu.TPUEstimator
      assert numpy_input_fn is ec.inputs.numpy_input_fn
      assert ServingInputReceiver is ec.export.ServingInputReceiver
      assert dnn.DNNClassifierV2 is ec.canned.dnn.DNNClassifierV2
      for trees, namespace in (({_V2_TREES!r}, ec), ({_V1_TREES!r}, ec.v1)):
        for tree in trees:
          module = importlib.import_module(tree + ".estimator")
          assert module is namespace, tree
          for sub in ("experimental", "export", "inputs", "tpu",
                      "tpu.experimental"):
            sub_module = importlib.import_module(f"{{tree}}.estimator.{{sub}}")
            expected = namespace
            for part in sub.split("."):
              expected = getattr(expected, part)
            assert sub_module is expected, (tree, sub)
      value = tf
      for part in ("compat", "v1", "compat", "v2", "estimator"):
        value = getattr(value, part)
      assert value is ec
      # One copy of each module: none loaded again under a tensorflow.* name.
      copies = [name for name, module in sys.modules.items()
                if name.startswith("tensorflow.") and
                getattr(module, "__file__", "") and
                "estimator_compat" in module.__file__ and
                module not in (ec, ec.v1, ec.tpu, ec.tpu.experimental,
                               ec.inputs, ec.export, ec.experimental,
                               ec.v1.experimental)]
      assert not copies, copies
      print("ok")
  """)
  assert result.returncode == 0, result.stderr
  assert result.stdout.split() == ["ok"]


def test_module_paths_lack_what_we_do_not_implement():
  result = _run("""
      import tensorflow as tf
      import estimator_compat
      estimator_compat.install()
      from tensorflow_estimator.python.estimator import model_fn, hooks
      assert not hasattr(model_fn, "_TPUEstimatorSpec")
      try:
        model_fn.verify_model_fn_args
      except AttributeError as e:
        print("AttributeError:", e)
      try:
        from tensorflow_estimator.python.estimator.hooks.hooks import (
            _StopAtCheckpointStepHook)
      except ImportError as e:
        print("ImportError")
      try:
        import tensorflow_estimator.python.estimator.canned.saved_model_estimator
      except ModuleNotFoundError:
        print("ModuleNotFoundError")
      try:  # keras_lib is ours: tf-keras's function reaches it
        tf.keras.estimator.model_to_estimator(keras_model=None)
      except ValueError as e:
        print("ValueError", "keras_model" in str(e))
      estimator_compat.install()  # Twice is harmless.
      import tensorflow_estimator.python.estimator.model_fn as again
      assert again is model_fn
      assert not hasattr(estimator_compat, "python")
  """)
  assert result.returncode == 0, result.stderr
  lines = result.stdout.splitlines()
  assert lines[0].startswith("AttributeError: module "
                             "'tensorflow_estimator.python.estimator.model_fn'"
                             " has no attribute 'verify_model_fn_args'")
  assert "estimator_compat does not implement it" in lines[0]
  assert lines[1:] == ["ImportError", "ModuleNotFoundError",
                       "ValueError True"]


def test_importing_the_package_loads_tensorflow_only_when_used():
  # So that `python -m estimator_compat.train --bad_flag` answers before
  # TensorFlow loads, and the install() function is never shadowed by its
  # module.
  result = _run("""
      import sys
      import estimator_compat
      print("tensorflow" in sys.modules, sorted(
          m for m in sys.modules if m.startswith("estimator_compat")))
      from estimator_compat import *
      public = estimator_compat.__all__
      print(callable(estimator_compat.install), "tensorflow" in sys.modules,
            TrainSpec.__module__, set(public) <= set(dir(estimator_compat)))
  """)
  assert result.returncode == 0, result.stderr
  first, second = result.stdout.splitlines()
  # (tf_versions: the supported range, no TensorFlow import.)
  assert first == ("False ['estimator_compat', 'estimator_compat.api', "
                   "'estimator_compat.api.legacy_keras', "
                   "'estimator_compat.api.tf_versions']")
  assert second == "True True estimator_compat.training True"


def test_a_flag_error_needs_no_tensorflow():
  result = subprocess.run(
      [sys.executable, "-X", "importtime", "-m", "estimator_compat.train",
       "--train_steps=0"], capture_output=True, text=True, timeout=120,
      env=dict(os.environ, PYTHONPATH=ROOT), check=False)
  assert result.returncode != 0
  assert "--train_steps=0: 0 is not a positive integer" in result.stderr
  assert "| tensorflow\n" not in result.stderr  # never imported


def test_v1_namespace_shares_names_and_holds_its_own(monkeypatch):
  from estimator_compat import v1  # pylint: disable=g-import-not-at-top
  assert v1.Estimator is estimator_compat.Estimator
  assert v1.inputs is estimator_compat.inputs
  monkeypatch.setitem(v1.V1_PUBLIC, "Probe", "estimator_compat.spec:EstimatorSpec")
  monkeypatch.delitem(vars(v1), "Probe", raising=False)
  assert v1.Probe is estimator_compat.EstimatorSpec
  monkeypatch.delitem(vars(v1), "Probe")
  try:
    v1.NotAName  # pylint: disable=pointless-statement
  except AttributeError as error:
    assert "tf.compat.v1.estimator" in str(error)
  else:
    raise AssertionError("v1.NotAName resolved")
  result = _run("""
      import tensorflow as tf
      import estimator_compat
      estimator_compat.install()
      from estimator_compat import v1
      from tensorflow_estimator.python.estimator.api._v1 import estimator
      assert tf.compat.v1.estimator is v1 is estimator
      assert tf.compat.v1.estimator.Estimator is tf.estimator.Estimator
      print("ok")
  """)
  assert result.returncode == 0, result.stderr


def test_export_eval_output_is_tensorflows_class():
  # tf.estimator.export.EvalOutput was TensorFlow's own class in TF 2.15.
  from tensorflow.python.saved_model.model_utils import export_output  # pylint: disable=g-direct-tensorflow-import,g-import-not-at-top
  assert estimator_compat.export.EvalOutput is export_output.EvalOutput


def test_estimator_lib_holds_the_tf1_canned_names():
  # TF 2.15's estimator_lib module (the Estimator's own tests import it)
  # held the TF1 canned estimators, heads, TPUEstimator and the early
  # stopping hooks.
  result = _run("""
      import tensorflow as tf
      import estimator_compat
      estimator_compat.install()
      from tensorflow_estimator.python.estimator import estimator_lib as lib
      assert lib.DNNClassifier is tf.compat.v1.estimator.DNNClassifier
      assert lib.LinearRegressor is tf.compat.v1.estimator.LinearRegressor
      assert lib.BinaryClassHead is tf.estimator.BinaryClassHead
      assert lib.TPUEstimator is tf.compat.v1.estimator.tpu.TPUEstimator
      assert lib.stop_if_no_decrease_hook is (
          tf.estimator.experimental.stop_if_no_decrease_hook)
      assert lib.dnn_logit_fn_builder is (
          tf.compat.v1.estimator.experimental.dnn_logit_fn_builder)
      print("ok")
  """)
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stdout.split() == ["ok"]
