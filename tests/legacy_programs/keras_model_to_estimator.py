# The code of the TensorFlow docs tutorial "Create an Estimator from a Keras
# model" (https://www.tensorflow.org/tutorials/estimator/keras_model_to_estimator,
# tensorflow/docs site/en/tutorials/estimator/keras_model_to_estimator.ipynb,
# Apache License 2.0), its cells in order, unchanged. tensorflow_datasets is
# the synthetic stand-in in tests/legacy_programs/tfds_stub.
import tensorflow as tf

import tensorflow_datasets as tfds

model = tf.keras.models.Sequential([
    tf.keras.layers.Dense(16, activation='relu', input_shape=(4,)),
    tf.keras.layers.Dropout(0.2),
    tf.keras.layers.Dense(3)
])

model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              optimizer='adam')
model.summary()

def input_fn():
  split = tfds.Split.TRAIN
  dataset = tfds.load('iris', split=split, as_supervised=True)
  dataset = dataset.map(lambda features, labels: ({'dense_input':features}, labels))
  dataset = dataset.batch(32).repeat()
  return dataset

for features_batch, labels_batch in input_fn().take(1):
  print(features_batch)
  print(labels_batch)

import tempfile
model_dir = tempfile.mkdtemp()
keras_estimator = tf.keras.estimator.model_to_estimator(
    keras_model=model, model_dir=model_dir)

keras_estimator.train(input_fn=input_fn, steps=500)
eval_result = keras_estimator.evaluate(input_fn=input_fn, steps=10)
print('Eval result: {}'.format(eval_result))
