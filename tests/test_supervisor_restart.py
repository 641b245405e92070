"""A killed server's leftover processes are killed at once, so that its restart is its start
time and not a graceful shutdown of orphans first (a SIGKILLed vLLM replica's engine can spend
~18 s shutting down before the restart begins).

The server here is a small stand-in process tree — an HTTP /health and an "engine" child that,
like vLLM's EngineCore, takes SIGTERM as the start of a slow shutdown (it notes it in a file).
The real vLLM replica is SIGKILLed in tests/test_e2e_scale.py; here the question is only which
signal the orphan gets, which the stand-in can tell and vLLM's own processes cannot.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from hymt_chat.sidecar.profiles import LaunchSpec
from hymt_chat.sidecar.supervisor import Supervisor
from tests.support.ports import free_port
from tests.support.up_stack import wait_for

SERVER = r"""
import http.server, os, subprocess, sys
port, folder = int(sys.argv[1]), sys.argv[2]
engine = subprocess.Popen([sys.executable, "-c", '''
import os, signal, sys, time
folder = sys.argv[1]
def term(*_):
    open(os.path.join(folder, "term"), "a").write("TERM ")  # a graceful shutdown begins
    sys.exit(0)
signal.signal(signal.SIGTERM, term)
open(os.path.join(folder, "engine-%d" % os.getpid()), "w").close()
time.sleep(600)
''', folder])
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers()
    def log_message(self, *args):
        pass
open(os.path.join(folder, "server-%d" % os.getpid()), "w").close()
http.server.HTTPServer(("127.0.0.1", port), Health).serve_forever()
"""


def _pids(folder: Path, kind: str) -> list[int]:
    return sorted(int(p.name.split("-")[1]) for p in folder.glob(f"{kind}-*"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(
        f"/proc/{pid}/stat").read_text().split()[2]


def _until(condition, what: str) -> None:
    wait_for(condition, 60, what, every=0.1)  # a safety net, not a speed bound


def test_a_killed_servers_orphans_get_sigkill_and_the_restart_begins_at_once(tmp_path):
    port = free_port()
    spec = LaunchSpec([sys.executable, "-c", SERVER, str(port), str(tmp_path)], {})
    supervisor = Supervisor(spec, health_url=f"http://127.0.0.1:{port}/health",
                            log_path=tmp_path / "server.log", max_backoff=1.0)
    supervisor.start(timeout=60)
    try:
        _until(lambda: _pids(tmp_path, "engine"), "the engine child starts")
        [server], [engine] = _pids(tmp_path, "server"), _pids(tmp_path, "engine")
        os.kill(server, signal.SIGKILL)  # the API server dies; its engine is left behind
        _until(lambda: supervisor.restarts == 1 and len(_pids(tmp_path, "server")) == 2,
               "the supervisor restarts the server")
        _until(lambda: supervisor.state == "ready", "the new server is healthy")
        assert not _alive(engine), "the orphaned engine is still running"
        assert not (tmp_path / "term").exists(), "the orphan got SIGTERM: a slow shutdown first"
    finally:
        supervisor.stop()
    new_engine = _pids(tmp_path, "engine")[-1]
    _until(lambda: not _alive(new_engine), "stop() ends the new group")
    assert (tmp_path / "term").read_text() == "TERM "  # a stop is still graceful first
