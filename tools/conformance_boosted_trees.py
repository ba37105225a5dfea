"""tools/conformance.py on tensorflow-estimator 2.8's BoostedTrees tests.

The BoostedTrees estimators left tensorflow-estimator in 2.9, so their test
files are those of tag v2.8.0 (canned/boosted_trees_test.py and
canned/boosted_trees_utils_test.py), and the reference is tensorflow-estimator
2.8.0 on TensorFlow 2.8.4 (the Python 3.10 venv of
tools/record_boosted_trees_goldens.sh, with pytest). Everything else is
conformance.py's: the same runner, plugin, counting and table, with this
suite's own lists of passing and excluded tests, and one more plugin
(conformance_boosted_trees_plugin.py) for the module TF 2.21 lacks and the
private head factories two test classes' setUp call.

  # the reference (the real 2.8):
  python tools/conformance_boosted_trees.py /work/ref/estimator-v2.8.0 \
      --reference --python ~/.cache/estimator-compat/tf28-venv/bin/python
  # here, each engine:
  python tools/conformance_boosted_trees.py /work/ref/estimator-v2.8.0
"""

import os
import sys
from typing import List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# pylint: disable=g-import-not-at-top,wrong-import-position
import conformance

TAG = "v2.8.0"
TEST_FILES = ("canned/boosted_trees_test.py",
              "canned/boosted_trees_utils_test.py")
REFERENCE_FILE = os.path.join(conformance.TOOLS,
                              "conformance_boosted_trees_reference.txt")
EXCLUSIONS_FILE = os.path.join(conformance.TOOLS,
                               "conformance_boosted_trees_exclusions.txt")
_REFERENCE_HEADER = (
    "# Tests of tensorflow/estimator v2.8.0 (the BoostedTrees files) that "
    "pass on the real\n# Estimator (TF 2.8.4, tensorflow-estimator 2.8.0), "
    "written by\n# tools/conformance_boosted_trees.py --reference.\n")


def _use_this_suite() -> None:
  conformance.TAG = TAG
  conformance.TEST_FILES = TEST_FILES
  conformance.SUPPORT_FILES = ()
  conformance.TF1_FILES = ()
  conformance.REFERENCE_FILE = REFERENCE_FILE
  conformance.EXCLUSIONS_FILE = EXCLUSIONS_FILE


def _rewrite_reference_header(path: str) -> None:
  """conformance.py heads the list with its own suite's versions."""
  with open(path) as f:
    ids = [line for line in f if line.strip() and not line.startswith("#")]
  with open(path, "w") as f:
    f.write(_REFERENCE_HEADER + "".join(ids))


def main(argv: Optional[List[str]] = None) -> int:
  argv = list(sys.argv[1:] if argv is None else argv)
  _use_this_suite()
  # The test processes load this suite's plugin too (its imports).
  os.environ["PYTEST_ADDOPTS"] = " ".join(
      [os.environ.get("PYTEST_ADDOPTS", ""),
       "-p conformance_boosted_trees_plugin"]).strip()
  if "--write-reference" not in argv:
    argv += ["--write-reference", REFERENCE_FILE]
  status = conformance.main(argv)
  if "--reference" in argv:
    _rewrite_reference_header(argv[argv.index("--write-reference") + 1])
  return status


if __name__ == "__main__":
  sys.exit(main())
