import tensorflow as tf

print "a Python 2 file: the scan says it cannot parse it"
tf.layers.dense
