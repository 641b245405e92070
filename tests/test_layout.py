"""The tree shows the architecture: layers that import only downwards, no Chainlit in the core,
a thin app.py, and an architecture page (docs/architecture.md) whose layout map is the real tree."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "hymt_chat"
# The line UI → modes → service → engine → sidecar/store → lang/text/words/errors → settings: a
# module imports its own layer or those below it, never one above (an error names its sentence
# in the catalogs' words, which name languages).
RANKS = {"cli": 6, "room": 6, "api": 6, "modes": 5, "service": 4, "engine": 3, "speech": 3,
         "sidecar": 2,
         "store": 2,
         "lang": 1, "text": 1, "words": 1, "errors": 1,
         "settings": 0, "__init__": 0}


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _layer(module: str) -> str:
    """hymt_chat.engine.policy -> engine; hymt_chat.errors -> errors; hymt_chat -> __init__."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path) -> list[str]:
    """Every module a file imports, at any depth (inside functions too)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.level:
                raise AssertionError(f"{path}: relative import (use hymt_chat.… paths)")
            found.append(node.module)
            if node.module == "hymt_chat":  # from hymt_chat import errors
                found += [f"hymt_chat.{alias.name}" for alias in node.names
                          if alias.name in RANKS]
    return found


def _name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_module_imports_only_its_layer_and_those_below(path):
    own = _layer(_name(path))
    above = [m for m in _imports(path) if m.startswith("hymt_chat.") and m != "hymt_chat"
             and RANKS[_layer(m)] > RANKS[own]]
    assert not above, f"{own} may not import {above}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_core_never_imports_chainlit(path):
    assert not [m for m in _imports(path) if m.split(".")[0] == "chainlit"]


def test_the_top_level_holds_only_the_front_door_errors_and_settings():
    top = {p.name for p in PACKAGE.glob("*.py")}
    assert top <= {"__init__.py", "__main__.py", "errors.py", "settings.py"}, top
    assert set(RANKS) - {"errors", "settings", "__init__"} == {
        p.name for p in PACKAGE.iterdir()
        if p.is_dir() and p.name not in ("__pycache__", "locale")}  # locale: data, no code
    assert not list((PACKAGE / "locale").rglob("*.py"))


def test_app_py_only_wires_chainlit_to_the_core():
    lines = (ROOT / "app.py").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, len(lines)


ARCHITECTURE = ROOT / "docs" / "architecture.md"


def _layout_section(text: str) -> str:
    """The page's "## Layout" section, up to the next heading of its level."""
    assert "\n## Layout\n" in text, "docs/architecture.md has no '## Layout' section"
    return text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]


def _listed(section: str) -> set[str]:
    """Module paths the map names (``hymt_chat/engine/policy.py`` …)."""
    return set(re.findall(r"hymt_chat/[\w/]+\.py", section))


def _real() -> set[str]:
    return {str(p.relative_to(ROOT)) for p in _modules() if p.name != "__init__.py"}


def test_the_architecture_pages_layout_is_the_real_tree():
    listed = _listed(_layout_section(ARCHITECTURE.read_text(encoding="utf-8")))
    real = _real()
    assert sorted(real - listed) == [], "modules docs/architecture.md's layout does not list"
    assert sorted(listed - real) == [], "modules docs/architecture.md's layout lists but the tree lacks"


def test_a_module_left_out_of_the_map_is_noticed():
    """The check above can fail: drop one module's line from the map and it is missed."""
    section = _layout_section(ARCHITECTURE.read_text(encoding="utf-8"))
    line = next(ln for ln in section.splitlines() if "hymt_chat/engine/policy.py" in ln)
    assert "hymt_chat/engine/policy.py" in _real() - _listed(section.replace(line + "\n", ""))


def test_the_map_is_read_only_from_its_own_section():
    """A module named elsewhere on the page does not count as mapped."""
    page = "# A\n\n`hymt_chat/engine/ghost.py` in prose\n\n## Layout\n\n```\nhymt_chat/x.py\n```\n\n## After\n`hymt_chat/y.py`\n"
    assert _listed(_layout_section(page)) == {"hymt_chat/x.py"}
