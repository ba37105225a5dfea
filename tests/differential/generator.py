"""ProgramSpec -> the Python source of a standalone legacy Estimator program.

The program uses only numpy, pandas and TensorFlow's public API
(`tf.estimator`, `tf.compat.v1`, `tf.keras`, `tf.feature_column`), exactly as
a TF 2.15 user wrote it; it runs unchanged on the real Estimator and, after
`estimator_compat.install()`, here. Usage of a generated program:

  python program.py WORKDIR

Its model_dir is WORKDIR/model (WORKDIR/model_ws for a warm-started second
model). What its calls returned (evaluation results, predictions, hook and
listener observations, exported signatures and their outputs) is written to
WORKDIR/results.json after each call, so a failing call leaves the results
of the calls before it.
"""

import random
from typing import List

from tests.differential import spec as spec_lib

_V1_OPTIMIZERS = {
    "sgd": "tf.compat.v1.train.GradientDescentOptimizer({lr})",
    "adam": "tf.compat.v1.train.AdamOptimizer({lr})",
    "adagrad": "tf.compat.v1.train.AdagradOptimizer({lr})",
    "momentum": "tf.compat.v1.train.MomentumOptimizer({lr}, momentum=0.9)",
    "rmsprop": "tf.compat.v1.train.RMSPropOptimizer({lr})",
    "ftrl": "tf.compat.v1.train.FtrlOptimizer({lr})",
}
_KERAS_OPTIMIZERS = {
    "sgd": "tf.keras.optimizers.legacy.SGD({lr}{extra})",
    "adam": "tf.keras.optimizers.legacy.Adam({lr}{extra})",
    "adagrad": "tf.keras.optimizers.legacy.Adagrad({lr}{extra})",
    "rmsprop": "tf.keras.optimizers.legacy.RMSprop({lr}{extra})",
    "ftrl": "tf.keras.optimizers.legacy.Ftrl({lr}{extra})",
}
_CANNED_NAMES = {"sgd": "SGD", "adam": "Adam", "adagrad": "Adagrad",
                 "rmsprop": "RMSProp", "ftrl": "Ftrl", "momentum": "SGD"}
_V1_DECAYS = {
    "none": "0.05",
    "exponential": ("tf.compat.v1.train.exponential_decay(0.05, "
                    "tf.compat.v1.train.get_global_step(), 3, 0.5)"),
    "piecewise": ("tf.compat.v1.train.piecewise_constant("
                  "tf.compat.v1.train.get_global_step(), [4], [0.05, 0.02])"),
    "polynomial": ("tf.compat.v1.train.polynomial_decay(0.05, "
                   "tf.compat.v1.train.get_global_step(), 10, 0.005)"),
}
_KERAS_DECAYS = {
    "none": "0.05",
    "exponential": "tf.keras.optimizers.schedules.ExponentialDecay(0.05, 3, 0.5)",
    "piecewise": ("tf.keras.optimizers.schedules.PiecewiseConstantDecay("
                  "[4], [0.05, 0.02])"),
    "polynomial": ("tf.keras.optimizers.schedules.PolynomialDecay("
                   "0.05, 10, 0.005)"),
}
_CANNED_CLASSES = {
    "canned_dnn": "DNN{task}",
    "canned_linear": "Linear{task}",
    "canned_dnn_linear": "DNNLinearCombined{task}",
    "canned_baseline": "Baseline{task}",
}

_PRELUDE = '''\
import json
import os
import sys

import numpy as np
{pandas}import tensorflow as tf

WORKDIR = sys.argv[1]
MODEL_DIR = os.path.join(WORKDIR, "model")
RESULTS = {{}}


def _plain(value):
  """JSON-able copy of what a call returned (arrays, bytes, dicts)."""
  if isinstance(value, dict):
    return {{str(k): _plain(v) for k, v in sorted(value.items())}}
  if isinstance(value, (list, tuple)):
    return [_plain(v) for v in value]
  if isinstance(value, bytes):
    return value.decode()
  if isinstance(value, np.ndarray):
    return _plain(value.tolist())
  if isinstance(value, np.generic):
    return value.item()
  return value


def record(key, value):
  RESULTS[key] = _plain(value)
  with open(os.path.join(WORKDIR, "results.json"), "w") as f:
    json.dump(RESULTS, f, sort_keys=True)
'''

