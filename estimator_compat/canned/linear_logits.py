"""The linear model over feature columns: the logits of Linear* and wide & deep.

Internal API (used by canned/linear.py and by DNNLinearCombined*):

* `linear_logits_v2(features, feature_columns, units, sparse_combiner="sum",
  name="linear/linear_model") -> (logits, variables)`: the `tf.estimator`
  (v2) linear model, a Keras `LinearModel` over v2 feature columns. Called
  outside any variable scope with the default name, its variables are
  `linear/linear_model/<column>/weights` and
  `linear/linear_model/bias_weights`; wide & deep calls it with
  `name="linear_model"` inside `variable_scope("linear")`, which gives the
  same names. `variables` are all the model's variables, bias included (what
  the v2 head trains).
* `linear_logits_v1(features, feature_columns, units, sparse_combiner="sum")
  -> (logits, variables)`: the `tf.compat.v1.estimator` linear model over v1
  (or v2) feature columns. Call it inside `variable_scope("linear",
  partitioner=...)`: variables are `linear/linear_model/<column>/weights`
  (`.../weights/part_<i>` when partitioned) and
  `linear/linear_model/bias_weights`; `variables` are the column weights,
  partitions expanded, without the bias.

Both write TensorFlow 2.15's summaries: `bias` (a scalar for one unit, a
histogram otherwise) and `fraction_of_zero_weights` (of the column weights).

* `check_partitioned_training_engine()`: call before training partitioned
  weights with a `tf.compat.v1.train` optimizer (the v1 linear model always
  partitions): on the function engine it raises NeedsGraphEngine, since the
  TF1 optimizers name and save the slots of partitions from their graph ops.
"""

from typing import Any, Dict, List, Sequence, Tuple

import tensorflow as tf
from tensorflow.python.feature_column import feature_column as fc_v1
from tensorflow.python.feature_column import feature_column_lib
from tensorflow.python.feature_column import feature_column_v2 as fc_v2
from tensorflow.python.feature_column import serialization
from tensorflow.python.ops import variable_scope

from estimator_compat.errors import GRAPH_ENGINE_FIX, NeedsGraphEngine

_V1_COLUMNS_MESSAGE = (
    "Received a feature column from TensorFlow v1, but this is a TensorFlow "
    "v2 Estimator. Please either use v2 feature columns (accessible via "
    "tf.feature_column.* in TF 2.x) with this Estimator, or switch to a v1 "
    "Estimator for use with v1 feature columns (accessible via "
    "tf.compat.v1.estimator.* and tf.compat.v1.feature_column.*, "
    "respectively.")


def check_partitioned_training_engine() -> None:
  """Raises NeedsGraphEngine when a function engine traces the model_fn.

  Raises:
    NeedsGraphEngine: the model_fn is traced into a function graph.
  """
  if tf.inside_function():
    raise NeedsGraphEngine(
        "The tf.compat.v1.estimator linear model partitions its weights "
        "(.../weights/part_<i>), and a tf.compat.v1.train optimizer creates "
        "and saves the slots of partitioned variables (.../part_<i>/Ftrl) "
        "from their TF1 graph ops, which needs a TF1 Session graph to train. "
        f"{GRAPH_ENGINE_FIX}")


def expand_partitions(variables: Sequence[Any]) -> List[Any]:
  """The variables, a PartitionedVariable replaced by its parts."""
  expanded = []
  for variable in variables:
    if isinstance(variable, (tf.Variable, tf.Tensor)):
      expanded.append(variable)
    else:
      expanded.extend(list(variable))
  return expanded


def fraction_of_zero(variables: Sequence[Any]) -> tf.Tensor:
  """The fraction of zero entries over all `variables` together (sparsity)."""
  with tf.name_scope("zero_fraction"):
    flat = tf.nest.flatten(list(variables))
    with tf.name_scope("total_size"):
      sizes = [tf.size(v, out_type=tf.int64) for v in flat]
      total_size = tf.math.add_n(sizes)
    with tf.name_scope("total_zero"):
      zero_counts = []
      for variable, size in zip(flat, sizes):
        zero_counts.append(tf.compat.v1.cond(
            tf.equal(size, 0),
            true_fn=lambda: tf.constant(0.0),
            false_fn=lambda v=variable, s=size: (
                tf.math.zero_fraction(v) * tf.cast(s, tf.float32)),
            name="zero_count"))
      total_zero = tf.math.add_n(zero_counts)
    with tf.name_scope("compute"):
      fraction = total_zero / tf.cast(total_size, tf.float32,
                                      name="float32_size")
    return tf.identity(fraction, name="zero_fraction_or_nan")


def _bias_summary(bias_parts: List[Any], units: int) -> None:
  if units > 1:
    tf.compat.v1.summary.histogram("bias", bias_parts)
  else:
    tf.compat.v1.summary.scalar("bias", bias_parts[0][0])


