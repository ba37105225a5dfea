"""The front's helpers: argument checks, calling input_fn and
model_fn, the model_dir lock, preemption, log and summary lines.
May import checkpoints/ and the root's values (spec, run_config,
mode_keys); never engines/.
"""
