"""An MLP classifier written as legacy Estimator code, with an absl binary."""
