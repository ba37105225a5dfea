"""pytest plugin for tools/conformance_boosted_trees.py, beside
conformance_plugin: what tensorflow-estimator 2.8's BoostedTrees test files
import that neither TF 2.21 nor estimator_compat's public API has.

Only where conformance_plugin installed estimator_compat
(CONFORMANCE_INSTALL=1); the reference run on the real 2.8 has them all.

- `tensorflow.core.kernels.boosted_trees.boosted_trees_pb2`: TF 2.8's
  Python module of the TreeEnsemble message (TF 2.12 and later ship none);
  the files import it at module level to write expected ensembles. It is
  registered holding estimator_compat's schema of the same messages
  (canned/boosted_trees/tree_proto.py).
- `boosted_trees._create_regression_head` / `_create_classification_head`:
  2.8's private one-line head factories, called by two test classes'
  setUp (so by every test of those classes, most of which never use the
  head). They are given the heads estimator_compat's BoostedTrees
  estimators build (the same TF1 heads and loss reductions); the tests
  that use other private names stay excluded
  (conformance_boosted_trees_exclusions.txt).
"""

import os
import sys
import types

import pytest

_PB2 = "tensorflow.core.kernels.boosted_trees.boosted_trees_pb2"
_BOOSTED_TREES = "tensorflow_estimator.python.estimator.canned.boosted_trees"


def _register_message_module():
  from estimator_compat.canned.boosted_trees import tree_proto  # pylint: disable=g-import-not-at-top
  parts = _PB2.split(".")
  for depth in range(2, len(parts)):
    name = ".".join(parts[:depth])
    if name not in sys.modules:
      package = types.ModuleType(name)
      package.__path__ = []
      sys.modules[name] = package
      setattr(sys.modules[".".join(parts[:depth - 1])], parts[depth - 1],
              package)
  module = types.ModuleType(_PB2)
  for name in tree_proto.MESSAGE_NAMES:
    setattr(module, name, tree_proto.message_class(name))
  sys.modules[_PB2] = module
  setattr(sys.modules[_PB2.rpartition(".")[0]], parts[-1], module)


def _add_head_factories():
  import importlib  # pylint: disable=g-import-not-at-top
  from estimator_compat.canned.boosted_trees import heads  # pylint: disable=g-import-not-at-top
  module = importlib.import_module(_BOOSTED_TREES)

  def create_classification_head(n_classes, weight_column=None,
                                 label_vocabulary=None):
    return heads.classification_head(n_classes, weight_column,
                                     label_vocabulary=label_vocabulary)[0]

  def create_regression_head(label_dimension, weight_column=None):
    return heads.regression_head(label_dimension, weight_column)

  # pylint: disable=protected-access
  module._create_classification_head = create_classification_head
  module._create_regression_head = create_regression_head


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
  del config
  if os.environ.get("CONFORMANCE_INSTALL") != "1":
    return
  _register_message_module()
  _add_head_factories()
