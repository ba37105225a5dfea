"""Gradient boosted trees with tf.estimator, as TensorFlow 2's "Boosted trees
using Estimators" tutorial (the TF 2.0-2.8 docs) wrote it.

The tutorial's shape: pandas frames of passenger records, one-hot
(indicator) columns over each categorical column's unique values, numeric
columns left raw (the trees bucketize them by quantiles), an input_fn over
`tf.data.Dataset.from_tensor_slices((dict(X), y))` that shuffles, repeats and
batches the whole training set at once (n_batches_per_layer=1); a
LinearClassifier baseline, then a BoostedTreesClassifier trained to
max_steps=100 and evaluated; then its "model interpretation" part: a
BoostedTreesClassifier with center_bias, directional feature contributions
from `experimental_predict_with_explanations` (which sum, with the bias, to
each probability) and `experimental_feature_importances`. The downloaded
Titanic CSVs are replaced by synthetic records (no network); the plots are
left out. BoostedTreesClassifier left tensorflow-estimator in 2.9, so the
reference run is tensorflow-estimator 2.8 on TF 2.8 (tools/
record_legacy_goldens.sh, GOLDEN_VENV). Run unchanged:

  python boosted_trees_tutorial.py --model_dir=DIR

It prints each evaluation and, last, one line `results: {json}`.
"""

import argparse
import json
import tempfile

import numpy as np
import pandas as pd
import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--model_dir", default=None)


def passengers(rows, seed):
  """Titanic-like records and their labels (`survived`)."""
  rng = np.random.RandomState(seed)
  sex = rng.randint(0, 2, size=rows)
  travel_class = rng.randint(0, 3, size=rows)
  age = np.round(rng.uniform(2, 75, size=rows))
  fare = np.round(rng.lognormal(3.0, 0.8, size=rows), 2)
  frame = pd.DataFrame({
      "sex": np.array(["male", "female"])[sex],
      "age": age,
      "n_siblings_spouses": rng.randint(0, 4, size=rows),
      "parch": rng.randint(0, 3, size=rows),
      "fare": fare,
      "class": np.array(["Third", "Second", "First"])[travel_class],
      "deck": np.array(["unknown", "C", "B", "E"])[rng.randint(0, 4, rows)],
      "embark_town": np.array(["Southampton", "Cherbourg", "Queenstown"])[
          rng.randint(0, 3, size=rows)],
      "alone": np.array(["y", "n"])[rng.randint(0, 2, size=rows)],
  })
  odds = 1.6 * sex + 0.7 * travel_class - age / 30.0 + np.log(fare) / 4.0
  survived = (odds + rng.normal(scale=0.6, size=rows) > 1.0).astype(np.int64)
  return frame, pd.Series(survived, name="survived")


dftrain, y_train = passengers(240, seed=7)
dfeval, y_eval = passengers(96, seed=8)

fc = tf.feature_column
CATEGORICAL_COLUMNS = ["sex", "n_siblings_spouses", "parch", "class", "deck",
                       "embark_town", "alone"]
NUMERIC_COLUMNS = ["age", "fare"]


def one_hot_cat_column(feature_name, vocab):
  return fc.indicator_column(
      fc.categorical_column_with_vocabulary_list(feature_name, vocab))


feature_columns = []
for feature_name in CATEGORICAL_COLUMNS:
  # Need to one-hot encode categorical features.
  vocabulary = dftrain[feature_name].unique()
  feature_columns.append(one_hot_cat_column(feature_name, vocabulary))

for feature_name in NUMERIC_COLUMNS:
  feature_columns.append(fc.numeric_column(feature_name, dtype=tf.float32))

# Use entire batch since this is such a small dataset.
NUM_EXAMPLES = len(y_train)


def make_input_fn(X, y, n_epochs=None, shuffle=True):
  def input_fn():
    dataset = tf.data.Dataset.from_tensor_slices((dict(X), y))
    if shuffle:
      dataset = dataset.shuffle(NUM_EXAMPLES)
    # For training, cycle thru dataset as many times as need (n_epochs=None).
    dataset = dataset.repeat(n_epochs)
    # In memory training doesn't use batching.
    dataset = dataset.batch(NUM_EXAMPLES)
    return dataset
  return input_fn


# Training and evaluation input functions.
train_input_fn = make_input_fn(dftrain, y_train)
eval_input_fn = make_input_fn(dfeval, y_eval, shuffle=False, n_epochs=1)


def _numbers(result):
  return {key: float(value) for key, value in result.items()}


def main():
  args = parser.parse_args()
  tf.random.set_seed(123)

  linear_est = tf.estimator.LinearClassifier(feature_columns,
                                             model_dir=tempfile.mkdtemp())
  # Train model.
  linear_est.train(train_input_fn, max_steps=100)
  # Evaluation.
  linear = linear_est.evaluate(eval_input_fn)
  print(pd.Series(linear))

  # Since data fits into memory, use entire dataset per layer. It will be
  # faster. Above one batch is defined as the entire dataset.
  n_batches = 1
  est = tf.estimator.BoostedTreesClassifier(feature_columns,
                                            n_batches_per_layer=n_batches,
                                            model_dir=tempfile.mkdtemp())
  # The model will stop training once the specified number of trees is
  # built, not based on the number of steps.
  est.train(train_input_fn, max_steps=100)
  trees = est.evaluate(eval_input_fn)
  print(pd.Series(trees))
  pred_dicts = list(est.predict(eval_input_fn))
  probs = pd.Series([pred["probabilities"][1] for pred in pred_dicts])

  # Model interpretation: local (DFCs) and global (importances).
  params = {
      "n_trees": 50,
      "max_depth": 3,
      "n_batches_per_layer": 1,
      # You must enable center_bias = True to get DFCs. This will force the
      # model to make an initial prediction before using any features (e.g.
      # use the mean of the training labels for regression or log odds for
      # classification when using cross entropy loss).
      "center_bias": True,
  }
  est = tf.estimator.BoostedTreesClassifier(feature_columns, **params,
                                            model_dir=args.model_dir)
  # Train model.
  est.train(train_input_fn, max_steps=100)
  # Evaluation.
  centered = est.evaluate(eval_input_fn)
  print(pd.Series(centered))
  explained = list(est.experimental_predict_with_explanations(eval_input_fn))
  explained_probs = pd.Series([pred["probabilities"][1]
                               for pred in explained])
  df_dfc = pd.DataFrame([pred["dfc"] for pred in explained])
  # Sum of DFCs + bias == probabality.
  bias = explained[0]["bias"]
  dfc_prob = df_dfc.sum(axis=1) + bias
  np.testing.assert_almost_equal(dfc_prob.values, explained_probs.values)
  importances = est.experimental_feature_importances(normalize=True)
  df_imp = pd.Series(importances)

  print("results: " + json.dumps({
      "linear": _numbers(linear),
      "trees": _numbers(trees),
      "trees_probabilities": [float(p) for p in probs],
      "centered": _numbers(centered),
      "centered_probabilities": [float(p) for p in explained_probs],
      "bias": float(bias),
      "dfc_mean_abs": {k: float(v) for k, v in df_dfc.abs().mean().items()},
      "importances": {k: float(v) for k, v in df_imp.items()},
  }, sort_keys=True))


if __name__ == "__main__":
  main()
