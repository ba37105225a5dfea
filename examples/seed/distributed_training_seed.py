"""The seed document's legacy program, runnable on TensorFlow 2.21.

This is the program from the article we started from ("How does TensorFlow do
distributed training?"), kept as written except for the lines marked FIX.
Each FIX is something that also fails on the real Estimator (TF 2.15); see
examples/seed/README.md. Its known bug is kept on purpose: the train_op never
increments global_step. The real Estimator then trains forever; here the step
still advances and one warning says how to fix the code.
"""

import estimator_compat  # FIX(import): one import, then tf.estimator works.
import numpy as np  # FIX(import): the article used np without importing it.
import tensorflow as tf

estimator_compat.install()


# 定义模型
def model_fn(features, labels, mode):
  # 构建模型
  model = tf.keras.Sequential([
      tf.keras.layers.Dense(128, activation='relu', input_shape=(10,)),
      tf.keras.layers.Dense(10)
  ])
  # FIX(dict): a Sequential takes a tensor, not the features dict.
  predictions = model(features['feature'])
  # FIX(scalar): reduce the per-example loss; the outputs are logits.
  loss = tf.reduce_mean(tf.losses.sparse_categorical_crossentropy(
      labels, predictions, from_logits=True))
  # FIX(v1 name): tf.train.AdamOptimizer is tf.compat.v1.train.AdamOptimizer.
  # Bug kept: no global_step=... here.
  train_op = tf.compat.v1.train.AdamOptimizer(learning_rate=0.01).minimize(loss)
  return tf.estimator.EstimatorSpec(mode, predictions=predictions, loss=loss,
                                    train_op=train_op)


# 创建分布式策略
strategy = tf.distribute.MirroredStrategy()

# 创建Estimator
estimator = tf.estimator.Estimator(
    model_fn=model_fn, model_dir='model_dir',
    # FIX(v1 name): tf.ConfigProto is tf.compat.v1.ConfigProto.
    config=tf.estimator.RunConfig(
        session_config=tf.compat.v1.ConfigProto(log_device_placement=True)))

# 训练模型
train_input_fn = tf.estimator.inputs.numpy_input_fn(
    x={'feature': np.random.random((1000, 10))},
    y=np.random.randint(0, 10, 1000),
    num_epochs=None,
    shuffle=True)

estimator.train(input_fn=train_input_fn, steps=1000)
