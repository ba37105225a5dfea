"""Wide & deep on census-shaped data, as TensorFlow's TF1 tutorial wrote it.

The shape of the wide_deep census sample: CSV lines parsed with
`tf.decode_csv`, base columns (numeric, vocabulary list, hash bucket,
bucketized), crossed columns in the wide part, embeddings and indicators in
the deep part, `tf.estimator.DNNLinearCombinedClassifier` with
dnn_hidden_units=[100, 75, 50, 25] and a RunConfig without GPUs, trained and
evaluated in rounds. The downloaded census CSVs are replaced by synthetic
rows written to the model_dir's parent (no network). Run unchanged:

  python wide_deep_tutorial.py --train_epochs=2 --epochs_per_eval=1
"""

import argparse
import os
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

parser = argparse.ArgumentParser()
parser.add_argument("--model_dir", default=None)
parser.add_argument("--train_epochs", default=4, type=int)
parser.add_argument("--epochs_per_eval", default=2, type=int)
parser.add_argument("--batch_size", default=40, type=int)

_CSV_COLUMNS = ["age", "education", "occupation", "hours_per_week",
                "income_bracket"]
_CSV_COLUMN_DEFAULTS = [[0], [""], [""], [0], [""]]
_EDUCATION = ["Bachelors", "HS-grad", "Masters", "Doctorate", "Some-college"]
_OCCUPATIONS = ["Tech-support", "Sales", "Exec-managerial", "Craft-repair",
                "Farming-fishing", "Prof-specialty"]


def write_data(path, rows, seed):
  rng = np.random.RandomState(seed)
  with open(path, "w") as f:
    for _ in range(rows):
      age = rng.randint(18, 80)
      education = rng.randint(len(_EDUCATION))
      occupation = rng.randint(len(_OCCUPATIONS))
      hours = rng.randint(10, 70)
      rich = age / 80.0 + education / 5.0 + hours / 70.0 + rng.normal(
          scale=0.3) > 1.4
      f.write(f"{age},{_EDUCATION[education]},{_OCCUPATIONS[occupation]},"
              f"{hours},{'>50K' if rich else '<=50K'}\n")


def build_model_columns():
  age = tf.feature_column.numeric_column("age")
  hours_per_week = tf.feature_column.numeric_column("hours_per_week")
  education = tf.feature_column.categorical_column_with_vocabulary_list(
      "education", _EDUCATION)
  occupation = tf.feature_column.categorical_column_with_hash_bucket(
      "occupation", hash_bucket_size=100)
  age_buckets = tf.feature_column.bucketized_column(
      age, boundaries=[18, 25, 30, 35, 40, 45, 50, 55, 60, 65])
  base_columns = [education, occupation, age_buckets]
  crossed_columns = [
      tf.feature_column.crossed_column(["education", "occupation"],
                                       hash_bucket_size=100),
      tf.feature_column.crossed_column(
          [age_buckets, "education", "occupation"], hash_bucket_size=100),
  ]
  wide_columns = base_columns + crossed_columns
  deep_columns = [
      age, hours_per_week,
      tf.feature_column.indicator_column(education),
      tf.feature_column.embedding_column(occupation, dimension=8),
  ]
  return wide_columns, deep_columns


def build_estimator(model_dir):
  wide_columns, deep_columns = build_model_columns()
  hidden_units = [100, 75, 50, 25]
  run_config = tf.estimator.RunConfig().replace(
      session_config=tf.ConfigProto(device_count={"GPU": 0}))
  return tf.estimator.DNNLinearCombinedClassifier(
      model_dir=model_dir, linear_feature_columns=wide_columns,
      dnn_feature_columns=deep_columns, dnn_hidden_units=hidden_units,
      config=run_config)


def input_fn(data_file, num_epochs, shuffle, batch_size):
  def parse_csv(value):
    columns = tf.decode_csv(value, record_defaults=_CSV_COLUMN_DEFAULTS)
    features = dict(zip(_CSV_COLUMNS, columns))
    labels = features.pop("income_bracket")
    return features, tf.equal(labels, ">50K")

  dataset = tf.data.TextLineDataset(data_file)
  if shuffle:
    dataset = dataset.shuffle(buffer_size=1000)
  dataset = dataset.map(parse_csv, num_parallel_calls=2)
  dataset = dataset.repeat(num_epochs)
  dataset = dataset.batch(batch_size)
  return dataset


def main(argv):
  args = parser.parse_args(argv[1:])
  data_dir = tempfile.mkdtemp()
  train_file = os.path.join(data_dir, "adult.data")
  test_file = os.path.join(data_dir, "adult.test")
  write_data(train_file, 400, seed=1)
  write_data(test_file, 120, seed=2)
  model = build_estimator(args.model_dir)
  for n in range(args.train_epochs // args.epochs_per_eval):
    model.train(input_fn=lambda: input_fn(
        train_file, args.epochs_per_eval, True, args.batch_size))
    results = model.evaluate(input_fn=lambda: input_fn(
        test_file, 1, False, args.batch_size))
    print("Results at epoch", (n + 1) * args.epochs_per_eval)
    print("-" * 60)
    for key in sorted(results):
      print("%s: %s" % (key, results[key]))
  print("result keys: " + " ".join(sorted(results)))


if __name__ == "__main__":
  tf.logging.set_verbosity(tf.logging.INFO)
  tf.app.run(main)
