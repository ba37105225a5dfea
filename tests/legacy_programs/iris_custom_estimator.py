"""A custom Estimator on iris-shaped data, as TF1-era samples wrote one.

The shape of TensorFlow's get_started custom-estimator sample: pandas
columns, feature columns through `input_layer`, v1 dense layers, Adagrad,
v1 accuracy metric with a summary, and input functions that return the
`get_next()` of a one-shot iterator. The downloaded CSVs are replaced by
synthetic, well separated clusters (no network). Run unchanged:

  python iris_custom_estimator.py --batch_size=8 --train_steps=60
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


def my_model(features, labels, mode, params):
  net = tf.feature_column.input_layer(features, params["feature_columns"])
  for units in params["hidden_units"]:
    net = tf.layers.dense(net, units=units, activation=tf.nn.relu)
  logits = tf.layers.dense(net, params["n_classes"], activation=None)
  predicted_classes = tf.argmax(logits, 1)
  if mode == tf.estimator.ModeKeys.PREDICT:
    predictions = {"class_ids": predicted_classes[:, tf.newaxis],
                   "probabilities": tf.nn.softmax(logits),
                   "logits": logits}
    return tf.estimator.EstimatorSpec(mode, predictions=predictions)
  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  accuracy = tf.metrics.accuracy(labels=labels, predictions=predicted_classes,
                                 name="acc_op")
  tf.summary.scalar("accuracy", accuracy[1])
  if mode == tf.estimator.ModeKeys.EVAL:
    return tf.estimator.EstimatorSpec(mode, loss=loss,
                                      eval_metric_ops={"accuracy": accuracy})
  optimizer = tf.train.AdagradOptimizer(learning_rate=0.1)
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main(argv):
  args = parser.parse_args(argv[1:])
  (train_x, train_y), (test_x, test_y) = load_data()
  feature_columns = [tf.feature_column.numeric_column(key=key)
                     for key in train_x.keys()]
  classifier = tf.estimator.Estimator(
      model_fn=my_model, model_dir=args.model_dir,
      params={"feature_columns": feature_columns, "hidden_units": [10, 10],
              "n_classes": 3})
  classifier.train(
      input_fn=lambda: train_input_fn(train_x, train_y, args.batch_size),
      steps=args.train_steps)
  eval_result = classifier.evaluate(
      input_fn=lambda: eval_input_fn(test_x, test_y, args.batch_size))
  print("\nTest set accuracy: {accuracy:0.3f}\n".format(**eval_result))
  print("eval loss: {loss:0.6f} global_step: {global_step}".format(
      **eval_result))
  predict_x = {"SepalLength": [5.1, 5.9, 6.9], "SepalWidth": [3.3, 3.0, 3.1],
               "PetalLength": [1.7, 4.2, 5.4], "PetalWidth": [0.5, 1.5, 2.1]}
  predictions = classifier.predict(
      input_fn=lambda: eval_input_fn(predict_x, labels=None,
                                     batch_size=args.batch_size))
  for pred_dict, expected in zip(predictions, SPECIES):
    class_id = pred_dict["class_ids"][0]
    probability = pred_dict["probabilities"][class_id]
    print('Prediction is "{}" ({:.1f}%), expected "{}"'.format(
        SPECIES[class_id], 100 * probability, expected))


if __name__ == "__main__":
  tf.logging.set_verbosity(tf.logging.INFO)
  tf.app.run(main)
