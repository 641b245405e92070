"""A test run leaves the working tree as it found it: a run during which a tracked file changed
(the docs' screenshots, a generated file) or a file git would pick up appeared fails, naming
the paths. Imported by tests/conftest.py, whose hooks these are.

The comparison is ``git status --porcelain`` before and after the session, in the pytest
controller only (xdist's workers share its tree). A folder the run is asked to write on purpose
(``make screenshots``: ``HYMT_SCREENSHOTS``) is left out. Not a git checkout: nothing to
compare."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

__all__ = ["SCREENSHOTS_VARIABLE", "asked_folder", "changed_paths", "porcelain",
           "pytest_sessionfinish", "pytest_sessionstart"]

SCREENSHOTS_VARIABLE = "HYMT_SCREENSHOTS"
_BEFORE = pytest.StashKey[frozenset[str] | None]()


def asked_folder() -> Path | None:
    """The folder the run was asked to write the docs' pictures into (``make screenshots``),
    if any."""
    wanted = os.environ.get(SCREENSHOTS_VARIABLE)
    return Path(wanted).resolve() if wanted else None


def porcelain(root: Path) -> frozenset[str] | None:
    """``git status --porcelain`` of *root*, a line a path (None: not a git checkout)."""
    try:
        done = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                               "--untracked-files=all"],
                              capture_output=True, text=True, check=False)
    except FileNotFoundError:
        return None
    if done.returncode != 0:
        return None
    return frozenset(done.stdout.splitlines())


def changed_paths(before: frozenset[str], after: frozenset[str], root: Path,
                  allowed: Path | None = None) -> list[str]:
    """The lines of *after* not in *before*, less those under *allowed*."""
    out = []
    for line in sorted(after - before):
        path = (root / line[3:].split(" -> ")[-1].strip('"')).resolve()
        if allowed is not None and path.is_relative_to(allowed.resolve()):
            continue
        out.append(line)
    return out


def _controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")


def pytest_sessionstart(session: pytest.Session) -> None:
    if _controller(session.config):
        session.config.stash[_BEFORE] = porcelain(session.config.rootpath)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    before = config.stash.get(_BEFORE, None)
    if not _controller(config) or before is None:
        return
    after = porcelain(config.rootpath)
    if after is None:
        return
    changed = changed_paths(before, after, config.rootpath, asked_folder())
    if not changed:
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    lines = ["The tests changed the working tree (`git status --porcelain`): a test must leave "
             "it as it found it, writing under its tmp_path instead.", *changed]
    for line in lines:
        if reporter is not None:
            reporter.write_line(line, red=True)
        else:
            print(line)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
