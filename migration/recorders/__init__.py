"""Recordings: what each side of a migration check leaves on disk.

recording_writer.py records one side through the public Estimator API (it
also runs in the TF 2.15 virtualenv, so it imports nothing from
estimator_compat), recording_reader.py reads a recording or a golden,
golden_recorder.py records and replays the core goldens, rewrite_recorder.py
records a TF2 rewrite as the new side.
"""
