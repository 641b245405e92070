"""The test run leaves the working tree as it found it (tests/support/clean_tree.py), and the
docs' pictures are refreshed on purpose only (``make screenshots``).

The guard is tried on a git repository of its own: a pytest session whose test rewrites a
tracked file fails and names it; one whose test writes under its tmp_path passes."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_CONFTEST = "from tests.support.clean_tree import pytest_sessionfinish, pytest_sessionstart\n"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def _session(repo: Path, test: str, **env: str) -> subprocess.CompletedProcess[str]:
    (repo / "test_it.py").write_text(test)
    _git(repo, "add", "test_it.py")
    _git(repo, "commit", "-qm", "the test")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "test_it.py"], cwd=repo, capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env})


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "docs" / "screenshots").mkdir(parents=True)
    (repo / "docs" / "screenshots" / "chat.png").write_bytes(b"yesterday's page")
    (repo / "conftest.py").write_text(_CONFTEST)
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    _git(repo, "init", "-q")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    _git(repo, "config", "user.name", "t")
    _git(repo, "config", "user.email", "t@t")
    return repo


REWRITES_THE_DOCS = '''
from pathlib import Path

def test_takes_a_picture():
    Path("docs/screenshots/chat.png").write_bytes(b"today's page")
'''
WRITES_ITS_TMP_PATH = '''
def test_takes_a_picture(tmp_path):
    (tmp_path / "chat.png").write_bytes(b"today's page")
'''


def test_a_session_that_rewrites_a_tracked_file_fails_and_names_it(tmp_path):
    done = _session(_repo(tmp_path), REWRITES_THE_DOCS)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed" in done.stdout  # the test itself passed: the session failed for it
    assert "M docs/screenshots/chat.png" in done.stdout


def test_a_session_that_writes_under_its_tmp_path_passes(tmp_path):
    done = _session(_repo(tmp_path), WRITES_ITS_TMP_PATH)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_new_untracked_file_fails_the_session_too(tmp_path):
    done = _session(_repo(tmp_path), REWRITES_THE_DOCS.replace("chat.png", "new.png"))
    assert done.returncode == 1 and "?? docs/screenshots/new.png" in done.stdout


def test_make_screenshots_may_write_the_docs_folder(tmp_path):
    repo = _repo(tmp_path)
    done = _session(repo, REWRITES_THE_DOCS,
                    HYMT_SCREENSHOTS=str(repo / "docs" / "screenshots"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert (repo / "docs" / "screenshots" / "chat.png").read_bytes() == b"today's page"


def test_make_screenshots_runs_every_test_that_takes_a_picture():
    """The Makefile's selection (-k) and the tests asking for the ``shots`` folder agree."""
    makefile = (ROOT / "Makefile").read_text()
    (selection,) = re.findall(r"^SCREENSHOT_TESTS := ((?:.*\\\n)*.*)$", makefile, re.M)
    terms = [t.strip() for t in selection.replace("\\\n", " ").split(" or ")]
    takers = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    a.arg == "shots" for a in node.args.args):
                takers.append((path.name, node.name))
    assert takers, "no test takes a picture"
    for file, name in takers:
        assert file in makefile, file
        assert any(term in name for term in terms), name
    for term in terms:
        assert any(term in name for _, name in takers), term
