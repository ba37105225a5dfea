"""The Saver a model's Scaffold asks for, as TF1's Scaffold.finalize() made it.

A model_fn can bring its own saver: `Scaffold(saver=...)` (a
tf.compat.v1.train.Saver or, following the TF guide, a tf.train.Checkpoint
for object-based checkpoints) or a Saver in the SAVERS collection. That saver
decides what a checkpoint holds and under which names, so the name check of
checkpoint_reading.check_fits() does not apply to it, and a Checkpoint is used as
the name-based Saver of its objects that Scaffold.finalize() built from it.
"""

from typing import Any, Optional

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.checkpoint import graph_view

from estimator_compat.checkpoints import replacing_saver

_v1 = tf.compat.v1


def _own(scaffold: _v1.train.Scaffold) -> Optional[Any]:
  if scaffold.saver is not None:
    return scaffold.saver
  savers = _v1.get_collection(_v1.GraphKeys.SAVERS)
  return savers[0] if len(savers) == 1 else None


def has_custom_saver(scaffold: _v1.train.Scaffold) -> bool:
  """Whether the model brings its own saver (in the default graph)."""
  return _own(scaffold) is not None


def custom_saver(scaffold: _v1.train.Scaffold) -> Optional[Any]:
  """The model's own saver in the default graph, or None for the default.

  Args:
    scaffold: the EstimatorSpec's Scaffold.

  Returns:
    A tf.compat.v1.train.Saver (a tf.train.Checkpoint becomes the Saver of
    its objects, sharded, as Scaffold.finalize() made it), or None.
  """
  saver = _own(scaffold)
  if isinstance(saver, tf.train.Checkpoint):
    saver = replacing_saver.Saver(
        var_list=graph_view.ObjectGraphView(saver).frozen_saveable_objects(),
        sharded=True)
  return saver
