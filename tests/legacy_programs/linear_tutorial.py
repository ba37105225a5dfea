"""A linear model with tf.estimator.LinearClassifier, as TensorFlow's
"Build a linear model with Estimators" tutorial wrote it.

The tutorial's shape: pandas frames of passenger records, vocabulary columns
built from each categorical column's unique values, numeric columns, an
input_fn over `tf.data.Dataset.from_tensor_slices((dict(df), labels))` with
shuffle/batch/repeat, a LinearClassifier trained and evaluated on the base
columns, then again with a crossed column, predictions read back as a
probability series. The downloaded CSVs are replaced by synthetic records
(no network); the plots are left out. Run unchanged:

  python linear_tutorial.py --model_dir=DIR
"""

import argparse
import tempfile

import numpy as np
import pandas as pd
import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--model_dir", default=None)


def _records(rows, seed):
  rng = np.random.RandomState(seed)
  frame = pd.DataFrame({
      "sex": rng.choice(["male", "female"], size=rows, p=[0.65, 0.35]),
      "age": rng.uniform(1, 80, size=rows).round(),
      "n_siblings_spouses": rng.choice([0, 1, 2, 3], size=rows),
      "parch": rng.choice([0, 1, 2], size=rows),
      "fare": rng.gamma(2.0, 15.0, size=rows),
      "class": rng.choice(["First", "Second", "Third"], size=rows),
      "deck": rng.choice(["unknown", "A", "B", "C"], size=rows),
      "embark_town": rng.choice(["Southampton", "Cherbourg", "Queenstown"],
                                size=rows),
      "alone": rng.choice(["y", "n"], size=rows),
  })
  score = ((frame["sex"] == "female") * 2.0 + (frame["class"] == "First")
           - frame["age"] / 40.0 + rng.normal(scale=0.5, size=rows))
  return frame, (score > 0.3).astype(np.int64)


dftrain, y_train = _records(160, seed=1)
dfeval, y_eval = _records(64, seed=2)

CATEGORICAL_COLUMNS = ["sex", "n_siblings_spouses", "parch", "class", "deck",
                       "embark_town", "alone"]
NUMERIC_COLUMNS = ["age", "fare"]

feature_columns = []
for feature_name in CATEGORICAL_COLUMNS:
  vocabulary = dftrain[feature_name].unique()
  feature_columns.append(
      tf.feature_column.categorical_column_with_vocabulary_list(
          feature_name, vocabulary))

for feature_name in NUMERIC_COLUMNS:
  feature_columns.append(
      tf.feature_column.numeric_column(feature_name, dtype=tf.float32))


def make_input_fn(data_df, label_df, num_epochs=10, shuffle=True,
                  batch_size=32):
  def input_function():
    ds = tf.data.Dataset.from_tensor_slices((dict(data_df), label_df))
    if shuffle:
      ds = ds.shuffle(1000)
    ds = ds.batch(batch_size).repeat(num_epochs)
    return ds
  return input_function


train_input_fn = make_input_fn(dftrain, y_train)
eval_input_fn = make_input_fn(dfeval, y_eval, num_epochs=1, shuffle=False)


def main():
  args = parser.parse_args()
  linear_est = tf.estimator.LinearClassifier(
      feature_columns=feature_columns, model_dir=tempfile.mkdtemp())
  linear_est.train(train_input_fn)
  result = linear_est.evaluate(eval_input_fn)
  print(result)

  age_x_gender = tf.feature_column.crossed_column(["age", "sex"],
                                                  hash_bucket_size=100)
  derived_feature_columns = [age_x_gender]
  linear_est = tf.estimator.LinearClassifier(
      feature_columns=feature_columns + derived_feature_columns,
      model_dir=args.model_dir)
  linear_est.train(train_input_fn)
  result = linear_est.evaluate(eval_input_fn)
  print(result)
  print("result keys: " + " ".join(sorted(result)))
  print("global_step: {}".format(result["global_step"]))

  pred_dicts = list(linear_est.predict(eval_input_fn))
  probs = pd.Series([pred["probabilities"][1] for pred in pred_dicts])
  print("predicted {} probabilities, mean {:.4f}".format(len(probs),
                                                        probs.mean()))


if __name__ == "__main__":
  main()
