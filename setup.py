"""estimator-compat: legacy tf.estimator programs on TensorFlow 2.21."""

import setuptools

setuptools.setup(
    name="estimator-compat",
    version="0.1.0",
    description=("Run legacy TensorFlow Estimator programs unchanged on "
                 "TensorFlow 2.21 with tf-keras."),
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    python_requires=">=3.11,<3.12",
    packages=setuptools.find_packages(include=["estimator_compat",
                                               "estimator_compat.*",
                                               "migration", "migration.*"]),
    install_requires=[
        "tensorflow==2.21.*",
        "tf-keras==2.21.*",
        "tensorboard==2.21.*",
        "numpy>=1.26",
        "absl-py>=2.1",
    ],
    extras_require={
        "pandas": ["pandas>=2.0"],
        "test": ["pytest>=8", "pandas>=2.0"],
    },
    entry_points={
        "console_scripts": [
            "estimator-compat-train=estimator_compat.train:run",
            "estimator-compat-run=estimator_compat.launcher:run",
            "estimator-compat-migration=migration.__main__:run",
        ],
    },
)
