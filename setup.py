"""estimator-compat: legacy tf.estimator programs on TensorFlow 2.16-2.21."""

import os
import setuptools
from setuptools.command import build_py

# ESTIMATOR_COMPAT_AUTO=1's hook (estimator_compat/api/auto.py) must sit in
# site-packages itself, where Python runs .pth files at startup.
_PTH_SOURCE = os.path.join("estimator_compat", "estimator_compat_auto.pth")
_PTH_NAME = "estimator_compat_auto.pth"
# Builds the documentation site (mkdocs.yml) offline.
_DOCS = ["mkdocs>=1.6", "mkdocs-material>=9.5", "mkdocstrings[python]>=1.0"]


class _BuildPyWithPth(build_py.build_py):
  """Puts the .pth at the top of the wheel: it installs into site-packages."""

  def run(self):
    super().run()
    self.copy_file(_PTH_SOURCE, os.path.join(self.build_lib, _PTH_NAME))
    if getattr(self, "editable_mode", False):
      # `pip install -e`: setuptools' editable wheel holds no build_lib
      # files, but packs what it set as install_lib (the wheel's root).
      install = self.get_finalized_command("install")
      self.copy_file(_PTH_SOURCE, os.path.join(install.install_lib, _PTH_NAME))

  def get_outputs(self, include_bytecode=1):
    return list(super().get_outputs(include_bytecode)) + [
        os.path.join(self.build_lib, _PTH_NAME)]


setuptools.setup(
    name="estimator-compat",
    version="0.1.0",
    description=("Run legacy TensorFlow Estimator programs unchanged on "
                 "TensorFlow 2.16-2.21 with tf-keras."),
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    # The Pythons tested (docs/tensorflow_versions.md: CI runs 3.11,
    # `tools/dev.sh test-python 3.10` the others). On 3.13 pip finds only
    # TensorFlow 2.20 and 2.21 (the first with cp313 wheels). TensorFlow
    # also has wheels for 3.9 (up to 2.20): not run, not claimed.
    python_requires=">=3.10,<3.14",
    classifiers=[
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3.10",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.12",
        "Programming Language :: Python :: 3.13",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
    packages=setuptools.find_packages(include=["estimator_compat",
                                               "estimator_compat.*",
                                               "migration", "migration.*"]),
    install_requires=[
        # Any release 2.16-2.21, with the tf-keras of the same minor: each
        # tf-keras release requires its own TensorFlow minor, so pip resolves
        # a matching pair; estimator_compat.api.tf_versions checks it at import.
        "tensorflow>=2.16,<2.22",
        "tf-keras>=2.16,<2.22",
        "tensorboard>=2.16,<2.22",
        "numpy>=1.26",
        "absl-py>=2.1",
    ],
    extras_require={
        "pandas": ["pandas>=2.0"],
        # benchmarks/: the PNG charts next to each table (benchmarks/charts.py);
        # the benchmarks print their tables without it.
        "bench": ["matplotlib>=3.7"],
        # The documentation site (mkdocs.yml): `mkdocs build --strict`.
        "docs": _DOCS,
        # build: the wheel test builds with `python -m build`; ipython:
        # the `%load_ext estimator_compat` test; bert-tensorflow: a public
        # legacy program (bert.run_classifier) run unchanged; the docs site
        # is built by tools/dev.sh test and tests/test_docs_site.py; ruff
        # and mypy: the code checks (tools/ruff.toml, tools/mypy.ini);
        # pytest-xdist: CI runs the slow tests on two workers; pytest-cov:
        # branch coverage on demand (tools/coverage.sh).
        "test": ["pytest>=8", "pandas>=2.0", "build>=1.0", "ipython>=8",
                 "bert-tensorflow==1.0.4", "ruff>=0.6", "mypy>=1.10",
                 "pytest-xdist>=3.5", "pytest-cov>=5"] + _DOCS,
    },
    cmdclass={"build_py": _BuildPyWithPth},
    entry_points={
        "console_scripts": [
            "estimator-compat-train=estimator_compat.train:run",
            "estimator-compat-run=estimator_compat.api.launcher:run",
            "estimator-compat-migration=migration.__main__:run",
        ],
    },
)
