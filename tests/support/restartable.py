"""An engine double on a fixed address that the test kills and starts again: what the app sees
of a vLLM that is SIGKILLed and brought back by its Supervisor, without the minute it takes.

While it is up it is an :class:`~tests.support.engine_double.EngineDouble` (``engine``); each
start is a new one (a fresh process: its requests, counts and start time), all kept in
``lives``. :meth:`Restartable.kill` cuts every answer under way in the middle (the double's
``reset_next``: headers and half a body, then the connection is gone, as a killed process's
are) and closes the port, so the app's next tries are refused until :meth:`Restartable.start`.
The app is given the address before the first start (:meth:`Restartable.settings`), as an app
started before its sidecar is. The real kill and restart are ``tests/test_e2e_scale.py``'s.
"""

from __future__ import annotations

import contextlib
from types import TracebackType
from typing import Any

from hymt_chat.settings import Settings
from tests.support.engine_double import EngineDouble, running_double
from tests.support.ports import free_port

__all__ = ["Restartable"]

_CUT_ALL = 1_000_000  # reset_next: more answers than any test has under way


class Restartable:
    """A double the test starts, kills and starts again on one port (``with`` stops it)."""

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.port = free_port()
        self.lives: list[EngineDouble] = []
        template = EngineDouble(**options)  # the key and model every life serves
        self.api_key, self.model = template.api_key, template.model
        self._stack: contextlib.ExitStack | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def engine(self) -> EngineDouble:
        """The double of the current (or last) life."""
        assert self.lives, "never started"
        return self.lives[-1]

    @property
    def up(self) -> bool:
        return self._stack is not None

    def settings(self, **overrides: object) -> Settings:
        """Settings of an app that talks to this address (valid before the first start)."""
        base = dict(base_url=self.base_url, api_key=self.api_key, model=self.model)
        return Settings(**{**base, **overrides})  # type: ignore[arg-type]

    def start(self) -> EngineDouble:
        """A new life on the same port (blocks until it listens)."""
        assert not self.up, "already up"
        stack = contextlib.ExitStack()
        engine = stack.enter_context(running_double(port=self.port, **self.options))
        self._stack = stack
        self.lives.append(engine)
        return engine

    def kill(self) -> None:
        """Every answer under way is cut mid-answer (and any that arrives before the port
        closes), then the port closes: the app's calls fail as a killed engine's do."""
        assert self._stack is not None, "not up"
        engine = self.engine
        engine.reset_next = _CUT_ALL
        engine.set_hold(False)  # held ones answer now: cut, like the waiting ones after them
        stack, self._stack = self._stack, None
        stack.close()

    def __enter__(self) -> Restartable:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._stack is not None:
            stack, self._stack = self._stack, None
            stack.close()
