"""migration.scan.fixer on small programs: each edit `--fix` makes, and each
case it leaves alone with the reason (tests/test_scan.py runs it on the
fixture codebase through the command line)."""

import json

from migration.scan import fixer
from migration.scan import scanner

V2 = "tensorflow_estimator.python.estimator.api._v2.estimator"


def _fix(tmp_path, files):
  """Writes `files` ({name: text}) and returns {name: FileFix} of the scan."""
  for name, text in files.items():
    (tmp_path / name).write_bytes(text.encode("utf-8"))
  found = fixer.fixes(scanner.scan([str(tmp_path)]))
  return {f.path[len(str(tmp_path)) + 1:]: f for f in found}


def test_api_module_imports_become_estimator_compat(tmp_path):
  fixed = _fix(tmp_path, {"m.py": (
      f"import {V2} as tfe\n"
      f"import {V2}.export as tfx\n"
      f"from {V2} import Estimator\n"
      f"from {V2}.inputs import numpy_input_fn as nif\n"
      "from tensorflow_estimator.python.estimator import model_fn\n"
      "import tensorflow_estimator\n")})["m.py"]
  assert fixed.new == (
      "import estimator_compat as tfe\n"
      "import estimator_compat.export as tfx\n"
      "from estimator_compat import Estimator\n"
      "from estimator_compat.inputs import numpy_input_fn as nif\n"
      "from tensorflow_estimator.python.estimator import model_fn\n"
      "import tensorflow_estimator\n")
  # What it leaves, it says why: install() makes those importable.
  assert fixed.messages == [
      f"{tmp_path}/m.py:5: left as is: from "
      "tensorflow_estimator.python.estimator import ... (importable after "
      "estimator_compat.install())",
      f"{tmp_path}/m.py:6: left as is: import tensorflow_estimator "
      "(importable after estimator_compat.install())"]


def test_a_comment_inside_the_import(tmp_path):
  text = (f"from {V2} import (  # the API\n"
          "    Estimator)\n"
          "from tensorflow_estimator import (estimator  # v1\n"
          "    as tfe)\n")
  fixed = _fix(tmp_path, {"m.py": text})["m.py"]
  # Only the module name is edited: the comment after it stays; a whole
  # statement rewrite would drop the comment, so that one is left as is.
  assert fixed.new == text.replace(f"from {V2} import",
                                   "from estimator_compat import")
  assert [m.split(": ", 1)[1] for m in fixed.messages] == [
      "left as is: from tensorflow_estimator import ... (importable after "
      "estimator_compat.install())"]


def test_install_goes_before_the_first_tensorflow_import(tmp_path):
  fixed = _fix(tmp_path, {
      # The entry point reaches TensorFlow only through a local module.
      "helper.py": "import tensorflow as tf\nX = tf.constant(1)\n",
      "main.py": ("import os\n"
                  "from absl import app\n"
                  "import helper\n"
                  "def main(_):\n"
                  "  print(helper.X)\n"
                  "app.run(main)\n"),
      "indented.py": ("import sys\n"
                      "if __name__ == '__main__':\n"
                      "  import tensorflow as tf\n"
                      "  tf.print(1)\n"),
      "installed.py": ("from estimator_compat import install\n"
                       "install()\n"
                       "import tensorflow as tf\n"
                       "if '__main__' == __name__:\n"
                       "  tf.print(1)\n"),
      "library.py": "import tensorflow as tf\nY = tf.constant(2)\n",
  })
  assert fixed["main.py"].new == (
      "import os\n"
      "from absl import app\n"
      f"{fixer.INSTALL}\n"
      "import helper\n"
      "def main(_):\n"
      "  print(helper.X)\n"
      "app.run(main)\n")
  assert fixed["indented.py"].new == (
      "import sys\n"
      "if __name__ == '__main__':\n"
      f"  {fixer.INSTALL}\n"
      "  import tensorflow as tf\n"
      "  tf.print(1)\n")
  # Already installs, or no entry point: nothing to do, nothing to say.
  assert "installed.py" not in fixed and "library.py" not in fixed
  assert "helper.py" not in fixed


def test_entry_points(tmp_path):
  import ast  # pylint: disable=g-import-not-at-top
  assert fixer.is_entry_point(ast.parse("if '__main__' == __name__: f()"))
  assert fixer.is_entry_point(ast.parse("tf.compat.v1.app.run(main)"))
  assert not fixer.is_entry_point(ast.parse("if __name__ == 'x': f()"))
  assert not fixer.is_entry_point(ast.parse("if a < b < c: f()"))
  assert not fixer.is_entry_point(ast.parse("runner.run(main)"))


def test_files_it_does_not_rewrite(tmp_path):
  notebook = {"cells": [{"cell_type": "code", "metadata": {},
                         "source": ["import tensorflow as tf\n",
                                    "tf.layers.dense\n"],
                         "outputs": [], "execution_count": None}],
              "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
  fixed = _fix(tmp_path, {
      "lone_cr.py": "import tensorflow as tf\rx = tf.layers.dense\n",
      "nb.ipynb": json.dumps(notebook),
      "quiet.ipynb": json.dumps(dict(notebook, cells=[])),
  })
  assert fixed["lone_cr.py"].new == fixed["lone_cr.py"].old
  assert fixed["lone_cr.py"].messages[0].endswith(
      "not rewritten: it has lone \\r line endings")
  assert fixed["nb.ipynb"].messages[0].endswith(
      "not rewritten: notebooks are scanned only (edit the cells by hand)")
  assert "quiet.ipynb" not in fixed  # no findings: nothing to say


def test_unified_diff_and_write(tmp_path):
  fixed = _fix(tmp_path, {
      "a.py": "import tensorflow as tf\nx = tf.layers.dense",
      "same.py": f"import {V2}\n",  # a message, no edit
  })
  diff = fixer.unified_diff(list(fixed.values()))
  path = str(tmp_path / "a.py")
  assert diff == (f"--- {path}\n+++ {path}\n@@ -1,2 +1,2 @@\n"
                  " import tensorflow as tf\n-x = tf.layers.dense\n"
                  "\\ No newline at end of file\n"
                  "+x = tf.compat.v1.layers.dense\n"
                  "\\ No newline at end of file\n")
  assert fixer.write(list(fixed.values())) == [path]
  assert (tmp_path / "a.py").read_text() == (
      "import tensorflow as tf\nx = tf.compat.v1.layers.dense")
  assert (tmp_path / "same.py").read_text() == f"import {V2}\n"