_MIRRORED = '''
_cpus = tf.config.list_physical_devices("CPU")
try:
  tf.config.set_logical_device_configuration(
      _cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2)
except RuntimeError:
  pass  # the runtime already started with its devices configured
# Reduced on one device: TF 2.15's default cross-device ops for two CPUs
# hung the Estimator's first training step on a 2-core machine (G5).
STRATEGY = tf.distribute.MirroredStrategy(
    ["/cpu:0", "/cpu:1"],
    cross_device_ops=tf.distribute.ReductionToOneDevice())
'''


def _data(rng: random.Random, rows: int, task: str):
  features = {
      "x0": [round(rng.uniform(-1, 1), 3) for _ in range(rows)],
      "x1": [round(rng.uniform(-1, 1), 3) for _ in range(rows)],
      "c": [rng.choice("abcd") for _ in range(rows)],
      "h": [f"k{rng.randrange(9)}" for _ in range(rows)],
  }
  if task == "regression":
    labels = [round(2 * a - b + rng.uniform(-0.1, 0.1), 3)
              for a, b in zip(features["x0"], features["x1"])]
  else:
    labels = [int(a + 0.3 * (c == "a") > b)
              for a, b, c in zip(features["x0"], features["x1"],
                                 features["c"])]
  return features, labels


def _columns(s: spec_lib.ProgramSpec) -> str:
  wrap = ("tf.feature_column.indicator_column({})"
          if s.dense_wrapper == "indicator"
          else "tf.feature_column.embedding_column({}, 2)")
  lines = ["fc = tf.feature_column",
           'x0 = fc.numeric_column("x0")',
           'x1 = fc.numeric_column("x1")',
           "dense, categorical = [x0], []"]
  if s.bucketized:
    lines += ["x1_buckets = fc.bucketized_column(x1, [-0.5, 0.0, 0.5])",
              "dense.append(x1_buckets)", "linear_x1 = x1_buckets"]
  else:
    lines += ["dense.append(x1)", "linear_x1 = x1"]
  if s.vocabulary:
    lines.append('categorical.append(fc.categorical_column_with_vocabulary_'
                 'list("c", ["a", "b", "c"]))')
  if s.hashed:
    lines.append('categorical.append(fc.categorical_column_with_hash_bucket('
                 '"h", 5))')
  if s.crossed:
    lines.append('categorical.append(fc.crossed_column(["c", x1_buckets], 7))')
  body = "\n  ".join(lines)
  return f'''

def make_columns():
  """(columns for a dense input, columns for a linear model)."""
  {body}
  wrapped = [{wrap.format("column")} for column in categorical]
  return dense + wrapped, [x0, linear_x1] + categorical
'''


