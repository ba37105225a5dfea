"""Re-exports TensorFlow and the Estimator for the other modules."""
import tensorflow as tf
from tensorflow import estimator as tf_estimator

ModeKeys = tf_estimator.ModeKeys
