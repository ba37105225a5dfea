"""The documentation site (mkdocs.yml, docs/) and the README that links into it.

The site build needs mkdocs (the `docs` extra, also in `test`); the README
checks need nothing but the files.
"""

import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
# Issue 27: the README holds what a newcomer reads first, the rest is in docs/.
README_MAX_LINES = 200

_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def _read(path: str) -> str:
  with open(path, encoding="utf-8") as f:
    return f.read()


def _github_anchors(markdown: str) -> set:
  """The anchors GitHub (and mkdocs' toc) give the headings of a page."""
  anchors = set()
  for line in _FENCE.sub("", markdown).splitlines():
    match = re.match(r"#+\s+(.*?)\s*$", line)
    if match:
      slug = re.sub(r"[^\w\- ]", "", match.group(1).lower()).replace(" ", "-")
      anchors.add(slug)
  return anchors


def _check_target(source: str, target: str) -> None:
  path, _, anchor = target.partition("#")
  full = os.path.normpath(os.path.join(os.path.dirname(source), path))
  assert os.path.exists(full), f"{source}: link to missing {target}"
  if anchor and full.endswith(".md"):
    assert anchor in _github_anchors(_read(full)), (
        f"{source}: no heading for #{anchor} in {path}")


def test_readme_links_resolve():
  links = [link for link in _LINK.findall(_FENCE.sub("", _read(README)))
           if not re.match(r"[a-z]+:", link)]
  assert any(link.startswith("docs/") for link in links)
  for link in links:
    _check_target(README, link)


def test_readme_anchors_named_in_the_code_exist():
  # Error messages and scan notes point at README sections by anchor.
  anchors = _github_anchors(_read(README))
  named = set()
  for package in ("estimator_compat", "migration"):
    for folder, _, files in os.walk(os.path.join(ROOT, package)):
      for name in files:
        if name.endswith(".py"):
          text = _read(os.path.join(folder, name))
          named.update(re.findall(r"README\.md#([\w-]+)", text))
  assert named, "no README anchor found in the code: update this test"
  assert named <= anchors, sorted(named - anchors)


def test_readme_stays_short():
  lines = _read(README).count("\n")
  assert lines <= README_MAX_LINES, (
      f"README.md has {lines} lines (at most {README_MAX_LINES}): move "
      "details into a page under docs/ and link it from the README's "
      "documentation table.")


def test_readme_example_is_the_getting_started_program():
  readme = _PYTHON_BLOCK.findall(_read(README))
  page = _PYTHON_BLOCK.findall(
      _read(os.path.join(ROOT, "docs", "getting-started.md")))
  program = [block for block in page if block.startswith("# legacy_train.py")]
  assert len(program) == 1
  assert program[0].split("\n", 1)[1] in readme


def test_quick_start_commands_exist():
  readme = _read(README)
  dev = _read(os.path.join(ROOT, "tools", "dev.sh"))
  for command in ("run", "test"):
    assert f"tools/dev.sh {command}" in readme
    assert re.search(rf"^\s+{command}\)$", dev, re.M), command


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None,
                    reason="mkdocs is not installed (pip install -e .[docs])")
def test_site_builds_strict(tmp_path):
  site = tmp_path / "site"
  env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
  result = subprocess.run(
      [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
       str(site)], cwd=ROOT, env=env, capture_output=True, text=True,
      timeout=300, check=False)
  assert result.returncode == 0, result.stdout + result.stderr
  # mkdocstrings rendered the API reference from the docstrings.
  api = (site / "api" / "estimator" / "index.html").read_text("utf-8")
  assert 'id="estimator_compat.estimator.Estimator.train"' in api
  # The one committed list of differences is the page, row for row.
  differences = (site / "known_differences" / "index.html").read_text("utf-8")
  ids = re.findall(r"^\| ([a-z0-9-]+) \|",
                   _read(os.path.join(ROOT, "docs", "known_differences.md")),
                   re.M)[1:]  # [0] is the header's "id".
  assert ids
  for row_id in ids:
    assert f"<td>{row_id}</td>" in differences, row_id
  # Every page the README links to is in the site.
  for link in _LINK.findall(_read(README)):
    path = link.partition("#")[0]
    if path.startswith("docs/") and path.endswith(".md"):
      page = path[len("docs/"):-len(".md")]
      if page == "index" or page.endswith("/index"):
        page = page[:-len("index")]
      assert (site / page / "index.html").exists(), link
