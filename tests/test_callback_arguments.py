"""Legacy callbacks get only the arguments they declare (front/fn_args.py).

As the Estimator's `fn_args`: arguments a `functools.partial` binds by
keyword are not offered again, `*args`/`**kwargs` receive nothing, and a
model_fn without `features` is refused with the names it does take.
"""

import functools

import pytest

from estimator_compat.front.fn_args import call_with_declared_args, fn_args


def _model_fn(features, labels, mode, params, config):
  return features, labels, mode, params, config


def test_keyword_bound_arguments_are_not_offered_again():
  bound = functools.partial(_model_fn, params={"units": 3})
  assert fn_args(bound) == ("features", "labels", "mode", "config")
  got = call_with_declared_args(
      bound, {"features": 1, "labels": 2, "mode": "train",
              "params": {"units": 99}, "config": "c"})
  assert got == (1, 2, "train", {"units": 3}, "c")


def test_nested_partials_remove_each_layers_keywords():
  inner = functools.partial(_model_fn, config="mine")
  outer = functools.partial(inner, params={})
  assert fn_args(outer) == ("features", "labels", "mode")


def test_var_positional_and_var_keyword_receive_nothing():
  seen = {}

  def model_fn(features, *args, **kwargs):
    seen.update(features=features, args=args, kwargs=kwargs)

  assert fn_args(model_fn) == ("features",)
  call_with_declared_args(model_fn, {"features": 7, "mode": "eval"})
  assert seen == {"features": 7, "args": (), "kwargs": {}}


def test_a_callable_without_a_signature_declares_nothing():
  # inspect cannot read a signature off `dict`; nothing is offered to it.
  assert fn_args(dict) == ()
  assert call_with_declared_args(dict, {"features": 1}) == {}


def test_a_missing_required_argument_names_what_the_function_takes():
  def model_fn(inputs, labels):
    del inputs, labels

  with pytest.raises(ValueError) as raised:
    call_with_declared_args(model_fn, {"features": 1, "labels": 2},
                            required=("features",))
  assert str(raised.value) == (
      "model_fn must take an argument named 'features'; it takes "
      "['inputs', 'labels'].")
