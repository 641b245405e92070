"""The app image: small, non-root, only the app's environment, a health check; hadolint-clean.

No Docker engine here: the Dockerfile is linted (hadolint, when installed) and read. The slow
test builds what the image builds — `pip install .` from exactly the build context that
.dockerignore lets through, into a fresh venv — and starts the app as the image's CMD does.
"""

from __future__ import annotations

import fnmatch
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

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


def test_installs_the_app_only_without_extras():
    runs = " ".join(args for word, args in _instructions() if word == "RUN")
    assert "pip install --no-cache-dir ." in runs
    assert "[test" not in runs and "[bench" not in runs and "vllm" not in runs


def test_healthcheck_and_command():
    steps = dict(_instructions())
    health = steps["HEALTHCHECK"]
    assert "http://127.0.0.1:8000/health" in health and '"python", "-c"' in health
    assert "curl" not in health and "wget" not in health  # not in the slim image
    assert shlex.split(steps["CMD"].strip("[]").replace(",", " ")) == [
        "chainlit", "run", "app.py", "-h", "--host", "0.0.0.0", "--port", "8000"]
    assert "HYMT_BASE_URL" not in " ".join(a for w, a in _instructions() if w == "ENV")


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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_the_image_contents_install_and_serve(tmp_path):
    """What the image does, without Docker: install the context, run its CMD, ask /health."""
    context = tmp_path / "context"
    for path in _context_files():
        target = context / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-cache-dir", "."],
                         cwd=context, capture_output=True, text=True, timeout=900)
    assert pip.returncode == 0, pip.stderr[-3000:]
    app_dir = tmp_path / "app"  # the final stage has only these next to the venv
    app_dir.mkdir()
    for src in [context / "app.py", *context.glob("chainlit*.md"), context / ".chainlit",
                context / "public"]:
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, app_dir / src.name)
    port = _free_port()
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path),
           "HYMT_CACHE_DIR": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1",
           "HYMT_BASE_URL": f"http://127.0.0.1:{_free_port()}/v1", "HYMT_API_KEY": "k"}
    log = (tmp_path / "app.log").open("w")
    proc = subprocess.Popen(
        [str(venv / "bin" / "chainlit"), "run", "app.py", "-h", "--host", "127.0.0.1",
         "--port", str(port)], cwd=app_dir, env=env, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True)
    try:
        status = None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                status = urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5).status
            except urllib.error.HTTPError as err:
                status = err.code
            except OSError:
                time.sleep(1)
                continue
            break
        # No model behind HYMT_BASE_URL: the app runs and its /health says the model is down,
        # which is what the image's HEALTHCHECK reports as unhealthy.
        assert status == 503, (tmp_path / "app.log").read_text()[-3000:]
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=30)
        log.close()
