"""Ports for the servers a test starts, which no other process takes before the server binds.

A port the kernel hands out for ``bind(("127.0.0.1", 0))`` is free only at that instant: it
comes from the ephemeral range, which every outgoing connection of the machine also draws
from, and another test process may be handed the same one. Here a port comes from below the
ephemeral range (``/proc/sys/net/ipv4/ip_local_port_range``), and an exclusive lock on a file
named after it reserves it for this process's lifetime, across test workers and concurrent
runs on one machine.
"""

from __future__ import annotations

import fcntl
import os
import random
import socket
import tempfile
from pathlib import Path
from typing import IO

__all__ = ["free_port"]

_LOCKS = Path(tempfile.gettempdir()) / "hymt-test-ports"
_FIRST, _LAST = 20000, 32000  # below Linux's default ephemeral range (32768-60999)
_held: list[IO[bytes]] = []  # the reservations: released when the process exits
_next = [_FIRST + random.Random(os.getpid()).randrange(_LAST - _FIRST)]


def _ephemeral() -> range:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return range(int(low), int(high) + 1)
    except (OSError, ValueError):
        return range(32768, 61000)


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A port no other process of the machine is using or has reserved here."""
    _LOCKS.mkdir(exist_ok=True)
    ephemeral = _ephemeral()
    for _ in range(_LAST - _FIRST):
        port = _next[0]
        _next[0] = _FIRST + (port + 1 - _FIRST) % (_LAST - _FIRST)
        if port in ephemeral:
            continue
        lock = open(_LOCKS / str(port), "wb")  # noqa: SIM115 - held until the process exits
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            continue
        if _bindable(port):
            _held.append(lock)
            return port
        lock.close()
    raise RuntimeError(f"no free port in {_FIRST}-{_LAST}")
