"""TPU embedding optimization parameters (`tf.compat.v1.tpu.experimental`).

TF 2.15 had `AdagradParameters`, `AdamParameters`, `FtrlParameters` and
`StochasticGradientDescentParameters` there, for an `EmbeddingConfigSpec`;
TF 2.21 dropped them with its TF1 TPU embedding. Without a TPU they are
checked and kept, never used: the model's own optimizer trains the
embedding tables, as TPUEstimator(use_tpu=False) did. install() puts these
classes back on `tf.compat.v1.tpu.experimental`.
"""

from typing import Optional


class OptimizationParameters:
  """What every TPU embedding optimizer takes.

  Raises:
    ValueError: gradient clipping limits without gradient accumulation.
  """

  def __init__(self, learning_rate: float, use_gradient_accumulation: bool,
               clip_weight_min: Optional[float],
               clip_weight_max: Optional[float],
               weight_decay_factor: Optional[float],
               multiply_weight_decay_factor_by_learning_rate: Optional[bool],
               clip_gradient_min: Optional[float] = None,
               clip_gradient_max: Optional[float] = None) -> None:
    self.learning_rate = learning_rate
    self.use_gradient_accumulation = use_gradient_accumulation
    self.clip_weight_min = clip_weight_min
    self.clip_weight_max = clip_weight_max
    self.weight_decay_factor = weight_decay_factor
    self.multiply_weight_decay_factor_by_learning_rate = (
        multiply_weight_decay_factor_by_learning_rate)
    self.clip_gradient_min = clip_gradient_min
    self.clip_gradient_max = clip_gradient_max
    if not use_gradient_accumulation and (clip_gradient_min is not None or
                                          clip_gradient_max is not None):
      raise ValueError(
          "When using gradient clipping limits, gradient  accumulation must "
          "be enabled. Fix: use_gradient_accumulation=True, or no gradient "
          "clipping limits.")


class AdagradParameters(OptimizationParameters):
  """Adagrad for TPU embedding tables.

  Raises:
    ValueError: `initial_accumulator` not above zero.
  """

  def __init__(self, learning_rate: float, initial_accumulator: float = 0.1,
               use_gradient_accumulation: bool = True,
               clip_weight_min: Optional[float] = None,
               clip_weight_max: Optional[float] = None,
               weight_decay_factor: Optional[float] = None,
               multiply_weight_decay_factor_by_learning_rate: Optional[
                   bool] = None,
               clip_gradient_min: Optional[float] = None,
               clip_gradient_max: Optional[float] = None) -> None:
    super().__init__(learning_rate, use_gradient_accumulation,
                     clip_weight_min, clip_weight_max, weight_decay_factor,
                     multiply_weight_decay_factor_by_learning_rate,
                     clip_gradient_min, clip_gradient_max)
    if initial_accumulator <= 0:
      raise ValueError(
          "Adagrad initial_accumulator must be greater than zero. Received: "
          f"{initial_accumulator}. Fix: pass a positive initial_accumulator.")
    self.initial_accumulator = initial_accumulator


class AdamParameters(OptimizationParameters):
  """Adam for TPU embedding tables.

  Raises:
    ValueError: beta1 or beta2 outside [0, 1), epsilon not positive, or
      neither lazy Adam nor gradient accumulation.
  """

  def __init__(self, learning_rate: float, beta1: float = 0.9,
               beta2: float = 0.999, epsilon: float = 1e-08,
               lazy_adam: bool = True, sum_inside_sqrt: bool = True,
               use_gradient_accumulation: bool = True,
               clip_weight_min: Optional[float] = None,
               clip_weight_max: Optional[float] = None,
               weight_decay_factor: Optional[float] = None,
               multiply_weight_decay_factor_by_learning_rate: Optional[
                   bool] = None,
               clip_gradient_min: Optional[float] = None,
               clip_gradient_max: Optional[float] = None) -> None:
    super().__init__(learning_rate, use_gradient_accumulation,
                     clip_weight_min, clip_weight_max, weight_decay_factor,
                     multiply_weight_decay_factor_by_learning_rate,
                     clip_gradient_min, clip_gradient_max)
    if beta1 < 0. or beta1 >= 1.:
      raise ValueError(f"beta1 must be between 0. and 1; got {beta1}.")
    if beta2 < 0. or beta2 >= 1.:
      raise ValueError(f"beta2 must be between 0. and 1; got {beta2}.")
    if epsilon <= 0.:
      raise ValueError(f"epsilon must be positive; got {epsilon}.")
    if not use_gradient_accumulation and not lazy_adam:
      raise ValueError(
          "When disabling Lazy Adam, gradient accumulation must be used. "
          "Fix: lazy_adam=True or use_gradient_accumulation=True.")
    self.beta1 = beta1
    self.beta2 = beta2
    self.epsilon = epsilon
    self.lazy_adam = lazy_adam
    self.sum_inside_sqrt = sum_inside_sqrt


