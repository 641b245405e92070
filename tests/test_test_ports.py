"""The test servers' ports: outside the range the kernel hands outgoing connections, and never
the same for two test processes running at once (a port in use made an app exit at start)."""

from __future__ import annotations

import subprocess
import sys

from tests.support import ports
from tests.support.ports import _ephemeral, free_port

START = 25000  # every process starts its search at the same port: only the reservations part them
GRAB = ("import sys; sys.path.insert(0, '.'); from tests.support import ports;"
        f"ports._next[0] = {START}; print(*[ports.free_port() for _ in range(40)]);"
        "sys.stdout.flush(); sys.stdin.read()")


def test_a_port_is_outside_the_ephemeral_range_and_not_handed_out_twice():
    ports = [free_port() for _ in range(40)]
    assert len(set(ports)) == 40
    assert not any(port in _ephemeral() for port in ports)


def test_two_processes_holding_ports_get_different_ones(monkeypatch):
    monkeypatch.setattr(ports, "_next", [START])
    ours = {free_port() for _ in range(40)}
    others = [subprocess.Popen([sys.executable, "-c", GRAB], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        theirs = [set(map(int, proc.stdout.readline().split())) for proc in others]
    finally:
        for proc in others:
            proc.communicate("")
    assert all(len(t) == 40 for t in theirs)
    assert not (ours & theirs[0]) and not (ours & theirs[1]) and not (theirs[0] & theirs[1])
