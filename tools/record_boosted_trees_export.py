"""Records tensorflow-estimator 2.8's SavedModel export of the BoostedTrees
estimators (run in the TF 2.8.4 venv of record_boosted_trees_goldens.sh).

For each model of tests/golden_programs/_boosted_trees_export.py: trains it
on the goldens' tiny data, exports it with a parsing serving input receiver
and with a raw one, and writes to tests/boosted_trees_goldens/export/<model>/:

- ckpt/: the trained checkpoint the export was made from (the test exports
  from it again here);
- signatures.json: per export, every signature's method name and its
  inputs' and outputs' keys, dtypes and shapes;
- outputs.npz: every signature's outputs on the data's 40 examples (as
  serialized tf.Examples, or raw tensors), keyed
  `<export>/<signature>/<output key>`, and estimator.predict's as
  `predict/<key>`.

  PYTHONPATH=. ~/.cache/estimator-compat/tf28-venv/bin/python \
      tools/record_boosted_trees_export.py [model ...]
"""

import json
import os
import shutil
import sys
import tempfile

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
# pylint: disable=g-import-not-at-top,wrong-import-position
from tests.golden_programs import _boosted_trees_data as data
from tests.golden_programs import _boosted_trees_export as export_data

OUT = os.path.join(os.path.dirname(__file__), "..", "tests",
                   "boosted_trees_goldens", "export")


def record(name, build, columns, labels):
  folder = os.path.join(OUT, name)
  shutil.rmtree(folder, ignore_errors=True)
  os.makedirs(folder)
  model_dir = tempfile.mkdtemp()
  estimator = build(model_dir)
  train_input_fn, _, predict_input_fn = data.input_fns(labels)
  estimator.train(train_input_fn, max_steps=1000)
  checkpoint = estimator.latest_checkpoint()
  ckpt_dir = os.path.join(folder, "ckpt")
  os.makedirs(ckpt_dir)
  for f in (tf.io.gfile.glob(checkpoint + ".index")
            + tf.io.gfile.glob(checkpoint + ".data-*")):
    shutil.copy(f, ckpt_dir)
  with open(os.path.join(ckpt_dir, "checkpoint"), "w") as f:
    base = os.path.basename(checkpoint)
    f.write(f'model_checkpoint_path: "{base}"\n'
            f'all_model_checkpoint_paths: "{base}"\n')
  outputs, signatures = {}, {}
  receivers = {"parsing": export_data.parsing_receiver_fn(tf, columns),
               "raw": export_data.raw_receiver_fn(tf)}
  for export_name, receiver_fn in receivers.items():
    exported = estimator.export_saved_model(
        os.path.join(model_dir, export_name), receiver_fn)
    signatures[export_name] = export_data.run_export(
        tf, exported, export_data.feeds(tf, export_name), outputs,
        export_name)
  predictions = list(estimator.predict(predict_input_fn))
  for key in predictions[0]:
    outputs[f"predict/{key}"] = np.stack([p[key] for p in predictions])
  with open(os.path.join(folder, "signatures.json"), "w") as f:
    json.dump({"tensorflow": tf.__version__,
               "global_step": int(estimator.get_variable_value(
                   "global_step")),
               "signatures": signatures}, f, indent=1, sort_keys=True)
  np.savez(os.path.join(folder, "outputs.npz"), **outputs)
  shutil.rmtree(model_dir)
  print(name, checkpoint, sorted(signatures["parsing"]))


def main():
  wanted = sys.argv[1:]
  for name, (build, columns, labels) in export_data.models(tf).items():
    if not wanted or name in wanted:
      record(name, build, columns, labels)


if __name__ == "__main__":
  main()