def _input_fns(s: spec_lib.ProgramSpec) -> str:
  epochs = "None" if s.input_repeat == "repeated" else "2"
  label_dtype = "np.float32" if s.task == "regression" else "np.int64"
  tf_label_dtype = "tf.float32" if s.task == "regression" else "tf.int64"
  common = f'''

def features_of(data):
  return {{k: np.array(v, np.float32 if k.startswith("x") else object)
          for k, v in data.items()}}


def labels_of(labels):
  return np.array(labels, {label_dtype}).reshape(-1, 1)


def dataset(data, labels, batch, epochs):
  if labels is None:
    ds = tf.data.Dataset.from_tensor_slices(features_of(data))
  else:
    ds = tf.data.Dataset.from_tensor_slices((features_of(data),
                                             labels_of(labels)))
  return ds.batch(batch).repeat(epochs)


def generated(data, labels, batch, epochs):
  keys = sorted(data)

  def rows():
    for i in range(len(data["x0"])):
      row = {{k: data[k][i] for k in keys}}
      yield row if labels is None else (row, [labels[i]])

  row_spec = {{k: tf.TensorSpec([], tf.float32 if k.startswith("x")
                              else tf.string) for k in keys}}
  signature = (row_spec if labels is None
               else (row_spec, tf.TensorSpec([1], {tf_label_dtype})))
  ds = tf.data.Dataset.from_generator(rows, output_signature=signature)
  return ds.batch(batch).repeat(epochs)
'''
  kind = s.input_fn
  if kind in ("dataset", "from_generator", "one_shot_iterator"):
    make = "generated" if kind == "from_generator" else "dataset"
    wrap = ("tf.compat.v1.data.make_one_shot_iterator({}).get_next()"
            if kind == "one_shot_iterator" else "{}")
    fns = f'''

def train_input_fn():
  return {wrap.format(f"{make}(TRAIN, TRAIN_Y, 4, {epochs})")}


def eval_input_fn():
  return {wrap.format(f"{make}(EVAL, EVAL_Y, 2, 1)")}


def predict_input_fn():
  return {wrap.format(f"{make}(PREDICT, None, 2, 1)")}
'''
  elif kind == "tensors":
    fns = '''

def train_input_fn():
  features = {k: tf.constant(v) for k, v in features_of(TRAIN).items()}
  return features, tf.constant(labels_of(TRAIN_Y))


def eval_input_fn():
  features = {k: tf.constant(v) for k, v in features_of(EVAL).items()}
  return features, tf.constant(labels_of(EVAL_Y))


def predict_input_fn():  # a tensor input never ends: predict from a Dataset
  return dataset(PREDICT, None, 2, 1)
'''
  elif kind == "numpy_input_fn":
    fns = f'''
numpy_io = tf.compat.v1.estimator.inputs
train_input_fn = numpy_io.numpy_input_fn(
    x=features_of(TRAIN), y=labels_of(TRAIN_Y), batch_size=4,
    num_epochs={epochs}, shuffle=False)
eval_input_fn = numpy_io.numpy_input_fn(
    x=features_of(EVAL), y=labels_of(EVAL_Y), batch_size=2, num_epochs=1,
    shuffle=False)
predict_input_fn = numpy_io.numpy_input_fn(
    x=features_of(PREDICT), batch_size=2, num_epochs=1, shuffle=False)
'''
  else:  # pandas_input_fn
    fns = f'''


def frame(data):
  """Strings as object columns (pandas 3 would make them `str`, which
  TensorFlow cannot feed)."""
  return pd.DataFrame(data).astype(
      {{k: np.float32 if k.startswith("x") else object for k in data}})


pandas_io = tf.compat.v1.estimator.inputs
train_input_fn = pandas_io.pandas_input_fn(
    x=frame(TRAIN), y=pd.Series(TRAIN_Y, dtype={label_dtype}),
    batch_size=4, num_epochs={epochs}, shuffle=False)
eval_input_fn = pandas_io.pandas_input_fn(
    x=frame(EVAL), y=pd.Series(EVAL_Y, dtype={label_dtype}),
    batch_size=2, num_epochs=1, shuffle=False)
predict_input_fn = pandas_io.pandas_input_fn(
    x=frame(PREDICT), batch_size=2, num_epochs=1, shuffle=False)
'''
  return common + fns


def _learning_rate(s: spec_lib.ProgramSpec) -> str:
  table = _V1_DECAYS if s.optimizer_family == "v1" else _KERAS_DECAYS
  return table[s.lr_decay]


def _optimizer_expr(s: spec_lib.ProgramSpec) -> str:
  if s.optimizer_family == "v1":
    return _V1_OPTIMIZERS[s.optimizer].format(lr=_learning_rate(s))
  extra = ", clipnorm=1.0" if s.clipping else ""
  return _KERAS_OPTIMIZERS[s.optimizer].format(lr=_learning_rate(s),
                                               extra=extra)


def _metric_lines(s: spec_lib.ProgramSpec, labels: str, value: str,
                  indent: str) -> str:
  """Lines that fill `metrics` (a dict) from float labels and a value."""
  if s.metrics == "v1":
    if s.task == "regression":
      lines = [f'metrics["mae"] = tf.compat.v1.metrics.mean_absolute_error('
               f'{labels}, {value})',
               f'metrics["mean_value"] = tf.compat.v1.metrics.mean({value})']
    else:
      lines = [f'metrics["acc"] = tf.compat.v1.metrics.accuracy({labels}, '
               f'tf.cast({value} > 0.5, tf.float32))',
               f'metrics["auc"] = tf.compat.v1.metrics.auc({labels}, '
               f'{value})']
  else:
    if s.task == "regression":
      lines = ['mae = tf.keras.metrics.MeanAbsoluteError(name="mae")',
               f"mae.update_state({labels}, {value})",
               'mean_value = tf.keras.metrics.Mean(name="mean_value")',
               f"mean_value.update_state({value})",
               'metrics["mae"] = mae', 'metrics["mean_value"] = mean_value']
    else:
      lines = ['acc = tf.keras.metrics.BinaryAccuracy(name="acc")',
               f"acc.update_state({labels}, {value})",
               'auc = tf.keras.metrics.AUC(name="auc")',
               f"auc.update_state({labels}, {value})",
               'metrics["acc"] = acc', 'metrics["auc"] = auc']
  return "\n".join(indent + line for line in lines)


