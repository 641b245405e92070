"""Start the real chat app (``chainlit run app.py -h``) in a subprocess for a test, and stop it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
CHAINLIT = Path(sys.executable).with_name("chainlit")


@contextlib.contextmanager
def running_app(
    env: dict[str, str], port: int, log_path: Path, timeout: float = 90,
    app: Path = ROOT / "app.py",
) -> Iterator[str]:
    """Yield the app's base URL once its page answers; kill its process group afterwards."""
    log = open(log_path, "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [str(CHAINLIT), "run", str(app), "-h",
         "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT, env={**env, "PYTHONUNBUFFERED": "1"}, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"chainlit exited with {proc.returncode}:\n{log_path.read_text()}")
            try:
                if httpx.get(url + "/", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"chainlit did not start in {timeout} s:\n{log_path.read_text()}")
            time.sleep(0.3)
        yield url
    except BaseException:
        # The test failed inside: the app's own account goes into the report (its log is in a
        # temporary folder CI does not keep).
        log.flush()
        tail = log_path.read_text(errors="replace").splitlines()[-40:]
        print(f"--- the last lines of {log_path.name} ---", *tail, sep="\n")
        raise
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()
        # Chainlit deletes <root>/.files when it stops; apps of other fixtures still running from
        # the same folder keep their uploads and downloads there (a session's folder is made
        # again on its next file, the root is not): put the root back for them.
        (ROOT / ".files").mkdir(exist_ok=True)


def app_env(base: dict[str, str] | None = None, **overrides: str) -> dict[str, str]:
    """The environment for the app: inherited, minus settings that would point it elsewhere."""
    env = dict(base if base is not None else os.environ)
    if base is None:  # a developer's own model settings must not leak into the test's app
        for key in ("HYMT_BASE_URL", "HYMT_API_KEY", "HYMT_MODEL", "HYMT_PORT"):
            env.pop(key, None)
    env.pop("HYMT_DEMO_MODEL", None)
    # A test app hears on one core: the other is the test's, and the vLLM servers' beside it.
    env.setdefault("HYMT_SPEECH_THREADS", "1")
    env.update(overrides)
    return env