class FtrlParameters(OptimizationParameters):
  """FTRL for TPU embedding tables.

  Raises:
    ValueError: a positive learning_rate_power, or a negative initial
      accumulator value or regularization strength.
  """

  def __init__(self, learning_rate: float, learning_rate_power: float = -0.5,
               initial_accumulator_value: float = 0.1,
               l1_regularization_strength: float = 0.0,
               l2_regularization_strength: float = 0.0,
               use_gradient_accumulation: bool = True,
               clip_weight_min: Optional[float] = None,
               clip_weight_max: Optional[float] = None,
               weight_decay_factor: Optional[float] = None,
               multiply_weight_decay_factor_by_learning_rate: Optional[
                   bool] = None,
               multiply_linear_by_learning_rate: bool = False,
               beta: float = 0, allow_zero_accumulator: bool = False,
               clip_gradient_min: Optional[float] = None,
               clip_gradient_max: Optional[float] = None) -> None:
    super().__init__(learning_rate, use_gradient_accumulation,
                     clip_weight_min, clip_weight_max, weight_decay_factor,
                     multiply_weight_decay_factor_by_learning_rate,
                     clip_gradient_min, clip_gradient_max)
    if learning_rate_power > 0.:
      raise ValueError("learning_rate_power must be less than or equal to 0. "
                       f"got {learning_rate_power}.")
    if initial_accumulator_value < 0.:
      raise ValueError("initial_accumulator_value must be greater than or "
                       f"equal to 0. got {initial_accumulator_value}.")
    if l1_regularization_strength < 0.:
      raise ValueError("l1_regularization_strength must be greater than or "
                       f"equal to 0. got {l1_regularization_strength}.")
    if l2_regularization_strength < 0.:
      raise ValueError("l2_regularization_strength must be greater than or "
                       f"equal to 0. got {l2_regularization_strength}.")
    self.learning_rate_power = learning_rate_power
    self.initial_accumulator_value = initial_accumulator_value
    self.initial_linear_value = 0.0
    self.l1_regularization_strength = l1_regularization_strength
    self.l2_regularization_strength = l2_regularization_strength
    self.multiply_linear_by_learning_rate = multiply_linear_by_learning_rate
    self.beta = beta
    self.allow_zero_accumulator = allow_zero_accumulator


class StochasticGradientDescentParameters(OptimizationParameters):
  """Plain SGD for TPU embedding tables."""

  def __init__(self, learning_rate: float,
               use_gradient_accumulation: bool = True,
               clip_weight_min: Optional[float] = None,
               clip_weight_max: Optional[float] = None,
               weight_decay_factor: Optional[float] = None,
               multiply_weight_decay_factor_by_learning_rate: Optional[
                   bool] = None,
               clip_gradient_min: Optional[float] = None,
               clip_gradient_max: Optional[float] = None) -> None:
    super().__init__(learning_rate, use_gradient_accumulation,
                     clip_weight_min, clip_weight_max, weight_decay_factor,
                     multiply_weight_decay_factor_by_learning_rate,
                     clip_gradient_min, clip_gradient_max)


SUPPORTED = (AdagradParameters, AdamParameters, FtrlParameters,
             StochasticGradientDescentParameters)