def _custom_model(s: spec_lib.ProgramSpec) -> str:
  training = "mode == tf.estimator.ModeKeys.TRAIN"
  if s.model == "v1_layers":
    body = ["net = tf.compat.v1.feature_column.input_layer(features, "
            "DENSE_COLUMNS)",
            'net = tf.compat.v1.layers.dense(net, 4, activation=tf.nn.relu, '
            'name="hidden")']
    if s.body_extra == "batchnorm":
      body.append(f"net = tf.compat.v1.layers.batch_normalization(net, "
                  f'training={training}, name="bn")')
    elif s.body_extra == "dropout":
      body.append(f"net = tf.compat.v1.layers.dropout(net, rate=0.3, "
                  f"training={training})")
    body.append('logits = tf.compat.v1.layers.dense(net, 1, name="logits")')
  else:
    body = ['net = tf.keras.layers.DenseFeatures(DENSE_COLUMNS, '
            'name="features")(features)',
            'net = tf.keras.layers.Dense(4, activation="relu", '
            'name="hidden")(net)']
    if s.body_extra == "batchnorm":
      body.append('net = tf.keras.layers.BatchNormalization(name="bn")('
                  f"net, training={training})")
    elif s.body_extra == "dropout":
      body.append('net = tf.keras.layers.Dropout(0.3, name="dropout")('
                  f"net, training={training})")
    body.append('logits = tf.keras.layers.Dense(1, name="logits")(net)')
  if s.task == "regression":
    predictions = '{"value": logits[:, 0]}'
    value = "logits"
    loss = "tf.compat.v1.losses.mean_squared_error(labels, logits)"
  else:
    predictions = ('{"probability": tf.sigmoid(logits[:, 0]), '
                   '"class": tf.cast(logits[:, 0] > 0, tf.int64)}')
    value = "tf.sigmoid(logits)"
    loss = "tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)"
  if s.optimizer_family == "v1":
    if s.clipping:
      train = [f"optimizer = {_optimizer_expr(s)}",
               "grads, variables = zip(*optimizer.compute_gradients(loss))",
               "grads, _ = tf.clip_by_global_norm(grads, 1.0)",
               "train_op = optimizer.apply_gradients(zip(grads, variables), "
               "global_step=global_step)"]
    else:
      train = [f"optimizer = {_optimizer_expr(s)}",
               "train_op = optimizer.minimize(loss, global_step=global_step)"]
  else:
    train = [f"optimizer = {_optimizer_expr(s)}",
             "optimizer.iterations = global_step",
             "train_op = optimizer.get_updates(loss, "
             "tf.compat.v1.trainable_variables())[0]"]
  if s.model == "v1_layers" and s.body_extra == "batchnorm":
    train = (["update_ops = tf.compat.v1.get_collection("
              "tf.compat.v1.GraphKeys.UPDATE_OPS)",
              "with tf.control_dependencies(update_ops):"]
             + ["  " + line for line in train])
  hooks = ("[tf.estimator.NanTensorHook(loss), tf.estimator."
           'LoggingTensorHook({"loss": loss}, every_n_iter=3)]'
           if s.standard_hooks != "none" else "None")
  params, init_from = "{}", ""
  if s.warm_start_by == "init_from_checkpoint":
    # Every variable the store holds once the layers are built (global_step
    # too) starts from the checkpoint when the model_dir has none of its own.
    body.append('if params.get("init_from"):\n    tf.compat.v1.train.'
                'init_from_checkpoint(params["init_from"], {"/": "/"})')
    params = '{"init_from": init_from} if init_from else {}'
    init_from = ", init_from=None"
  b = "\n  ".join(body)
  t = "\n    ".join(train)
  m = _metric_lines(s, "labels", value, "  ")
  return f'''

def model_fn(features, labels, mode, params, config):
  {b}
  predictions = {predictions}
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions=predictions)
  labels = tf.reshape(tf.cast(labels, tf.float32), [-1, 1])
  loss = tf.identity({loss}, name="loss_value")
  metrics = {{}}
{m}
  train_op = None
  if mode == tf.estimator.ModeKeys.TRAIN:
    global_step = tf.compat.v1.train.get_global_step()
    {t}
  return tf.estimator.EstimatorSpec(
      mode, predictions=predictions, loss=loss, train_op=train_op,
      eval_metric_ops=metrics, training_hooks={hooks})


def make_estimator(model_dir=MODEL_DIR, warm_start_from=None{init_from}):
  return tf.estimator.Estimator(
      model_fn, model_dir=model_dir, config=make_config(),
      params={params}, warm_start_from=warm_start_from)
'''


