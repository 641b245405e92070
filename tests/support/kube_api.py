"""A recording stand-in for the Kubernetes API's pods, for vllm-router's service discovery.

No Kubernetes runs on this machine, and the question is what the router *asks* of one (which
RBAC verbs it needs) and which pods it then adds. So this plays the API server's two pod
routes, and nothing else: ``GET /api/v1/namespaces/<ns>/pods`` (a list) and the same with
``watch=true`` (a watch: answered 200 and held open, sending no event, until the server stops).
Every request is recorded with its verb (``list``, ``watch``, or ``get`` for one pod by name).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from tests.support.json_handler import JsonHandler

_PODS = re.compile(r"^/api/v1/(?:namespaces/(?P<ns>[^/]+)/)?pods(?:/(?P<name>[^/]+))?$")


@dataclass(frozen=True, slots=True)
class Call:
    verb: str  # list, watch, get, or "other: METHOD PATH"
    namespace: str | None  # None: all namespaces
    authorization: str | None


@dataclass
class KubeAPI:
    url: str
    calls: list[Call] = field(default_factory=list)

    def kubeconfig(self, folder: Path, namespace: str, token: str) -> Path:
        """A kubeconfig naming this server, *namespace* and a bearer *token* (a pod's own
        service-account token, as in a cluster)."""
        path = folder / "kubeconfig"
        path.write_text(json.dumps({  # JSON is YAML
            "apiVersion": "v1", "kind": "Config", "current-context": "stand-in",
            "clusters": [{"name": "stand-in", "cluster": {"server": self.url}}],
            "users": [{"name": "router", "user": {"token": token}}],
            "contexts": [{"name": "stand-in", "context": {
                "cluster": "stand-in", "user": "router", "namespace": namespace}}]}))
        return path


def ready_pod(name: str, namespace: str, labels: dict[str, str], ip: str) -> dict:
    """A Running pod whose Ready condition is True, as the kubelet reports it."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": labels,
                         "uid": f"uid-{name}", "resourceVersion": "7"},
            "spec": {"containers": [{"name": "main", "image": "stand-in"}]},
            "status": {"phase": "Running", "podIP": ip,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


@contextmanager
def kube_api(pods: list[dict]) -> Iterator[KubeAPI]:
    stop = threading.Event()
    api = KubeAPI("")

    class Handler(JsonHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            match = _PODS.match(url.path)
            auth = self.headers.get("Authorization")
            if match is None:
                api.calls.append(Call(f"other: GET {url.path}", None, auth))
                self._json(404, {"kind": "Status", "status": "Failure", "code": 404})
                return
            namespace = match["ns"]
            watch = parse_qs(url.query).get("watch", [""])[0] in ("true", "1")
            verb = "get" if match["name"] else "watch" if watch else "list"
            api.calls.append(Call(verb, namespace, auth))
            chosen = [p for p in pods if namespace in (None, p["metadata"]["namespace"])]
            if verb == "list":
                self._json(200, {"apiVersion": "v1", "kind": "PodList",
                                 "metadata": {"resourceVersion": "7"}, "items": chosen})
            elif verb == "watch":  # no event: the pods stay as listed
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.flush()
                stop.wait()
                self.wfile.write(b"0\r\n\r\n")
            else:
                self._json(404, {"kind": "Status", "status": "Failure", "code": 404})

        def do_POST(self) -> None:
            api.calls.append(Call(f"other: POST {self.path}", None,
                                  self.headers.get("Authorization")))
            self._json(405, {"kind": "Status", "status": "Failure", "code": 405})

        do_PUT = do_PATCH = do_DELETE = do_POST

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield api
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
