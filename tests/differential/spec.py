"""The choices one generated legacy program is made of, drawn from a seed.

`draw(seed)` draws every dimension of DIMENSIONS with `random.Random(seed)`
and then settles the combinations the Estimator itself refuses or that can
never be deterministic (e.g. an optimizer instance under MirroredStrategy,
an endless input with `evaluate(steps=None)`), so a spec is always a program
the real Estimator runs. The same seed gives the same spec in any Python.
"""

import dataclasses
import random
from typing import Dict, Optional, Tuple

# Every dimension and the values it takes (issue 23, part 3).
DIMENSIONS: Dict[str, Tuple] = {
    "model": ("v1_layers", "keras_layers", "canned_dnn", "canned_linear",
              "canned_dnn_linear", "canned_baseline"),
    "task": ("regression", "binary"),
    "body_extra": ("none", "batchnorm", "dropout"),
    "bucketized": (False, True),
    "vocabulary": (False, True),
    "hashed": (False, True),
    "crossed": (False, True),
    "dense_wrapper": ("indicator", "embedding"),
    "optimizer_family": ("v1", "keras"),
    "optimizer": ("sgd", "adam", "adagrad", "momentum", "rmsprop", "ftrl"),
    "lr_decay": ("none", "exponential", "piecewise", "polynomial"),
    "clipping": (False, True),
    "metrics": ("v1", "keras"),
    "input_fn": ("dataset", "tensors", "one_shot_iterator", "numpy_input_fn",
                 "pandas_input_fn", "from_generator"),
    "input_repeat": ("finite", "repeated"),
    "checkpoint_cadence": ("default", "steps_2", "steps_5", "secs_1000"),
    "keep_checkpoint_max": (1, 2, 5),
    "save_summary_steps": (1, 3, 100),
    "log_step_count_steps": (1, 5, 100),
    "tf_random_seed": (None, 1, 42),
    "standard_hooks": ("none", "stop_at_step", "step_counter"),
    "custom_hooks": (False, True),
    "sequence": ("train_eval_predict", "resume", "export", "tae_latest",
                 "tae_final", "tae_best", "warm_start"),
    "train_steps": (3, 6, 10),
    "strategy": ("none", "mirrored"),
    # How the warm_start sequence's second model starts from the first
    # (v1_layers model_fns only): WarmStartSettings, or the model_fn's own
    # tf.compat.v1.train.init_from_checkpoint (finding G18).
    "warm_start_by": ("settings", "init_from_checkpoint"),
}
# Drawn after every other dimension (and the strategy's own draw), so that
# adding it left the earlier draws of every seed as they were.
_DRAWN_LAST = ("warm_start_by",)

# Keras optimizers (tf.keras.optimizers.legacy) by spec name.
KERAS_OPTIMIZERS = ("sgd", "adam", "adagrad", "rmsprop", "ftrl")
CUSTOM_MODELS = ("v1_layers", "keras_layers")
# Input shapes that return a Dataset (the only ones a strategy distributes).
DATASET_INPUTS = ("dataset", "from_generator")


@dataclasses.dataclass(frozen=True)
class ProgramSpec:
  """One program's choices (see DIMENSIONS for each field's values)."""
  seed: int
  model: str
  task: str
  body_extra: str
  bucketized: bool
  vocabulary: bool
  hashed: bool
  crossed: bool
  dense_wrapper: str
  optimizer_family: str
  optimizer: str
  lr_decay: str
  clipping: bool
  metrics: str
  input_fn: str
  input_repeat: str
  checkpoint_cadence: str
  keep_checkpoint_max: int
  save_summary_steps: int
  log_step_count_steps: int
  tf_random_seed: Optional[int]
  standard_hooks: str
  custom_hooks: bool
  sequence: str
  train_steps: int
  strategy: str
  warm_start_by: str

  @property
  def custom(self) -> bool:
    """Whether the program has its own model_fn (not a canned estimator)."""
    return self.model in CUSTOM_MODELS

  @property
  def endless_input(self) -> bool:
    """Whether the training input never ends."""
    return self.input_fn == "tensors" or self.input_repeat == "repeated"

  def features(self) -> Dict[str, object]:
    """The spec as a flat dict (dimension -> value), for reports."""
    return {k: v for k, v in dataclasses.asdict(self).items() if k != "seed"}


def _settle(choices: Dict[str, object]) -> Dict[str, object]:
  """Adjusts combinations the Estimator refuses or that cannot be exact."""
  c = dict(choices)
  if c["strategy"] == "mirrored":
    # Only a Dataset is distributed; a model_fn's optimizer instance sets
    # `iterations` per replica (fails on TF 2.15 too): v1 optimizers only.
    if c["input_fn"] not in DATASET_INPUTS:
      c["input_fn"] = "dataset"
    # Canned: v2 (the real Estimator hangs training a v1 canned model's
    # partitioned variables under MirroredStrategy; seed 11).
    c["optimizer_family"] = "v1" if c["model"] in CUSTOM_MODELS else "keras"
    c["custom_hooks"] = False  # fetches by tensor name are per replica
    if c["sequence"] == "warm_start":
      c["sequence"] = "train_eval_predict"
  if c["optimizer_family"] == "keras" and c["optimizer"] not in KERAS_OPTIMIZERS:
    c["optimizer"] = "adam" if c["optimizer"] == "momentum" else "sgd"
  if not c["model"] in CUSTOM_MODELS:
    c["body_extra"] = "none"
    if c["optimizer_family"] == "v1":
      c["clipping"] = False  # a v1 canned optimizer takes no clipnorm
  if c["model"] == "canned_baseline":
    for key in ("bucketized", "vocabulary", "hashed", "crossed"):
      c[key] = False
    if c["sequence"] == "warm_start":
      c["sequence"] = "resume"  # Baseline* take no warm_start_from
  if c["crossed"]:
    c["bucketized"] = True  # the cross is of `c` and the bucketized x1
    c["vocabulary"] = True
  if c["body_extra"] == "dropout" and c["tf_random_seed"] is None:
    # Unseeded Dropout masks differ between two real-Estimator runs (seed 28).
    c["tf_random_seed"] = 1
  if c["input_fn"] == "tensors":
    c["input_repeat"] = "repeated"
  if c["checkpoint_cadence"] == "secs_1000" and c["sequence"].startswith("tae"):
    # train_and_evaluate evaluates after each save; keep its saves by steps.
    c["checkpoint_cadence"] = "steps_5"
  if c["sequence"] != "warm_start" or c["model"] != "v1_layers":
    c["warm_start_by"] = "settings"
  return c


def draw(seed: int) -> ProgramSpec:
  """The spec of program `seed` (the same in every Python version)."""
  rng = random.Random(seed)
  choices = {name: values[rng.randrange(len(values))]
             for name, values in DIMENSIONS.items() if name not in _DRAWN_LAST}
  # MirroredStrategy is slow to set up: about one program in eight.
  choices["strategy"] = "mirrored" if rng.random() < 0.125 else "none"
  for name in _DRAWN_LAST:
    values = DIMENSIONS[name]
    choices[name] = values[rng.randrange(len(values))]
  return ProgramSpec(seed=seed, **_settle(choices))
