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

__all__ = ["free_block", "free_port"]

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


def _reserve(port: int) -> IO[bytes] | None:
    """The lock that reserves *port* for this process, or None: reserved or used elsewhere."""
    lock = open(_LOCKS / str(port), "wb")  # noqa: SIM115 - held until the process exits
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        return None
    if _bindable(port):
        return lock
    lock.close()
    return None


def free_block(size: int) -> int:
    """The first of *size* consecutive ports, each as :func:`free_port` gives one (``hymt-chat
    up`` puts its replicas on the ports after the one it is given)."""
    _LOCKS.mkdir(exist_ok=True)
    ephemeral = _ephemeral()
    for _ in range(_LAST - _FIRST):
        first = _next[0]
        _next[0] = _FIRST + (first + size - _FIRST) % (_LAST - _FIRST)
        ports = range(first, first + size)
        if ports[-1] >= _LAST or any(port in ephemeral for port in ports):
            continue
        locks = []
        for port in ports:
            if (lock := _reserve(port)) is None:
                break
            locks.append(lock)
        if len(locks) == size:
            _held.extend(locks)
            return first
        for lock in locks:
            lock.close()
    raise RuntimeError(f"no {size} free ports in a row in {_FIRST}-{_LAST}")


def free_port() -> int:
    """A port no other process of the machine is using or has reserved here."""
    return free_block(1)
