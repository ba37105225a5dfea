"""A BERT-shaped TPUEstimator program run with use_tpu=False.

As google-research/bert's run_classifier.py: token ids, input mask and
segment ids in, a token embedding plus segment embedding, dense layers,
a pooled [CLS] output and a classifier; `TPUEstimatorSpec` with
`scaffold_fn` and `eval_metrics=(metric_fn, [tensors])`; `params
['batch_size']` read by input_fn and model_fn, different per mode.
`observations()` records which batch size each call saw.
"""

import numpy as np
import tensorflow as tf

TRAIN_STEPS = 20
SEQ, VOCAB, HIDDEN, CLASSES = 8, 30, 16, 3
TRAIN_BATCH, EVAL_BATCH, PREDICT_BATCH = 8, 16, 4


def _data(rows, seed):
  rng = np.random.RandomState(seed)
  ids = rng.randint(1, VOCAB, size=(rows, SEQ)).astype(np.int32)
  mask = np.ones((rows, SEQ), np.int32)
  mask[:, SEQ - 2:] = rng.randint(0, 2, size=(rows, 2))
  segments = np.zeros((rows, SEQ), np.int32)
  segments[:, SEQ // 2:] = 1
  labels = (ids[:, 1] % CLASSES).astype(np.int32)
  return {"input_ids": ids, "input_mask": mask, "segment_ids": segments,
          "label_ids": labels}


TRAIN, EVAL = _data(96, seed=3), _data(48, seed=4)
_SEEN = []


def reset():
  del _SEEN[:]


def observations():
  return {"batch_sizes": sorted(set(_SEEN))}


def _input_fn_builder(data, is_training, drop_remainder):
  def input_fn(params):
    batch_size = params["batch_size"]
    _SEEN.append(f"input_fn:{batch_size}")
    d = tf.data.Dataset.from_tensor_slices(data)
    if is_training:
      d = d.repeat()
    return d.batch(batch_size, drop_remainder=drop_remainder)
  return input_fn


train_input_fn = _input_fn_builder(TRAIN, True, True)
eval_input_fn = _input_fn_builder(EVAL, False, False)
predict_input_fn = _input_fn_builder(
    {k: v[:12] for k, v in EVAL.items()}, False, False)


def _encoder(input_ids, input_mask, segment_ids):
  init = tf.compat.v1.truncated_normal_initializer(stddev=0.02)
  with tf.compat.v1.variable_scope("bert"):
    with tf.compat.v1.variable_scope("embeddings"):
      table = tf.compat.v1.get_variable("word_embeddings", [VOCAB, HIDDEN],
                                        initializer=init)
      tokens = tf.nn.embedding_lookup(table, input_ids)
      segment_table = tf.compat.v1.get_variable(
          "token_type_embeddings", [2, HIDDEN], initializer=init)
      tokens += tf.nn.embedding_lookup(segment_table, segment_ids)
    mask = tf.cast(tf.expand_dims(input_mask, -1), tf.float32)
    with tf.compat.v1.variable_scope("encoder"):
      hidden = tf.compat.v1.layers.dense(tokens, HIDDEN, activation=tf.tanh,
                                         kernel_initializer=init,
                                         name="intermediate")
      hidden = hidden * mask
    with tf.compat.v1.variable_scope("pooler"):
      first = tf.squeeze(hidden[:, 0:1, :], axis=1)
      return tf.compat.v1.layers.dense(first, HIDDEN, activation=tf.tanh,
                                       kernel_initializer=init, name="dense")


def model_fn(features, labels, mode, params):
  del labels
  if "batch_size" in params:
    _SEEN.append(f"model_fn:{mode}:{params['batch_size']}")
  else:
    _SEEN.append(f"model_fn:{mode}:none")
  pooled = _encoder(features["input_ids"], features["input_mask"],
                    features["segment_ids"])
  label_ids = features["label_ids"]
  with tf.compat.v1.variable_scope("loss"):
    weights = tf.compat.v1.get_variable(
        "output_weights", [CLASSES, HIDDEN],
        initializer=tf.compat.v1.truncated_normal_initializer(stddev=0.02))
    bias = tf.compat.v1.get_variable("output_bias", [CLASSES],
                                     initializer=tf.zeros_initializer())
    logits = tf.nn.bias_add(tf.matmul(pooled, weights, transpose_b=True),
                            bias)
    log_probs = tf.nn.log_softmax(logits, axis=-1)
    one_hot = tf.one_hot(label_ids, depth=CLASSES, dtype=tf.float32)
    per_example_loss = -tf.reduce_sum(one_hot * log_probs, axis=-1)
    loss = tf.reduce_mean(per_example_loss)
  probabilities = tf.nn.softmax(logits, axis=-1)

  def scaffold_fn():
    return tf.compat.v1.train.Scaffold()

  spec_class = tf.compat.v1.estimator.tpu.TPUEstimatorSpec
  if mode == tf.estimator.ModeKeys.TRAIN:
    global_step = tf.compat.v1.train.get_or_create_global_step()
    learning_rate = tf.compat.v1.train.polynomial_decay(
        0.01, global_step, TRAIN_STEPS, end_learning_rate=0.0)
    optimizer = tf.compat.v1.train.AdamOptimizer(learning_rate)
    train_op = optimizer.minimize(loss, global_step=global_step)
    return spec_class(mode=mode, loss=loss, train_op=train_op,
                      scaffold_fn=scaffold_fn)
  if mode == tf.estimator.ModeKeys.EVAL:

    def metric_fn(per_example_loss, label_ids, logits):
      predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
      return {
          "eval_accuracy": tf.compat.v1.metrics.accuracy(label_ids,
                                                         predictions),
          "eval_loss": tf.compat.v1.metrics.mean(per_example_loss),
      }

    return spec_class(mode=mode, loss=loss,
                      eval_metrics=(metric_fn,
                                    [per_example_loss, label_ids, logits]),
                      scaffold_fn=scaffold_fn)
  return spec_class(mode=mode, predictions={"probabilities": probabilities},
                    scaffold_fn=scaffold_fn)


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  tpu = tf.compat.v1.estimator.tpu
  run_config = tpu.RunConfig(
      model_dir=model_dir, tf_random_seed=7, save_checkpoints_steps=10,
      save_summary_steps=5,
      tpu_config=tpu.TPUConfig(
          iterations_per_loop=5, num_shards=8,
          per_host_input_for_training=tpu.InputPipelineConfig.PER_HOST_V2))
  return tpu.TPUEstimator(
      use_tpu=False, model_fn=model_fn, config=run_config,
      train_batch_size=TRAIN_BATCH, eval_batch_size=EVAL_BATCH,
      predict_batch_size=PREDICT_BATCH, export_to_tpu=False)


def serving_input_receiver_fn():
  return tf.estimator.export.build_raw_serving_input_receiver_fn({
      "input_ids": tf.zeros([1, SEQ], tf.int32),
      "input_mask": tf.zeros([1, SEQ], tf.int32),
      "segment_ids": tf.zeros([1, SEQ], tf.int32),
      "label_ids": tf.zeros([1], tf.int32),
  })()


def serving_inputs():
  return {k: v[:5] for k, v in EVAL.items()}
