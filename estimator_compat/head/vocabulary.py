"""Label strings <-> class ids for the classification heads' label_vocabulary.

Computed with plain tensor ops rather than lookup tables: a table needs an
initializer run in a Session (which the function engine has not), and the
values are the same as TF 2.15's vocabulary tables gave.
"""

from typing import Optional, Sequence

import tensorflow as tf


def class_strings(class_ids: tf.Tensor,
                  label_vocabulary: Optional[Sequence[str]]) -> tf.Tensor:
  """The class strings of int64 class ids: the vocabulary's, or the ids."""
  if label_vocabulary is None:
    return tf.strings.as_string(class_ids, name="str_classes")
  return tf.gather(tf.constant(list(label_vocabulary)), class_ids,
                   name="class_string_lookup")


def vocabulary_ids(labels: tf.Tensor,
                   label_vocabulary: Sequence[str]) -> tf.Tensor:
  """int64 index of each string label in the vocabulary, -1 if absent.

  What TF 2.15's vocabulary table lookup gave, computed without a lookup
  table (a table needs an initializer run in a Session, which the function
  engine has not).

  Raises:
    ValueError: the labels are not strings.
  """
  if labels.dtype != tf.string:
    raise ValueError(
        "Labels dtype should be string if there is a vocabulary. Instead got "
        f"{labels.dtype}. Fix: feed the label strings, or drop "
        "label_vocabulary for integer labels.")
  with tf.compat.v1.name_scope("class_id_lookup"):
    matches = tf.equal(tf.expand_dims(labels, -1),
                       tf.constant(list(label_vocabulary)))
    first = tf.math.argmax(tf.cast(matches, tf.int32), axis=-1)
    return tf.where(tf.reduce_any(matches, axis=-1), first,
                    tf.constant(-1, tf.int64))
