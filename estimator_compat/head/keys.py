"""The metric, prediction and serving-signature keys of the Estimator heads.

These are the strings TF 2.15's heads and canned estimators used: users
read them from `evaluate()` results, `predict()` dicts and SavedModel
signatures, so they must not change.
"""

import tensorflow as tf


class MetricKeys:
  """Keys of the eval metrics a head reports (as in TF 2.15)."""
  LOSS = "loss"
  LOSS_MEAN = "average_loss"
  LOSS_REGULARIZATION = "regularization_loss"
  ACCURACY = "accuracy"
  PRECISION = "precision"
  RECALL = "recall"
  ACCURACY_BASELINE = "accuracy_baseline"
  AUC = "auc"
  AUC_PR = "auc_precision_recall"
  LABEL_MEAN = "label/mean"
  PREDICTION_MEAN = "prediction/mean"
  ACCURACY_AT_THRESHOLD = "accuracy/positive_threshold_%g"
  PRECISION_AT_THRESHOLD = "precision/positive_threshold_%g"
  RECALL_AT_THRESHOLD = "recall/positive_threshold_%g"
  PROBABILITY_MEAN_AT_CLASS = "probability_mean/class%d"
  AUC_AT_CLASS = "auc/class%d"
  AUC_PR_AT_CLASS = "auc_precision_recall/class%d"
  PROBABILITY_MEAN_AT_NAME = "probability_mean/%s"
  AUC_AT_NAME = "auc/%s"
  AUC_PR_AT_NAME = "auc_precision_recall/%s"


class PredictionKeys:
  """Keys of the predictions dict a head returns (as in TF 2.15)."""
  CLASSES = "classes"
  CLASS_IDS = "class_ids"
  ALL_CLASSES = "all_classes"
  ALL_CLASS_IDS = "all_class_ids"
  LOGISTIC = "logistic"
  LOGITS = "logits"
  PREDICTIONS = "predictions"
  PROBABILITIES = "probabilities"


DEFAULT_SERVING_KEY = tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY
CLASSIFY_SERVING_KEY = "classification"
REGRESS_SERVING_KEY = "regression"
PREDICT_SERVING_KEY = "predict"
