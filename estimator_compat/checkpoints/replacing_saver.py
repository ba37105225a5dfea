"""The sharded legacy Saver, made safe for saving a checkpoint again.

TF1's sharded Saver (the Estimator's default, and the one a Scaffold made)
merges its shards into `<prefix>.index` by writing that file in place. For
a new step that is harmless: the state file names the checkpoint only after
the save. But the Estimator saves the restored step again at the start of
every train() (CheckpointSaverHook.after_create_session), over the very
checkpoint the state file names as the newest. A process killed during that
rewrite left the newest checkpoint without a whole index, and a reader (an
evaluator, the next run) could see the file half written.

`Saver` here saves such a step under a staging prefix and renames its files
over the old ones (data first, then the index), so the named checkpoint is
always whole. Names, layout, state file, rotation and meta graph are what
the plain Saver writes. A kill between the stage and the renames leaves
`<prefix>.resave*` files, which checkpoint_files.remove_unfinished_saves
removes at the next start.
"""

import re
from typing import Any, Optional

import tensorflow as tf
from tensorflow.python.client import session as session_lib  # pylint: disable=g-direct-tensorflow-import

# The staging prefix is `<checkpoint prefix>.resave`.
STAGE_SUFFIX = ".resave"
_STAGED_FILE = re.compile(r"\.(index|data-\d{5}-of-\d{5})$")


class _StagingSession(session_lib.SessionInterface):
  """Runs the Saver's save op into a staging prefix, then renames over.

  Only the save op's run (fed its filename tensor) is redirected; the Saver
  then records, rotates and writes the meta graph as for any save.
  """

  def __init__(self, session: Any, filename_tensor_name: str):
    self._session = session
    self._filename_tensor_name = filename_tensor_name

  @property
  def graph(self) -> tf.Graph:
    return self._session.graph

  @property
  def sess_str(self) -> str:
    return self._session.sess_str

  def partial_run_setup(self, fetches, feeds=None):  # pragma: no cover
    return self._session.partial_run_setup(fetches, feeds)

  def partial_run(self, handle, fetches, feed_dict=None):  # pragma: no cover
    return self._session.partial_run(handle, fetches, feed_dict)

  def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
    feed = dict(feed_dict or {})
    prefix = feed.get(self._filename_tensor_name)
    prefix = prefix.decode() if isinstance(prefix, bytes) else prefix
    if not prefix or not tf.io.gfile.exists(prefix + ".index"):
      return self._session.run(fetches, feed_dict, options, run_metadata)
    staged = prefix + STAGE_SUFFIX
    feed[self._filename_tensor_name] = staged
    self._session.run(fetches, feed, options, run_metadata)
    _rename_over(staged, prefix)
    return prefix.encode()


def _rename_over(staged: str, prefix: str) -> None:
  """Renames the staged checkpoint's files to `prefix`'s, the index last."""
  names = tf.io.gfile.glob(staged + ".*")
  files = sorted((n for n in names if _STAGED_FILE.search(n[len(staged):])),
                 key=lambda n: n.endswith(".index"))
  for name in files:
    tf.io.gfile.rename(name, prefix + name[len(staged):], overwrite=True)


class Saver(tf.compat.v1.train.Saver):
  """tf.compat.v1.train.Saver whose save of an existing step replaces it whole.

  Only the sharded graph-mode save needs it (the unsharded one writes each
  file through a temporary name); any other save is the plain Saver's.
  """

  def save(self, sess, save_path, global_step=None, *args: Any,
           **kwargs: Any) -> Optional[str]:
    if (self._sharded and sess is not None and  # pylint: disable=protected-access
        self.saver_def is not None and not tf.executing_eagerly()):
      sess = _StagingSession(sess, self.saver_def.filename_tensor_name)
    return super().save(sess, save_path, global_step, *args, **kwargs)
