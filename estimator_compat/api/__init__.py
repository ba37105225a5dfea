"""What `install()` registers: module paths, the API-status
registry, the namespaces' name lists, the launcher and the
environment switch, tf.keras as tf-keras (legacy_keras),
what differs between TensorFlow releases.
May import anything; nothing below the root imports it but
tf_versions.
"""