def _canned_model(s: spec_lib.ProgramSpec) -> str:
  task = "Regressor" if s.task == "regression" else "Classifier"
  cls = _CANNED_CLASSES[s.model].format(task=task)
  namespace = ("tf.compat.v1.estimator" if s.optimizer_family == "v1"
               else "tf.estimator")
  if s.strategy == "mirrored":
    # An optimizer instance sets `iterations` per replica: a name.
    optimizer = f'"{_CANNED_NAMES[s.optimizer]}"'
  elif s.optimizer_family == "v1" and s.lr_decay != "none":
    optimizer = f"lambda: {_optimizer_expr(s)}"  # the decay needs the graph
  else:
    optimizer = _optimizer_expr(s)
  args = {
      "canned_dnn": ["hidden_units=[4]", "feature_columns=DENSE_COLUMNS",
                     f"optimizer={optimizer}"],
      "canned_linear": ["feature_columns=LINEAR_COLUMNS",
                        f"optimizer={optimizer}"],
      "canned_dnn_linear": ["linear_feature_columns=LINEAR_COLUMNS",
                            "dnn_feature_columns=DENSE_COLUMNS",
                            "dnn_hidden_units=[4]",
                            f"dnn_optimizer={optimizer}"],
      "canned_baseline": [f"optimizer={optimizer}"],
  }[s.model]
  value = ('predictions["predictions"]' if s.task == "regression"
           else 'predictions["logistic"]')
  m = _metric_lines(s, "tf.cast(labels, tf.float32)", value, "  ")
  a = ",\n      ".join(args)
  # Baseline* take no warm_start_from.
  warm = ("" if s.model == "canned_baseline"
          else ",\n      warm_start_from=warm_start_from")
  return f'''

def metric_fn(labels, predictions):
  labels = tf.reshape(labels, [-1, 1])
  metrics = {{}}
{m}
  return metrics


def make_estimator(model_dir=MODEL_DIR, warm_start_from=None):
  estimator = {namespace}.{cls}(
      {a},
      model_dir=model_dir, config=make_config(){warm})
  return tf.estimator.add_metrics(estimator, metric_fn)
'''


def _config(s: spec_lib.ProgramSpec) -> str:
  args = [f"tf_random_seed={s.tf_random_seed}",
          f"keep_checkpoint_max={s.keep_checkpoint_max}",
          f"save_summary_steps={s.save_summary_steps}",
          f"log_step_count_steps={s.log_step_count_steps}"]
  if s.checkpoint_cadence.startswith("steps_"):
    args.append(f"save_checkpoints_steps={s.checkpoint_cadence[6:]}")
  elif s.checkpoint_cadence == "secs_1000":
    args.append("save_checkpoints_secs=1000")
  if s.strategy == "mirrored":
    args.append("train_distribute=STRATEGY")
  a = ",\n      ".join(args)
  return f'''

def make_config():
  return tf.estimator.RunConfig(
      {a})
'''


