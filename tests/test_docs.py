"""The manual is a docs site that builds without a broken link, and the README stays a front door.

The site is built by the test environment's own MkDocs, strictly (``mkdocs build --strict``, as
MkDocs' documentation describes: any warning, such as a link to a missing page or anchor or a
page left out of the navigation, aborts the build). A missing MkDocs fails here: setup installs
it with the test extra.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
# A front door, not a manual: the size of simonw/llm's README, and the 200 lines.
README_MAX_BYTES = 6_000
README_MAX_LINES = 200
BUDGET_LINE = ("Test budget: a clean clone's `CI=true bash .ci/run` within 20 minutes on 2 cores; "
               "last measured: ")
# Markdown links and images: [text](target) / ![alt](target).
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def _mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    assert importlib.util.find_spec("mkdocs") is not None, (
        "MkDocs is not installed in this environment: the test extra carries it "
        "(mkdocs>=1.6); run scripts/setup.sh --test")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
         "--site-dir", str(site)],
        capture_output=True, text=True, timeout=600, cwd=config.parent)


def test_the_docs_site_builds_strictly(tmp_path):
    built = _mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert built.returncode == 0, built.stdout + built.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "architecture" / "index.html").is_file()


def test_the_strict_build_fails_on_a_broken_link(tmp_path):
    """The check above can fail: a page linking to a page that does not exist aborts the build."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\n[gone](missing.md)\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text("site_name: probe\n", encoding="utf-8")
    built = _mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert built.returncode != 0
    assert "missing.md" in built.stdout + built.stderr


def _slug(heading: str) -> str:
    """An anchor as both GitHub and MkDocs' toc make it for the plain headings used here."""
    text = re.sub(r"[`*_]", "", heading).strip().lower()
    text = re.sub(r"[^\w\s-]", "", text)
    return re.sub(r"\s+", "-", text)


def _readme() -> str:
    return README.read_text(encoding="utf-8")


def test_the_readme_is_a_front_door():
    text = _readme()
    assert len(text.encode("utf-8")) <= README_MAX_BYTES, "README.md grew past a front door"
    assert len(text.splitlines()) <= README_MAX_LINES
    assert "make up" in text and "make test" in text
    budget = [line for line in text.splitlines() if line.startswith("Test budget:")]
    assert len(budget) == 1 and budget[0].startswith(BUDGET_LINE), budget


def _local_links(text: str) -> list[str]:
    return [target for target in LINK.findall(text)
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target)]  # http:, https:, mailto:


def test_the_readme_links_into_the_docs():
    targets = {target.split("#", 1)[0] for target in _local_links(_readme())}
    pages = {target for target in targets if target.startswith("docs/") and target.endswith(".md")}
    assert {"docs/index.md", "docs/getting-started.md", "docs/architecture.md"} <= pages


@pytest.mark.parametrize("target", sorted(set(_local_links(README.read_text(encoding="utf-8")))))
def test_each_readme_link_resolves(target):
    path, _, anchor = target.partition("#")
    file = ROOT / path
    assert file.exists(), f"README.md links to {path}, which does not exist"
    if anchor:
        headings = {_slug(h) for h in HEADING.findall(file.read_text(encoding="utf-8"))}
        assert anchor in headings, f"{path} has no heading for #{anchor}"


def test_the_slug_is_the_anchor_the_sites_make():
    assert _slug("The app's own ceiling") == "the-apps-own-ceiling"
    assert _slug("Modes") == "modes"


def test_every_docs_page_is_in_the_navigation():
    """MkDocs' strict build refuses a page left out of ``nav``; this names which."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert pages and {p for p in pages if p not in nav} == set()
