"""Heads on fixed inputs, run alike on the real Estimator and here.

`python -m tests.head_reference_cases --out FILE` writes, as JSON, what every
head gives on fixed logits/labels/weights in a TF1 graph (loss, predictions,
eval metric values, export output types, training summary tags; the v2
heads, MultiLabelHead and the TF1 canned heads) and the type and message of
the errors of bad arguments. tools/record_head_reference.sh records it on
TF 2.15 into tests/goldens/head_reference.json; tests/test_head_reference.py
compares this package against it.
"""

import argparse
import json
import sys

import numpy as np


def _tf(ours):
  if ours:
    import estimator_compat  # pylint: disable=g-import-not-at-top
    estimator_compat.install()
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  return tf


def _tf1_heads(tf, ours):
  """(binary, multi-class, regression) TF1 canned head factories."""
  if ours:
    from estimator_compat.head import tf1_heads as v1  # pylint: disable=g-import-not-at-top
    return (v1.TF1BinaryClassHead, v1.TF1MultiClassHead, v1.regression_head)
  from tensorflow_estimator.python.estimator.canned import head as v1  # pylint: disable=g-import-not-at-top
  return (v1._binary_logistic_head_with_sigmoid_cross_entropy_loss,  # pylint: disable=protected-access
          v1._multi_class_head_with_softmax_cross_entropy_loss,  # pylint: disable=protected-access
          v1._regression_head)  # pylint: disable=protected-access


def parity(ours, only=()):
  """What each head gives on fixed inputs, by case and mode."""
  tf = _tf(ours)
  bin_v1, mc_v1, reg_v1 = _tf1_heads(tf, ours)
  E = tf.estimator
  rng = np.random.RandomState(0)
  N = 10
  logit1 = rng.normal(size=(N, 1)).astype(np.float32)
  logit3 = rng.normal(size=(N, 3)).astype(np.float32)
  logit2 = rng.normal(size=(N, 2)).astype(np.float32)
  w = rng.uniform(0.5, 2, size=(N,)).astype(np.float32)
  ybin = rng.randint(0, 2, size=(N, 1))
  ystr = np.where(ybin > 0, b"pos", b"neg")
  y3 = rng.randint(0, 3, size=(N,)).astype(np.int64)
  yreg = rng.normal(size=(N, 2)).astype(np.float32)
  ycount = rng.poisson(2, size=(N, 1)).astype(np.float32)
  yprob = rng.uniform(size=(N, 1)).astype(np.float32)
  ymulti = rng.randint(0, 2, size=(N, 3)).astype(np.int64)
  CASES = [
    ("binary", lambda: E.BinaryClassHead(weight_column="w", label_vocabulary=["neg", "pos"], thresholds=[0.4], name="b"), logit1, ystr),
    ("binary_plain", lambda: E.BinaryClassHead(), logit1, ybin),
    ("binary_sum", lambda: E.BinaryClassHead(loss_reduction=tf.losses.Reduction.SUM), logit1, ybin.astype(np.float32)),
    ("multi", lambda: E.MultiClassHead(3, weight_column="w"), logit3, y3),
    ("multi_vocab", lambda: E.MultiClassHead(3, label_vocabulary=["a", "b", "c"]), logit3, np.array([b"abc"[i:i+1] for i in y3])),
    ("reg", lambda: E.RegressionHead(label_dimension=2, weight_column="w"), logit2, yreg),
    ("poisson", lambda: E.PoissonRegressionHead(), logit1, ycount),
    ("logistic", lambda: E.LogisticRegressionHead(name="l"), logit1, yprob),
    ("v1_binary", lambda: bin_v1(weight_column="w", label_vocabulary=["neg", "pos"], thresholds=[0.4]), logit1, ystr),
    ("v1_multi", lambda: mc_v1(3, weight_column="w"), logit3, y3),
    ("v1_reg", lambda: reg_v1(weight_column="w", label_dimension=2), logit2, yreg),
    ("v1_reg_mean", lambda: reg_v1(loss_reduction=tf.compat.v1.losses.Reduction.MEAN), logit1, yreg[:, :1]),
  ]
  if hasattr(E, "MultiLabelHead"):
    CASES.append(("multilabel", lambda: E.MultiLabelHead(3, weight_column="w", thresholds=[0.3], classes_for_class_based_metrics=[0, 2]), logit3, ymulti))
  out = {}
  for name, make, logits, labels in CASES:
    if only and name not in only: continue
    res = {}
    for mode in ["train", "eval", "infer"]:
      g = tf.Graph()
      with g.as_default():
        tf.compat.v1.train.get_or_create_global_step()
        head = make()
        feats = {"w": tf.constant(w)}
        kw = {}
        if mode == "train":
          kw["train_op_fn"] = lambda loss: tf.no_op()
        spec = head.create_estimator_spec(features=feats, mode=mode, logits=tf.constant(logits), labels=tf.constant(labels) if mode != "infer" else None, regularization_losses=[tf.constant(0.5)] if mode=="train" else None, **kw)
        summ = [op.name for op in g.get_operations() if op.type == "ScalarSummary"]
        with tf.compat.v1.Session() as sess:
          sess.run([tf.compat.v1.global_variables_initializer(), tf.compat.v1.local_variables_initializer(), tf.compat.v1.tables_initializer()])
          r = {"loss": None if spec.loss is None else float(sess.run(spec.loss))}
          preds = sess.run(spec.predictions)
          r["pred"] = {k: (v.tolist() if v.dtype.kind != "O" else [[x.decode() for x in row] for row in v]) for k, v in preds.items()}
          if mode == "eval":
            ops = {}
            for k, m in spec.eval_metric_ops.items():
              if isinstance(m, tuple):
                ops[k] = m
              else:
                ops[k] = (m.result(), m.updates)
            sess.run([u for _, u in ops.values()])
            r["metrics"] = {k: float(sess.run(v)) for k, (v, _) in ops.items()}
          if mode == "infer":
            r["exports"] = {k: type(v).__name__ for k, v in spec.export_outputs.items()}
          if mode == "train":
            r["summaries"] = sorted(summ)
            r["summary_tags"] = sorted(sess.run(op.inputs[0]).decode() for op in g.get_operations() if op.type == "ScalarSummary")
        res[mode] = r
    out[name] = res
  return out