def _hooks(s: spec_lib.ProgramSpec) -> str:
  lines = ["", "", "def train_hooks():", "  hooks = []"]
  if s.standard_hooks == "stop_at_step":
    lines.append("  hooks.append(tf.estimator.StopAtStepHook("
                 f"num_steps={max(1, s.train_steps - 1)}))")
  elif s.standard_hooks == "step_counter":
    lines.append("  hooks.append(tf.estimator.StepCounterHook("
                 "every_n_steps=2))")
  if s.custom_hooks:
    lines.append("  hooks.append(RecordingHook())")
  lines.append("  return hooks")
  source = "\n".join(lines) + "\n"
  if s.custom_hooks:
    fetch = ('"loss": tf.compat.v1.get_default_graph().get_tensor_by_name('
             '"loss_value:0")' if s.custom else "")
    source = f'''
OBSERVED = {{"steps": [], "losses": [], "saves": [], "ends": []}}


class RecordingHook(tf.estimator.SessionRunHook):
  """Records the global step (and loss) seen after each step."""

  def begin(self):
    self._step = tf.compat.v1.train.get_global_step()
    self._fetches = {{{fetch}}}

  def before_run(self, run_context):
    return tf.estimator.SessionRunArgs(self._fetches)

  def after_run(self, run_context, run_values):
    # Read after the step: fetched beside the train op, the variable's read
    # races its increment on the real Estimator (seeds 36, 40 read either).
    OBSERVED["steps"].append(int(run_context.session.run(self._step)))
    if "loss" in run_values.results:
      OBSERVED["losses"].append(float(run_values.results["loss"]))

  def end(self, session):
    step = tf.compat.v1.train.get_global_step()
    OBSERVED["ends"].append(int(session.run(step)))


class RecordingListener(tf.estimator.CheckpointSaverListener):
  """Records the global step of every checkpoint save."""

  def after_save(self, session, global_step_value):
    OBSERVED["saves"].append(int(global_step_value))
''' + source + '''

def saving_listeners():
  return [RecordingListener()]
'''
  else:
    source += '''

def saving_listeners():
  return None
'''
  return source


def _serving(s: spec_lib.ProgramSpec) -> str:
  del s
  return '''

def serving_input_receiver_fn():
  receiver = {k: tf.compat.v1.placeholder(
      tf.float32 if k.startswith("x") else tf.string, [None], name=k)
              for k in sorted(PREDICT)}
  return tf.estimator.export.build_raw_serving_input_receiver_fn(receiver)()


def serve(path):
  """Each signature of the SavedModel at `path`, and its outputs."""
  loaded = tf.saved_model.load(path.decode() if isinstance(path, bytes)
                               else path)
  inputs = features_of(PREDICT)
  served = {}
  for key in sorted(loaded.signatures):
    signature = loaded.signatures[key]
    names = sorted(signature.structured_input_signature[1])
    entry = {"inputs": names, "outputs": sorted(signature.structured_outputs)}
    if set(names) <= set(inputs):
      outputs = signature(**{n: tf.constant(inputs[n]) for n in names})
      entry["served"] = {k: v.numpy() for k, v in outputs.items()}
    served[key] = entry
  return served


def exports_under(folder):
  """The export directories under `folder` (one per export, by name)."""
  found = {}
  for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
    found[name] = len([d for d in os.listdir(os.path.join(folder, name))
                       if d.isdigit()])
  return found
'''


