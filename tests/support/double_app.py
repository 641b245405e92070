"""The real app (``chainlit run app.py``) in a subprocess, talking to the engine double
(``tests/support/engine_double.py``) instead of vLLM: the app's HTTP and socket surface is real,
the model is the test's. Each app has its own port, cache folder and log under the test's
``tmp`` folder, so two tests can run side by side (pytest-xdist)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.chainlit_app import app_env, running_app
from tests.support.engine_double import EngineDouble
from tests.support.ports import free_port

__all__ = ["double_app"]


@contextmanager
def double_app(double: EngineDouble, tmp: Path, **env: str) -> Iterator[str]:
    """The app's URL, the app on *double* with *env* on top (HYMT_*: the app's settings).

    Without ``HYMT_AGENTS`` it runs with no sign-in, as a fresh install does. ``HYMT_PORT`` is a
    free port so that no sidecar of the developer's (its state file) is taken for the model."""
    tmp.mkdir(parents=True, exist_ok=True)
    environment = app_env(double.env(), HYMT_CACHE_DIR=str(tmp / "cache"),
                          HYMT_PORT=str(free_port()), **env)
    if "HYMT_AGENTS" not in env:
        environment["HYMT_AGENTS"] = ""
        environment.pop("CHAINLIT_AUTH_SECRET", None)
    with running_app(environment, free_port(), tmp / "app.log") as url:
        yield url
