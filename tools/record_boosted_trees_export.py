"""Records tensorflow-estimator 2.8's SavedModel export of the BoostedTrees
estimators (run in the TF 2.8.4 venv of record_boosted_trees_goldens.sh).

For each model below: trains it on the goldens' tiny data, exports it with
a parsing serving input receiver and with a raw one, and writes to
tests/boosted_trees_goldens/export/<model>/:

- ckpt/: the trained checkpoint the export was made from (the test exports
  from it again here);
- signatures.json: per export, every signature's method name and its
  inputs' and outputs' keys, dtypes and shapes;
- outputs.npz: every signature's outputs on the data's 40 examples (as
  serialized tf.Examples, or raw tensors), keyed
  `<export>/<signature>/<output key>`.

  PYTHONPATH=. ~/.cache/estimator-compat/tf28-venv/bin/python \
      tools/record_boosted_trees_export.py
"""

import json
import os
import shutil
import sys
import tempfile

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
# pylint: disable=g-import-not-at-top,wrong-import-position
from tests.golden_programs import _boosted_trees_data as data

OUT = os.path.join(os.path.dirname(__file__), "..", "tests",
                   "boosted_trees_goldens", "export")
MULTICLASS_LABELS = np.digitize(
    data.TARGET, np.quantile(data.TARGET, [1 / 3, 2 / 3])).astype(np.int64)


def categorical_columns(fc):
  """A bucketized, a raw numeric and a categorical column (equality
  splits on the class id)."""
  return [
      fc.bucketized_column(fc.numeric_column("age"), [2.0, 4.0, 6.0, 8.0]),
      fc.numeric_column("fare"),
      fc.categorical_column_with_vocabulary_list(
          "cls", ["first", "second", "third"]),
  ]


def models():
  """name -> (estimator builder, columns, labels)."""
  fc = tf.feature_column
  return {
      "classifier": (lambda d: tf.estimator.BoostedTreesClassifier(
          data.columns(fc), n_batches_per_layer=4, model_dir=d, n_trees=3,
          max_depth=2, learning_rate=0.3, l2_regularization=0.01,
          center_bias=True, quantile_sketch_epsilon=0.1,
          config=data.config(tf)), data.columns(fc), data.BINARY),
      "regressor": (lambda d: tf.estimator.BoostedTreesRegressor(
          categorical_columns(fc), n_batches_per_layer=2, model_dir=d,
          n_trees=3, max_depth=3, learning_rate=0.3,
          quantile_sketch_epsilon=0.1, config=data.config(tf)),
                    categorical_columns(fc), data.TARGET),
      "multiclass": (lambda d: tf.estimator.BoostedTreesClassifier(
          data.bucketized_columns(fc), n_batches_per_layer=2, model_dir=d,
          n_classes=3, n_trees=2, max_depth=2, learning_rate=0.3,
          l2_regularization=0.1, config=data.config(tf)),
                     data.bucketized_columns(fc), MULTICLASS_LABELS),
  }


def serialized_examples() -> np.ndarray:
  """The 40 examples as serialized tf.Examples."""
  examples = []
  for i in range(data.N):
    feature = {
        "age": tf.train.Feature(float_list=tf.train.FloatList(
            value=[data.FEATURES["age"][i, 0]])),
        "fare": tf.train.Feature(float_list=tf.train.FloatList(
            value=[data.FEATURES["fare"][i, 0]])),
        "cls": tf.train.Feature(bytes_list=tf.train.BytesList(
            value=[data.FEATURES["cls"][i, 0].encode()])),
    }
    examples.append(tf.train.Example(features=tf.train.Features(
        feature=feature)).SerializeToString())
  return np.array(examples, dtype=object)