def _sequence(s: spec_lib.ProgramSpec) -> str:
  eval_steps = "1" if s.input_fn == "tensors" else "None"
  steps = s.train_steps
  train = (f"estimator.train(train_input_fn, steps={steps}, "
           f"hooks=train_hooks(), saving_listeners=saving_listeners())")
  lines = ["estimator = make_estimator()"]
  seq = s.sequence
  if seq in ("train_eval_predict", "export"):
    lines += [train,
              'record("global_step", estimator.get_variable_value('
              '"global_step"))',
              f'record("evaluate", estimator.evaluate(eval_input_fn, '
              f'steps={eval_steps}))']
    if seq == "export":
      lines += ["path = estimator.export_saved_model("
                'os.path.join(WORKDIR, "export"), serving_input_receiver_fn)',
                'record("export", serve(path))']
    lines.append('record("predict", list(estimator.predict('
                 'predict_input_fn)))')
  elif seq == "resume":
    lines += [train,
              'record("first_step", estimator.get_variable_value('
              '"global_step"))',
              "estimator = make_estimator()  # a new Estimator resumes",
              f"estimator.train(train_input_fn, max_steps={steps + 3}, "
              "hooks=train_hooks())",
              'record("global_step", estimator.get_variable_value('
              '"global_step"))',
              f'record("evaluate", estimator.evaluate(eval_input_fn, '
              f'steps={eval_steps}))',
              'record("predict", list(estimator.predict('
              'predict_input_fn)))']
  elif seq.startswith("tae_"):
    exporter = {
        "tae_latest": ('tf.estimator.LatestExporter("latest", '
                       "serving_input_receiver_fn, exports_to_keep=2)"),
        "tae_final": ('tf.estimator.FinalExporter("final", '
                      "serving_input_receiver_fn)"),
        "tae_best": ('tf.estimator.BestExporter(name="best", '
                     "serving_input_receiver_fn=serving_input_receiver_fn, "
                     "exports_to_keep=2)"),
    }[seq]
    lines += [f"train_spec = tf.estimator.TrainSpec(train_input_fn, "
              f"max_steps={steps}, hooks=train_hooks())",
              f"eval_spec = tf.estimator.EvalSpec(eval_input_fn, "
              f"steps={eval_steps}, exporters=[{exporter}], "
              "start_delay_secs=0, throttle_secs=0)",
              "outcome = tf.estimator.train_and_evaluate(estimator, "
              "train_spec, eval_spec)",
              'record("train_and_evaluate", outcome[0] if outcome else None)',
              'record("global_step", estimator.get_variable_value('
              '"global_step"))',
              'record("exports", exports_under(os.path.join(MODEL_DIR, '
              '"export")))',
              'record("predict", list(estimator.predict('
              'predict_input_fn)))']
  elif s.warm_start_by == "init_from_checkpoint":
    lines += [train,
              'warm = make_estimator(os.path.join(WORKDIR, "model_ws"), '
              "init_from=MODEL_DIR)",
              "warm.train(train_input_fn, steps=3)",
              'record("global_step", warm.get_variable_value("global_step"))',
              f'record("evaluate", warm.evaluate(eval_input_fn, '
              f'steps={eval_steps}))',
              'record("predict", list(warm.predict(predict_input_fn)))']
  else:  # warm_start
    lines += [train,
              'settings = tf.estimator.WarmStartSettings('
              'ckpt_to_initialize_from=MODEL_DIR, vars_to_warm_start=".*")',
              'warm = make_estimator(os.path.join(WORKDIR, "model_ws"), '
              "warm_start_from=settings)",
              "warm.train(train_input_fn, steps=3)",
              'record("global_step", warm.get_variable_value("global_step"))',
              f'record("evaluate", warm.evaluate(eval_input_fn, '
              f'steps={eval_steps}))',
              'record("predict", list(warm.predict(predict_input_fn)))']
  if s.custom_hooks:
    lines.append('record("observed", OBSERVED)')
  body = "\n".join(lines)
  return f'''

{body}
'''


def generate(s: spec_lib.ProgramSpec) -> str:
  """The source of program `s` (deterministic: the same spec, the same text)."""
  rng = random.Random(f"data-{s.seed}")
  train, train_y = _data(rng, 8, s.task)
  evaluation, eval_y = _data(rng, 4, s.task)
  predict, _ = _data(rng, 4, s.task)
  parts: List[str] = [
      f'"""Legacy Estimator program generated from seed {s.seed}.\n\n'
      f"Usage: python program.py WORKDIR (model_dir: WORKDIR/model).\n"
      f"Spec: {s.features()}\n"
      '"""\n\n',
      _PRELUDE.format(pandas="import pandas as pd\n"
                      if s.input_fn == "pandas_input_fn" else ""),
  ]
  if s.strategy == "mirrored":
    parts.append(_MIRRORED)
  parts.append(f"\nTRAIN = {train!r}\nTRAIN_Y = {train_y!r}\n"
               f"EVAL = {evaluation!r}\nEVAL_Y = {eval_y!r}\n"
               f"PREDICT = {predict!r}\n")
  parts.append(_columns(s))
  parts.append("\nDENSE_COLUMNS, LINEAR_COLUMNS = make_columns()\n")
  parts.append(_input_fns(s))
  parts.append(_config(s))
  parts.append(_custom_model(s) if s.custom else _canned_model(s))
  parts.append(_hooks(s))
  parts.append(_serving(s))
  parts.append(_sequence(s))
  return "".join(parts)
