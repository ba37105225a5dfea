"""The front's helpers: the one configuration path (configuration.py:
the engine and the strategy flags, resolved once per call), argument
checks, calling input_fn and model_fn, the model_dir lock, preemption, log
and summary lines.
May import checkpoints/ and the root's values (spec, run_config,
mode_keys); never engines/.
"""