class _LinearModelLayer(tf.keras.layers.Layer):
  """The weighted sum of v2 feature columns plus a bias, one weight per
  column held by a feature-column state manager (as TF 2.15 named them)."""

  def __init__(self, feature_columns, units=1, sparse_combiner="sum",
               trainable=True, name=None, **kwargs):
    super().__init__(name=name, trainable=trainable, **kwargs)
    self._feature_columns = fc_v2._normalize_feature_columns(  # pylint: disable=protected-access
        feature_columns)
    for column in self._feature_columns:
      if not isinstance(column, (fc_v2.DenseColumn, fc_v2.CategoricalColumn)):
        raise ValueError(
            "Items of feature_columns must be either a DenseColumn or "
            f"CategoricalColumn. Given: {column}")
    self._units = units
    self._sparse_combiner = sparse_combiner
    self._state_manager = fc_v2._StateManagerImpl(self, self.trainable)  # pylint: disable=protected-access
    self.bias = None

  def build(self, _):
    # Variables take the layer's name as their scope, whatever the Keras
    # name scope, as the real LinearModel's did.
    with variable_scope._pure_variable_scope(self.name):  # pylint: disable=protected-access
      for column in self._feature_columns:
        scope = fc_v2._sanitize_column_name_for_variable_scope(column.name)  # pylint: disable=protected-access
        with variable_scope._pure_variable_scope(scope):  # pylint: disable=protected-access
          column.create_state(self._state_manager)
          if isinstance(column, fc_v2.CategoricalColumn):
            rows = column.num_buckets
          else:
            rows = column.variable_shape.num_elements()
          self._state_manager.create_variable(
              column, name="weights", dtype=tf.float32,
              shape=(rows, self._units),
              initializer=tf.keras.initializers.zeros(),
              trainable=self.trainable)
      self.bias = self.add_weight(
          name="bias_weights", dtype=tf.float32, shape=[self._units],
          initializer=tf.keras.initializers.zeros(), trainable=self.trainable,
          use_resource=True, getter=tf.compat.v1.get_variable)
    super().build(None)

  def call(self, features):
    if not isinstance(features, dict):
      raise ValueError(
          f"We expected a dictionary here. Instead we got: {features}")
    with tf.name_scope(self.name):
      cache = fc_v2.FeatureTransformationCache(features)
      sums = []
      for column in self._feature_columns:
        scope = fc_v2._sanitize_column_name_for_variable_scope(column.name)  # pylint: disable=protected-access
        with tf.name_scope(scope):
          sums.append(fc_v2._create_weighted_sum(  # pylint: disable=protected-access
              column=column, transformation_cache=cache,
              state_manager=self._state_manager,
              sparse_combiner=self._sparse_combiner,
              weight_var=self._state_manager.get_variable(column, "weights")))
      fc_v2._verify_static_batch_size_equality(  # pylint: disable=protected-access
          sums, self._feature_columns)
      no_bias = tf.math.add_n(sums, name="weighted_sum_no_bias")
      return tf.nn.bias_add(no_bias, self.bias, name="weighted_sum")

  def get_config(self) -> Dict[str, Any]:
    config = dict(super().get_config())
    config.update(
        feature_columns=serialization.serialize_feature_columns(
            self._feature_columns),
        units=self._units, sparse_combiner=self._sparse_combiner)
    return config

  @classmethod
  def from_config(cls, config, custom_objects=None):
    config = dict(config)
    columns = serialization.deserialize_feature_columns(
        config.pop("feature_columns"), custom_objects=custom_objects)
    return cls(feature_columns=columns, **config)


class LinearModel(tf.keras.Model):
  """A linear prediction (`units` outputs) over v2 feature columns.

  Categorical columns get one weight per bucket, as an indicator column
  would; dense columns one per element; `sparse_combiner` ("sum", "mean",
  "sqrtn") reduces a multivalent categorical column per example. Variables
  are `<name>/<column>/weights` and `<name>/bias_weights`.
  """

  def __init__(self, feature_columns, units: int = 1,
               sparse_combiner: str = "sum", trainable: bool = True,
               name=None, **kwargs):
    super().__init__(name=name, **kwargs)
    self.layer = _LinearModelLayer(feature_columns, units, sparse_combiner,
                                   trainable, name=self.name, **kwargs)

  def call(self, features):
    """The `[batch_size, units]` float32 predictions for `features`."""
    return self.layer(features)

  @property
  def bias(self):
    return self.layer.bias


def linear_logits_v2(features: Dict[str, Any], feature_columns: Sequence[Any],
                     units: int, sparse_combiner: str = "sum",
                     name: str = "linear/linear_model"
                     ) -> Tuple[tf.Tensor, List[tf.Variable]]:
  """Logits of the v2 linear model and all its variables (see module doc).

  Raises:
    ValueError: a v1 feature column was given.
  """
  if not feature_column_lib.is_feature_column_v2(feature_columns):
    raise ValueError(_V1_COLUMNS_MESSAGE)
  model = LinearModel(feature_columns=feature_columns, units=units,
                      sparse_combiner=sparse_combiner, name=name)
  logits = model(features)
  bias = model.bias
  column_weights = [v for v in model.variables if v is not bias]
  _bias_summary([bias], units)
  tf.compat.v1.summary.scalar(
      "fraction_of_zero_weights",
      fraction_of_zero(expand_partitions(column_weights)))
  return logits, model.variables


def linear_logits_v1(features: Dict[str, Any], feature_columns: Sequence[Any],
                     units: int, sparse_combiner: str = "sum"
                     ) -> Tuple[tf.Tensor, List[Any]]:
  """Logits of the v1 linear model and its column weights (see module doc).

  Call inside the caller's `variable_scope` (with its partitioner).
  """
  if feature_column_lib.is_feature_column_v2(feature_columns):
    model = LinearModel(feature_columns=feature_columns, units=units,
                        sparse_combiner=sparse_combiner, name="linear_model")
    logits = model(features)
    bias = expand_partitions([model.bias])
    weights = [v for v in expand_partitions(model.variables)
               if all(v is not b for b in bias)]
  else:
    model = fc_v1._LinearModel(  # pylint: disable=protected-access
        feature_columns=feature_columns, units=units,
        sparse_combiner=sparse_combiner, name="linear_model")
    logits = model(features)
    columns_to_variables = dict(model.cols_to_vars())
    bias = columns_to_variables.pop("bias")
    weights = expand_partitions(
        [v for vs in columns_to_variables.values() for v in vs])
  _bias_summary(bias, units)
  tf.compat.v1.summary.scalar("fraction_of_zero_weights",
                              fraction_of_zero(weights))
  return logits, weights
