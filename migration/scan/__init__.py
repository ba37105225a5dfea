"""`python -m migration scan`: what a codebase uses of the Estimator and TF1.

Modules, one job each: `sources` (find and parse files and notebook cells),
`imports` (what each local name is bound to), `findings` (every use and its
status), `statuses` (the status of a name, from estimator_compat's registry
`estimator_compat.api.api_status`), `scanner` (a scan over many files),
`report` (text and JSON, exit code), `fixer` (the --fix / --write edits),
`cli` (the command line).
"""
