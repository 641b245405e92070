"""The app image's Dockerfile read: small, non-root, only the app's locked environment, a health
check that follows the port; hadolint-clean.

The image itself is built and run by tests/test_images.py (a real Docker engine).
"""

from __future__ import annotations

import fnmatch
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in DOCKERFILE.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        pending += " " + line.removesuffix("\\").strip()
        if not line.endswith("\\"):
            word, _, rest = pending.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
            pending = ""
    return out


def _hadolint() -> str | None:
    beside = Path(sys.executable).with_name("hadolint")
    return str(beside) if beside.exists() else shutil.which("hadolint")


def test_hadolint_finds_nothing():
    out = subprocess.run([_hadolint(), "--no-color", str(ROOT / "Dockerfile")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_slim_python_311_and_a_non_root_user():
    steps = _instructions()
    froms = [args for word, args in steps if word == "FROM"]
    assert froms and all(f.startswith("python:3.11-slim") for f in froms)
    users = [args for word, args in steps if word == "USER"]
    assert users and users[-1].split(":")[0] not in ("0", "root")


def test_installs_the_locked_app_only_without_extras():
    runs = " ".join(args for word, args in _instructions() if word == "RUN")
    # uv.lock's runtime set (no extras, no dev group), hash-checked, then the app alone.
    assert "uv export --frozen --no-dev --no-emit-project" in runs
    assert "--extra" not in runs and "--all-extras" not in runs
    assert "pip install --no-cache-dir --require-hashes --no-deps -r requirements.txt" in runs
    assert "pip install --no-cache-dir --no-deps ." in runs
    assert "[test" not in runs and "[bench" not in runs and "vllm" not in runs


def test_uv_is_the_version_the_lock_pins():
    (arg,) = [args for word, args in _instructions() if word == "ARG" and "UV_VERSION" in args]
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert f'"uv=={arg.split("=", 1)[1]}"' in pyproject


def test_healthcheck_and_command():
    steps = dict(_instructions())
    health = steps["HEALTHCHECK"]
    assert '"python", "-c"' in health and "/health" in health
    # The port is CHAINLIT_PORT's, which the server reads too: never a number of its own.
    assert "os.environ.get('CHAINLIT_PORT', '8000')" in health and ":8000/" not in health
    assert "curl" not in health and "wget" not in health  # not in the slim image
    assert shlex.split(steps["CMD"].strip("[]").replace(",", " ")) == [
        "chainlit", "run", "app.py", "-h"]
    env = " ".join(a for w, a in _instructions() if w == "ENV")
    assert "CHAINLIT_HOST=0.0.0.0" in env and "CHAINLIT_PORT=8000" in env
    assert "HYMT_BASE_URL" not in env


def test_the_code_belongs_to_root():
    copies = [args for word, args in _instructions() if word == "COPY"]
    assert copies and not any("--chown" in args for args in copies)


def _context_files() -> list[Path]:
    """Files of the build context once .dockerignore applies (its patterns, simplified)."""
    patterns = [p.strip() for p in (ROOT / ".dockerignore").read_text().splitlines()
                if p.strip() and not p.startswith("#")]
    keep = []
    for path in ROOT.rglob("*"):
        if not path.is_file() or ".git" in path.relative_to(ROOT).parts[:1]:
            continue
        rel = path.relative_to(ROOT).as_posix()
        included = True
        for pattern in patterns:
            negate = pattern.startswith("!")
            pat = pattern.lstrip("!").rstrip("/")
            hit = (fnmatch.fnmatch(rel, pat) or rel.startswith(pat + "/")
                   or fnmatch.fnmatch(rel, pat.replace("**/", "*/"))
                   or (pat.startswith("**/") and fnmatch.fnmatch(path.name, pat[3:])))
            if hit:
                included = negate
        if included:
            keep.append(path)
    return keep


def test_dockerignore_lets_in_only_what_the_image_copies():
    rels = {p.relative_to(ROOT).as_posix() for p in _context_files()}
    assert {"pyproject.toml", "README.md", "app.py", "chainlit.md",
            ".chainlit/config.toml", "hymt_chat/__init__.py"} <= rels
    for leaked in (".venv/", ".venv-vllm/", "tests/", ".env", ".git/", "benchmarks/",
                   "test-artifacts/", "__pycache__"):
        assert not any(r.startswith(leaked) or leaked in r for r in rels), leaked
    sources = [src for word, args in _instructions() if word == "COPY" and "--from" not in args
               for src in [t for t in args.split() if not t.startswith("--")][:-1]]
    assert sources, "the Dockerfile copies nothing?"
    for src in sources:  # everything the Dockerfile copies is in the context
        src = src.rstrip("/")
        assert any(fnmatch.fnmatch(r, src) or r.startswith(src + "/") for r in rels), src


def test_the_image_copies_every_module_of_ours_that_app_py_imports():
    """app.py imports its sibling modules by name: one left out of the image is a container that
    exits at start with ModuleNotFoundError, which only the Docker test would otherwise see."""
    import ast
    tree = ast.parse((ROOT / "app.py").read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module and not node.level}
    siblings = {name for name in imported if (ROOT / f"{name}.py").is_file()}
    assert {"presenter", "chainlit_edge"} <= siblings
    copied = {src for word, args in _instructions() if word == "COPY" and "--from" not in args
              for src in args.split()[:-1]}
    rels = {p.relative_to(ROOT).as_posix() for p in _context_files()}
    for name in siblings:
        assert f"{name}.py" in copied, f"the Dockerfile does not copy {name}.py"
        assert f"{name}.py" in rels, f".dockerignore keeps {name}.py out of the context"
