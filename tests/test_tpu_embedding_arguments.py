"""TPU embedding settings' argument checks (tpu/embedding_*.py).

Each error's wording (before our "Fix:") is what TF 2.15's
tf.compat.v1.tpu.experimental.*Parameters and
tf.compat.v1.estimator.tpu.experimental.EmbeddingConfigSpec raised for the
same arguments.
"""

import pytest
import tensorflow as tf

from estimator_compat.tpu import embedding_parameters as ep
from estimator_compat.tpu.embedding_config_spec import EmbeddingConfigSpec


@pytest.mark.parametrize("make, words", [
    (lambda: ep.AdagradParameters(0.1, initial_accumulator=0),
     "Adagrad initial_accumulator must be greater than zero. Received: 0."),
    (lambda: ep.AdagradParameters(0.1, use_gradient_accumulation=False,
                                  clip_gradient_min=-1.0),
     "When using gradient clipping limits, gradient  accumulation must be "
     "enabled."),
    (lambda: ep.StochasticGradientDescentParameters(
        0.1, use_gradient_accumulation=False, clip_gradient_max=1.0),
     "When using gradient clipping limits, gradient  accumulation must be "
     "enabled."),
    (lambda: ep.AdamParameters(0.1, beta1=1.0),
     "beta1 must be between 0. and 1; got 1.0."),
    (lambda: ep.AdamParameters(0.1, beta2=-0.1),
     "beta2 must be between 0. and 1; got -0.1."),
    (lambda: ep.AdamParameters(0.1, epsilon=0.0),
     "epsilon must be positive; got 0.0."),
    (lambda: ep.AdamParameters(0.1, lazy_adam=False,
                               use_gradient_accumulation=False),
     "When disabling Lazy Adam, gradient accumulation must be used."),
    (lambda: ep.FtrlParameters(0.1, learning_rate_power=0.5),
     "learning_rate_power must be less than or equal to 0. got 0.5."),
    (lambda: ep.FtrlParameters(0.1, initial_accumulator_value=-1.0),
     "initial_accumulator_value must be greater than or equal to 0. got "
     "-1.0."),
    (lambda: ep.FtrlParameters(0.1, l1_regularization_strength=-1.0),
     "l1_regularization_strength must be greater than or equal to 0. got "
     "-1.0."),
    (lambda: ep.FtrlParameters(0.1, l2_regularization_strength=-1.0),
     "l2_regularization_strength must be greater than or equal to 0. got "
     "-1.0."),
])
def test_bad_optimization_parameters_are_refused(make, words):
  with pytest.raises(ValueError) as raised:
    make()
  assert str(raised.value).startswith(words), str(raised.value)


def test_good_parameters_keep_their_values():
  assert ep.StochasticGradientDescentParameters(0.5).learning_rate == 0.5
  ftrl = ep.FtrlParameters(0.1, beta=0.5, allow_zero_accumulator=True)
  assert (ftrl.beta, ftrl.allow_zero_accumulator, ftrl.initial_linear_value
          ) == (0.5, True, 0.0)
  adam = ep.AdamParameters(0.1, beta1=0.0, sum_inside_sqrt=False)
  assert (adam.beta1, adam.sum_inside_sqrt, adam.lazy_adam) == (0.0, False,
                                                                True)


_NUM = tf.feature_column.numeric_column("n")
_CAT = tf.feature_column.categorical_column_with_identity("c", 4)
_EMB = tf.feature_column.embedding_column(_CAT, 2)


@pytest.mark.parametrize("kwargs, error, words", [
    ({}, ValueError, "Exactly one of `feature_columns` and the pair "
     "`feature_to_config_dict` and `table_to_config_dict` must be be "
     "specified."),
    ({"feature_columns": [_NUM], "optimization_parameters":
      ep.AdagradParameters(0.1), "partition_strategy": "x"}, ValueError,
     'Invalid partition_strategy x. Must be one of "mod" or "div".'),
    ({"feature_columns": [_CAT], "optimization_parameters":
      ep.AdagradParameters(0.1)}, TypeError,
     "All feature columns must be supported types in"),
    ({"feature_columns": [_NUM], "optimization_parameters": "sgd"},
     ValueError, "optimization_parameters must be an instance of type"),
    ({"feature_to_config_dict": {"f": "t"}, "table_to_config_dict": {"t": 1}},
     TypeError, "Config for feature f must be of type `FeatureConfig`. Got "
     "<class 'str'>"),
])
def test_bad_embedding_specs_are_refused(kwargs, error, words):
  with pytest.raises(error) as raised:
    EmbeddingConfigSpec(**kwargs)
  assert str(raised.value).startswith(words), str(raised.value)


def test_a_feature_config_naming_a_missing_table_is_refused():
  class FeatureConfig:  # pylint: disable=too-few-public-methods
    table_id = "t2"
  with pytest.raises(ValueError, match="Feature f refers to table t2 which "
                     "is not in the table_to_config_dict"):
    EmbeddingConfigSpec(feature_to_config_dict={"f": FeatureConfig()},
                        table_to_config_dict={"t": 1})


def test_columns_are_split_between_the_cores():
  spec = EmbeddingConfigSpec(feature_columns=[_NUM, _EMB],
                             optimization_parameters=ep.AdagradParameters(1.))
  assert spec.feature_columns == [_NUM, _EMB]
  assert spec.tensor_core_feature_columns == []
  assert spec.partition_strategy == "div"