def errors(ours):
  """Type and message of the error of each bad argument."""
  tf = _tf(ours)
  E = tf.estimator
  found = {}

  def attempt(name, fn):
    try:
      with tf.Graph().as_default():
        fn()
      found[name] = ["", ""]
    except Exception as e:  # pylint: disable=broad-except
      found[name] = [type(e).__name__, str(e)]
  L1 = lambda: tf.constant([[0.5], [1.0]])
  attempt("labels_none", lambda: E.BinaryClassHead().loss(None, L1()))
  attempt("labels_sparse", lambda: E.BinaryClassHead().loss(tf.SparseTensor([[0, 0]], [1], [2, 1]), L1()))
  attempt("labels_dim", lambda: E.BinaryClassHead().loss(tf.constant([[1, 0], [0, 1]]), L1()))
  attempt("labels_float_multi", lambda: E.MultiClassHead(3).loss(tf.constant([[1.], [0.]]), tf.zeros([2, 3])))
  attempt("labels_int_vocab", lambda: E.MultiClassHead(3, label_vocabulary=["a", "b", "c"]).loss(tf.constant([[1], [0]]), tf.zeros([2, 3])))
  attempt("labels_int_vocab_bin", lambda: E.BinaryClassHead(label_vocabulary=["a", "b"]).loss(tf.constant([[1], [0]]), L1()))
  attempt("logits_dim", lambda: E.MultiClassHead(3).loss(tf.constant([[1], [0]]), tf.zeros([2, 4])))
  attempt("reduction", lambda: E.BinaryClassHead(loss_reduction="bad"))
  attempt("reduction_none", lambda: E.BinaryClassHead(loss_reduction=tf.losses.Reduction.NONE))
  attempt("thresholds", lambda: E.BinaryClassHead(thresholds=[1.5]))
  attempt("vocab_type", lambda: E.BinaryClassHead(label_vocabulary="ab"))
  attempt("n_classes", lambda: E.MultiClassHead(2))
  attempt("n_classes_none", lambda: E.MultiClassHead(None))
  attempt("vocab_len", lambda: E.MultiClassHead(3, label_vocabulary=["a"]))
  attempt("label_dim", lambda: E.RegressionHead(label_dimension=0))
  attempt("loss_fn", lambda: E.RegressionHead(loss_fn=lambda x, logits: x))
  attempt("loss_fn2", lambda: E.RegressionHead(loss_fn=lambda labels, logits, foo: labels))
  attempt("weight_type", lambda: E.BinaryClassHead(weight_column=3).loss(tf.constant([[1], [0]]), L1(), features={"w": tf.ones([2])}))
  attempt("weight_shape", lambda: E.BinaryClassHead(weight_column="w").loss(tf.constant([[1], [0]]), L1(), features={"w": tf.ones([3])}))
  attempt("weight_string", lambda: E.BinaryClassHead(weight_column="w").loss(tf.constant([[1], [0]]), L1(), features={"w": tf.constant(["a", "b"])}))
  def train(opt, **kw):
    tf.compat.v1.train.get_or_create_global_step()
    v = tf.Variable([[1.0]])
    E.BinaryClassHead().create_estimator_spec(features={}, mode="train", logits=tf.ones([2, 1]) * v, labels=tf.constant([[1], [0]]), optimizer=opt, **kw)
  attempt("opt_v1", lambda: train(tf.compat.v1.train.AdamOptimizer(), trainable_variables=[]))
  attempt("opt_new", lambda: train(tf.keras.optimizers.Adam(), trainable_variables=tf.compat.v1.trainable_variables()))
  attempt("opt_none", lambda: train(None))
  attempt("opt_and_fn", lambda: train(tf.keras.optimizers.legacy.Adam(), train_op_fn=lambda l: tf.no_op()))
  attempt("tv_none", lambda: train(tf.keras.optimizers.legacy.Adam()))
  attempt("tv_type", lambda: train(tf.keras.optimizers.legacy.Adam(), trainable_variables="x"))
  attempt("update_ops", lambda: train(None, train_op_fn=lambda l: tf.no_op(), update_ops="x"))
  attempt("ml_n", lambda: E.MultiLabelHead(1))
  attempt("ml_classes", lambda: E.MultiLabelHead(3, classes_for_class_based_metrics=["a"]))
  attempt("ml_classes_range", lambda: E.MultiLabelHead(3, classes_for_class_based_metrics=[5]))
  attempt("mh_empty", lambda: E.MultiHead([]))
  attempt("mh_noname", lambda: E.MultiHead([E.BinaryClassHead()]))
  attempt("mh_weights", lambda: E.MultiHead([E.BinaryClassHead(name="a")], head_weights=[1, 2]))
  attempt("mh_labels", lambda: E.MultiHead([E.BinaryClassHead(name="a")]).loss(tf.constant([[1]]), {"a": tf.ones([1, 1])}))
  attempt("mh_missing", lambda: E.MultiHead([E.BinaryClassHead(name="a")]).loss({"b": tf.constant([[1]])}, {"a": tf.ones([1, 1])}))
  attempt("mh_split", lambda: E.MultiHead([E.BinaryClassHead(name="a")]).predictions(tf.ones([1, 3])))
  attempt("parse_label", lambda: E.classifier_parse_example_spec([tf.feature_column.numeric_column("x")], "x"))
  attempt("parse_weight", lambda: E.regressor_parse_example_spec([tf.feature_column.numeric_column("x")], "y", weight_column=3))
  attempt("add_metrics", lambda: E.add_metrics(E.Estimator(model_fn=lambda features, labels, mode: None), lambda foo: {}))
  return found


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--out", required=True)
  parser.add_argument("--ours", action="store_true")
  args = parser.parse_args(argv)
  result = {"parity": parity(args.ours), "errors": errors(args.ours)}
  with open(args.out, "w") as f:
    json.dump(result, f, indent=1, sort_keys=True)
  return 0


if __name__ == "__main__":
  sys.exit(main())
