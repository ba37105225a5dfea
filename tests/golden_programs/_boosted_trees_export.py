"""The BoostedTrees SavedModel goldens' models, serving inputs and readers.

Shared by tools/record_boosted_trees_export.py (tensorflow-estimator 2.8 on
TF 2.8.4) and tests/test_boosted_trees_export.py (here): three models
trained on the goldens' tiny data, exported with a parsing and a raw
serving input receiver, every signature described and run on the 40
examples.
"""

import numpy as np

from tests.golden_programs import _boosted_trees_data as data

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


def models(tf):
  """name -> (estimator builder of a model_dir, columns, labels)."""
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


def serialized_examples(tf) -> np.ndarray:
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


def parsing_receiver_fn(tf, columns):
  return tf.estimator.export.build_parsing_serving_input_receiver_fn(
      tf.feature_column.make_parse_example_spec(columns))


def raw_receiver_fn(tf):
  """A raw receiver of `[None, 1]` age, fare and cls tensors."""

  def receiver_fn():
    features = {
        "age": tf.compat.v1.placeholder(tf.float32, [None, 1], name="age"),
        "fare": tf.compat.v1.placeholder(tf.float32, [None, 1], name="fare"),
        "cls": tf.compat.v1.placeholder(tf.string, [None, 1], name="cls"),
    }
    return tf.estimator.export.ServingInputReceiver(features, features)

  return receiver_fn


def feeds(tf, export_name: str):
  """Each signature input key's values on the 40 examples."""
  if export_name == "raw":
    return dict(data.FEATURES)
  return {"inputs": serialized_examples(tf),
          "examples": serialized_examples(tf)}


def describe(tf, signature) -> dict:
  """A SignatureDef's method name and its inputs' and outputs' keys,
  dtypes and shapes."""
  def tensors(infos):
    return {key: {"dtype": tf.dtypes.as_dtype(info.dtype).name,
                  "shape": (None if info.tensor_shape.unknown_rank else
                            [d.size for d in info.tensor_shape.dim])}
            for key, info in sorted(infos.items())}
  return {"method_name": signature.method_name,
          "inputs": tensors(signature.inputs),
          "outputs": tensors(signature.outputs)}


def run_export(tf, export_dir, feeds_by_key, outputs, prefix) -> dict:
  """Describes the SavedModel's signatures and puts their outputs on the
  feeds in `outputs` under `<prefix>/<signature>/<output key>`."""
  described = {}
  with tf.Graph().as_default(), tf.compat.v1.Session() as session:
    meta = tf.compat.v1.saved_model.load(session, ["serve"], export_dir)
    for name, signature in sorted(meta.signature_def.items()):
      described[name] = describe(tf, signature)
      feed = {signature.inputs[key].name: feeds_by_key[key]
              for key in signature.inputs}
      keys = sorted(signature.outputs)
      values = session.run([signature.outputs[k].name for k in keys], feed)
      for key, value in zip(keys, values):
        outputs[f"{prefix}/{name}/{key}"] = value
  return described
