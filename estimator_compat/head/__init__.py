"""The Estimator heads of TF 2.15 (`tf.estimator.*Head`), on TF 2.21.

Modules: `keys` (metric / prediction / signature keys), `checks` (argument
and tensor checks with TF 2.15's errors), `weights` (the weight column),
`base_head` (`Head` and `create_estimator_spec`), one module per head.
"""

from estimator_compat.head.base_head import Head
from estimator_compat.head.binary_class_head import BinaryClassHead
from estimator_compat.head.multi_class_head import MultiClassHead
from estimator_compat.head.multi_head import MultiHead
from estimator_compat.head.multi_label_head import MultiLabelHead
from estimator_compat.head.regression_head import LogisticRegressionHead
from estimator_compat.head.regression_head import PoissonRegressionHead
from estimator_compat.head.regression_head import RegressionHead

__all__ = [
    "BinaryClassHead", "Head", "LogisticRegressionHead", "MultiClassHead", "MultiHead", "MultiLabelHead",
    "PoissonRegressionHead", "RegressionHead",
]
