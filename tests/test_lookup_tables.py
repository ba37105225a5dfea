"""Lookup tables made by a model_fn or an input_fn are initialized, as by the
Estimator's default Scaffold (its local_init_op ran the TABLE_INITIALIZERS
collection once per session, before the first step), in every mode."""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe

pytestmark = pytest.mark.usefixtures("engine")

WORDS = np.array(["b", "a", "c", "zz", "a", "c", "b", "a"])
IDS = np.array([1, 0, 2, 3, 0, 2, 1, 0])  # zz: the out-of-vocabulary bucket.


def _ids_model_fn(make_table):
  """A model_fn mapping features['word'] to ids with the table it makes."""

  def model_fn(features, labels, mode):
    ids = make_table().lookup(features["word"])
    logits = tf.compat.v1.layers.dense(tf.one_hot(ids, 4), 2)
    predictions = {"ids": ids}
    if mode == tfe.ModeKeys.PREDICT:
      return tfe.EstimatorSpec(mode, predictions=predictions)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    # The metric reads the ids: evaluation fails if the table is empty.
    metrics = ({"mean_id": tf.compat.v1.metrics.mean(ids)}
               if mode == tfe.ModeKeys.EVAL else None)
    return tfe.EstimatorSpec(mode, predictions=predictions, loss=loss,
                             train_op=train_op, eval_metric_ops=metrics)

  return model_fn


def _static_vocabulary():
  return tf.lookup.StaticVocabularyTable(
      tf.lookup.KeyValueTensorInitializer(
          tf.constant(["a", "b", "c"]), tf.constant([0, 1, 2], tf.int64)),
      num_oov_buckets=1)


def _static_hash():
  return tf.compat.v1.lookup.StaticHashTable(
      tf.compat.v1.lookup.KeyValueTensorInitializer(
          ["a", "b", "c"], [0, 1, 2], tf.string, tf.int64), 3)


def _input_fn(labels=True, epochs=None):
  def input_fn():
    features = {"word": WORDS}
    dataset = tf.data.Dataset.from_tensor_slices(
        (features, IDS % 2) if labels else features)
    return dataset.repeat(epochs).batch(4)
  return input_fn


@pytest.mark.parametrize("make_table", [_static_vocabulary, _static_hash],
                         ids=["StaticVocabularyTable", "StaticHashTable"])
def test_a_table_made_by_the_model_fn_works_in_every_mode(tmp_path,
                                                          make_table):
  est = tfe.Estimator(_ids_model_fn(make_table), model_dir=str(tmp_path))
  est.train(_input_fn(), steps=3)
  metrics = est.evaluate(_input_fn(epochs=1))
  assert metrics["mean_id"] == pytest.approx(IDS.mean())
  predicted = [p["ids"] for p in est.predict(_input_fn(labels=False,
                                                       epochs=1))]
  np.testing.assert_array_equal(predicted, IDS)
  # A second call of each mode traces again and initializes its own tables.
  est.train(_input_fn(), steps=1)
  assert est.evaluate(_input_fn(epochs=1))["global_step"] == 4


def test_a_table_made_by_the_input_fn_works(tmp_path):
  def input_fn():
    table = _static_vocabulary()
    dataset = tf.data.Dataset.from_tensor_slices(({"word": WORDS}, IDS % 2))
    return dataset.map(lambda f, y: ({"id": table.lookup(f["word"])}, y)
                      ).repeat().batch(4)

  def model_fn(features, labels, mode):
    logits = tf.compat.v1.layers.dense(tf.one_hot(features["id"], 4), 2)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tfe.EstimatorSpec(
        mode, loss=loss, train_op=train_op,
        eval_metric_ops={"mean_id": tf.compat.v1.metrics.mean(features["id"])})

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  est.train(input_fn, steps=2)
  assert est.evaluate(input_fn, steps=2)["mean_id"] == pytest.approx(
      IDS.mean())


def test_a_scaffold_local_init_op_still_decides(tmp_path, engine,
                                                monkeypatch):
  # As the Estimator: a Scaffold's own local_init_op replaces the default one
  # in prediction (here it also initializes the tables), which needs a TF1
  # Session: the default engine runs such calls on the graph engine.
  if engine == "function":
    monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE")
  inner = _ids_model_fn(_static_hash)

  def model_fn(features, labels, mode):
    spec = inner(features, labels, mode)
    scaffold = tf.compat.v1.train.Scaffold(
        local_init_op=tf.compat.v1.tables_initializer())
    return spec._replace(scaffold=scaffold)

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  est.train(_input_fn(), steps=2)
  predicted = [p["ids"] for p in est.predict(_input_fn(labels=False,
                                                       epochs=1))]
  np.testing.assert_array_equal(predicted, IDS)


def test_each_call_reads_the_vocabulary_file_as_it_is_then(tmp_path):
  # Each Estimator call had a Session, so tables, of its own: a vocabulary
  # file rewritten between two calls is read afresh by the second.
  vocabulary = tmp_path / "vocabulary.txt"

  def model_fn(features, labels, mode):
    del labels
    table = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(
            str(vocabulary), tf.string, tf.lookup.TextFileIndex.WHOLE_LINE,
            tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER), -1)
    offset = tf.compat.v1.get_variable(
        "offset", [], tf.int64, initializer=tf.compat.v1.zeros_initializer())
    return tfe.EstimatorSpec(
        mode, predictions={"ids": table.lookup(features["word"]) + offset})

  def input_fn():
    return tf.data.Dataset.from_tensor_slices(
        {"word": np.array(["a", "b", "c"])}).batch(3)

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path / "model"))
  for words, expected in ((["a", "b", "c"], [0, 1, 2]),
                          (["c", "b", "a"], [2, 1, 0])):
    vocabulary.write_text("\n".join(words) + "\n")
    assert [p["ids"] for p in est.predict(input_fn)] == expected
