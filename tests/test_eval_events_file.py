"""evaluate()'s summaries: one cached events file per eval dir, and the
chief's own file in a cluster (finding G14)."""

import glob
import os

import tensorflow as tf

from estimator_compat import training
from estimator_compat.engines import graph as graph_engine


def _steps(path):
  return [event.step for event in tf.compat.v1.train.summary_iterator(path)
          if event.summary.value]


def test_the_chiefs_evaluation_writes_an_events_file_of_its_own(tmp_path):
  # An events file is named after the second and the host only: the chief
  # and an evaluator task on one host, evaluating one checkpoint within one
  # second, wrote (and corrupted) one file. The chief's has its own name.
  eval_dir = str(tmp_path / "eval")
  graph_engine.write_eval_summary(eval_dir, {"loss": 1.0}, 3)
  with graph_engine.own_eval_events_file(training.CHIEF_EVAL_EVENTS_SUFFIX):
    graph_engine.write_eval_summary(eval_dir, {"loss": 2.0}, 5, "model.ckpt-5")
  graph_engine.write_eval_summary(eval_dir, {"loss": 0.5}, 7)
  files = sorted(glob.glob(os.path.join(eval_dir, "events.*")))
  assert len(files) == 2
  chief = [f for f in files if f.endswith(".chief")]
  assert len(chief) == 1
  assert _steps(chief[0]) == [5, 5]  # the results and the checkpoint path
  shared = [f for f in files if f not in chief]
  tf.compat.v1.summary.FileWriterCache.get(eval_dir).flush()
  assert _steps(shared[0]) == [3, 7]
