"""WarmStartSettings with vocabularies and renames, on every engine.

The function engine runs TensorFlow's own warm start eagerly on the
variables the TF1 collections would have held (it used to refuse
var_name_to_vocab_info, which also failed the default engine).
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe


@pytest.fixture(autouse=True)
def any_engine(engine_name):
  """Every test runs on the default engine and on each forced one."""
  return engine_name


def _vocab_model_fn(vocab_size, learning_rate):
  """An embedding of `vocab_size` rows and a weight, summed into the loss."""

  def model_fn(features, labels, mode):
    embedding = tf.compat.v1.get_variable(
        "embedding", [vocab_size, 2],
        initializer=tf.compat.v1.random_normal_initializer(seed=1))
    weight = tf.compat.v1.get_variable(
        "weight", [2], initializer=tf.compat.v1.ones_initializer())
    rows = tf.gather(embedding, features["ids"])
    loss = tf.reduce_mean(tf.square(tf.reduce_sum(rows * weight, 1) - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(
        learning_rate).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step())
    return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)

  return model_fn


def _ids_input_fn():
  return ({"ids": tf.constant([0, 1, 2])}, tf.constant([1.0, 2.0, 3.0]))


def _source(tmp_path, steps):
  source = tfe.Estimator(_vocab_model_fn(3, 0.5),
                         model_dir=str(tmp_path / "source"))
  source.train(_ids_input_fn, steps=steps)
  return source


def _vocab_info(tmp_path):
  old_vocab, new_vocab = tmp_path / "old.txt", tmp_path / "new.txt"
  old_vocab.write_text("a\nb\nc")
  new_vocab.write_text("c\nz\na\nb")
  # (load_and_remap takes no constant_initializer, in TF1 graphs either.)
  return tfe.VocabInfo(
      new_vocab=str(new_vocab), new_vocab_size=4, num_oov_buckets=0,
      old_vocab=str(old_vocab),
      backup_initializer=tf.compat.v1.initializers.random_uniform(
          minval=0.39, maxval=0.39))


def test_warm_start_remaps_rows_by_vocabulary(tmp_path):
  source = _source(tmp_path, steps=3)
  target = tfe.Estimator(
      _vocab_model_fn(4, 0.0), model_dir=str(tmp_path / "target"),
      warm_start_from=tfe.WarmStartSettings(
          source.model_dir, vars_to_warm_start=None,
          var_name_to_vocab_info={"embedding": _vocab_info(tmp_path)}))
  target.train(_ids_input_fn, steps=1)
  old = source.get_variable_value("embedding")
  np.testing.assert_allclose(target.get_variable_value("embedding"),
                             [old[2], [0.39, 0.39], old[0], old[1]])
  # vars_to_warm_start=None: only the vocabulary variables are copied.
  assert not np.allclose(source.get_variable_value("weight"), [1.0, 1.0])
  np.testing.assert_allclose(target.get_variable_value("weight"), [1.0, 1.0])


def test_warm_start_list_of_names_with_vocabulary(tmp_path):
  source = _source(tmp_path, steps=3)
  target = tfe.Estimator(
      _vocab_model_fn(4, 0.0), model_dir=str(tmp_path / "target"),
      warm_start_from=tfe.WarmStartSettings(
          source.model_dir, vars_to_warm_start=["weight", "embedding"],
          var_name_to_vocab_info={"embedding": _vocab_info(tmp_path)}))
  target.train(_ids_input_fn, steps=1)
  old = source.get_variable_value("embedding")
  np.testing.assert_allclose(target.get_variable_value("embedding"),
                             [old[2], [0.39, 0.39], old[0], old[1]])
  np.testing.assert_allclose(target.get_variable_value("weight"),
                             source.get_variable_value("weight"))


def test_warm_start_names_unused_vocab_info(tmp_path):
  source = _source(tmp_path, steps=1)
  vocab = tmp_path / "vocab.txt"
  vocab.write_text("a\nb\nc")
  vocab_info = tfe.VocabInfo(new_vocab=str(vocab), new_vocab_size=3,
                             num_oov_buckets=0, old_vocab=str(vocab))
  target = tfe.Estimator(
      _vocab_model_fn(3, 0.0), model_dir=str(tmp_path / "target"),
      warm_start_from=tfe.WarmStartSettings(
          source.model_dir, var_name_to_vocab_info={"embeding": vocab_info}))
  # TensorFlow's own error, before any checkpoint is written.
  with pytest.raises(ValueError, match="var_name_to_vocab_info that were "
                     "not used: {'embeding'}"):
    target.train(_ids_input_fn, steps=1)
  assert not (tmp_path / "target" / "checkpoint").exists()