def raw_receiver_fn():
  """A raw receiver of `[None, 1]` age, fare and cls tensors."""

  def receiver_fn():
    features = {
        "age": tf.compat.v1.placeholder(tf.float32, [None, 1], name="age"),
        "fare": tf.compat.v1.placeholder(tf.float32, [None, 1], name="fare"),
        "cls": tf.compat.v1.placeholder(tf.string, [None, 1], name="cls"),
    }
    return tf.estimator.export.ServingInputReceiver(features, features)

  return receiver_fn


def describe(signature) -> dict:
  def tensors(infos):
    return {key: {"dtype": tf.dtypes.as_dtype(info.dtype).name,
                  "shape": (None if info.tensor_shape.unknown_rank else
                            [d.size for d in info.tensor_shape.dim])}
            for key, info in sorted(infos.items())}
  return {"method_name": signature.method_name,
          "inputs": tensors(signature.inputs),
          "outputs": tensors(signature.outputs)}


def run_export(export_dir, feeds_by_key, outputs, prefix) -> dict:
  """Signatures of the SavedModel and their outputs on the feeds."""
  described = {}
  with tf.Graph().as_default(), tf.compat.v1.Session() as session:
    meta = tf.compat.v1.saved_model.load(session, ["serve"], export_dir)
    for name, signature in sorted(meta.signature_def.items()):
      described[name] = describe(signature)
      feed = {signature.inputs[key].name: feeds_by_key[key]
              for key in signature.inputs}
      keys = sorted(signature.outputs)
      values = session.run([signature.outputs[k].name for k in keys], feed)
      for key, value in zip(keys, values):
        outputs[f"{prefix}/{name}/{key}"] = value
  return described


def record(name, build, columns, labels):
  folder = os.path.join(OUT, name)
  shutil.rmtree(folder, ignore_errors=True)
  os.makedirs(folder)
  model_dir = tempfile.mkdtemp()
  estimator = build(model_dir)
  train_input_fn, _, predict_input_fn = data.input_fns(labels)
  estimator.train(train_input_fn, max_steps=1000)
  checkpoint = estimator.latest_checkpoint()
  ckpt_dir = os.path.join(folder, "ckpt")
  os.makedirs(ckpt_dir)
  for f in (tf.io.gfile.glob(checkpoint + ".index")
            + tf.io.gfile.glob(checkpoint + ".data-*")):
    shutil.copy(f, ckpt_dir)
  with open(os.path.join(ckpt_dir, "checkpoint"), "w") as f:
    base = os.path.basename(checkpoint)
    f.write(f'model_checkpoint_path: "{base}"\n'
            f'all_model_checkpoint_paths: "{base}"\n')
  parsing = tf.estimator.export.build_parsing_serving_input_receiver_fn(
      tf.feature_column.make_parse_example_spec(columns))
  outputs, signatures = {}, {}
  exported = estimator.export_saved_model(os.path.join(model_dir, "parsing"),
                                          parsing)
  signatures["parsing"] = run_export(
      exported, {"inputs": serialized_examples(),
                 "examples": serialized_examples()}, outputs, "parsing")
  exported = estimator.export_saved_model(os.path.join(model_dir, "raw"),
                                          raw_receiver_fn())
  signatures["raw"] = run_export(exported, data.FEATURES, outputs, "raw")
  predictions = list(estimator.predict(predict_input_fn))
  for key in predictions[0]:
    outputs[f"predict/{key}"] = np.stack([p[key] for p in predictions])
  with open(os.path.join(folder, "signatures.json"), "w") as f:
    json.dump({"tensorflow": tf.__version__,
               "global_step": int(estimator.get_variable_value(
                   "global_step")),
               "signatures": signatures}, f, indent=1, sort_keys=True)
  np.savez(os.path.join(folder, "outputs.npz"), **outputs)
  shutil.rmtree(model_dir)
  print(name, "step", checkpoint, sorted(signatures["parsing"]))


def main():
  wanted = sys.argv[1:]
  for name, (build, columns, labels) in models().items():
    if not wanted or name in wanted:
      record(name, build, columns, labels)


if __name__ == "__main__":
  main()
