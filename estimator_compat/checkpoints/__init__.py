"""Checkpoint files in a model_dir: whole or not, kept, left
over, read by legacy name, and the Savers that write them.
Imports only TensorFlow and front/tf_logging.
"""
