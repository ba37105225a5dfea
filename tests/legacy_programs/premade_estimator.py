"""A premade DNNClassifier on iris-shaped data, as TF1-era samples wrote it.

The shape of TensorFlow's get_started premade_estimator sample: numeric
feature columns from pandas column names, `tf.estimator.DNNClassifier` with
hidden_units=[10, 10] and n_classes=3 (the TF1 canned estimator: Adagrad
0.05), input functions returning a one-shot iterator's `get_next()`, and the
sample's printed accuracy and predictions. The downloaded CSVs are replaced
by synthetic, well separated clusters (no network). Run unchanged:

  python premade_estimator.py --batch_size=8 --train_steps=60
"""

import argparse

import numpy as np
import pandas as pd
import tensorflow.compat.v1 as tf

parser = argparse.ArgumentParser()
parser.add_argument("--batch_size", default=100, type=int)
parser.add_argument("--train_steps", default=1000, type=int)
parser.add_argument("--model_dir", default=None)

COLUMNS = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth",
           "Species"]
SPECIES = ["Setosa", "Versicolor", "Virginica"]
CENTERS = np.array([[5.0, 3.4, 1.5, 0.2], [5.9, 2.8, 4.3, 1.3],
                    [6.6, 3.0, 5.6, 2.0]])


def _frame(rows_per_class, seed):
  rng = np.random.RandomState(seed)
  parts = []
  for species, center in enumerate(CENTERS):
    values = center + 0.15 * rng.normal(size=(rows_per_class, 4))
    part = pd.DataFrame(values.astype(np.float32), columns=COLUMNS[:4])
    part["Species"] = species
    parts.append(part)
  return pd.concat(parts).sample(frac=1.0, random_state=seed).reset_index(
      drop=True)


def load_data(label_name="Species"):
  train, test = _frame(40, seed=1), _frame(10, seed=2)
  train_x, train_y = train, train.pop(label_name)
  test_x, test_y = test, test.pop(label_name)
  return (train_x, train_y), (test_x, test_y)


def train_input_fn(features, labels, batch_size):
  dataset = tf.data.Dataset.from_tensor_slices((dict(features), labels))
  dataset = dataset.shuffle(1000).repeat().batch(batch_size)
  return dataset.make_one_shot_iterator().get_next()


def eval_input_fn(features, labels, batch_size):
  features = dict(features)
  inputs = features if labels is None else (features, labels)
  dataset = tf.data.Dataset.from_tensor_slices(inputs).batch(batch_size)
  return dataset.make_one_shot_iterator().get_next()


def main(argv):
  args = parser.parse_args(argv[1:])
  (train_x, train_y), (test_x, test_y) = load_data()
  my_feature_columns = []
  for key in train_x.keys():
    my_feature_columns.append(tf.feature_column.numeric_column(key=key))
  classifier = tf.estimator.DNNClassifier(
      feature_columns=my_feature_columns, hidden_units=[10, 10], n_classes=3,
      model_dir=args.model_dir)
  classifier.train(
      input_fn=lambda: train_input_fn(train_x, train_y, args.batch_size),
      steps=args.train_steps)
  eval_result = classifier.evaluate(
      input_fn=lambda: eval_input_fn(test_x, test_y, args.batch_size))
  print("\nTest set accuracy: {accuracy:0.3f}\n".format(**eval_result))
  print("eval loss: {loss:0.6f} average_loss: {average_loss:0.6f} "
        "global_step: {global_step}".format(**eval_result))
  expected = ["Setosa", "Versicolor", "Virginica"]
  predict_x = {"SepalLength": [5.1, 5.9, 6.9], "SepalWidth": [3.3, 3.0, 3.1],
               "PetalLength": [1.7, 4.2, 5.4], "PetalWidth": [0.5, 1.5, 2.1]}
  predictions = classifier.predict(
      input_fn=lambda: eval_input_fn(predict_x, labels=None,
                                     batch_size=args.batch_size))
  for pred_dict, expec in zip(predictions, expected):
    class_id = pred_dict["class_ids"][0]
    probability = pred_dict["probabilities"][class_id]
    print('Prediction is "{}" ({:.1f}%), expected "{}"'.format(
        SPECIES[class_id], 100 * probability, expec))


if __name__ == "__main__":
  tf.logging.set_verbosity(tf.logging.INFO)
  tf.app.run(main)
