"""deploy/k8s/router.yaml's vllm-router, for real, finding the real vLLM demo server as a pod.

The one stand-in is the Kubernetes API (tests/support/kube_api.py): no cluster runs here, and
the questions are what the router asks of the API (the RBAC verbs router.yaml grants must be
exactly those) and whom it adds. The router is the real one with the manifest's own args; the
pod it should find is the demo vLLM (pod IP 127.0.0.1), next to an app pod it must ignore, both
with their manifests' labels; a translation then goes through the router to that vLLM."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import openai
import pytest

from hymt_chat.settings import Settings
from hymt_chat.sidecar import deploy
from hymt_chat.sidecar.router import KEY_FILE_VARIABLE, router_binary
from tests.conftest import Server
from tests.support.kube_api import kube_api, ready_pod
from tests.support.ports import free_port
from tests.test_k8s_manifests import ROOT, _docs, _pod_labels, _router_argv

pytestmark = pytest.mark.slow

NAMESPACE = "translate"
TOKEN = "service-account-token"


def _flag(argv: list[str], name: str, value: str) -> list[str]:
    out = list(argv)
    out[out.index(name) + 1] = value
    return out


def test_the_router_finds_the_vllm_pod_with_list_and_watch_only(
        demo_server: Server, tmp_path) -> None:
    vllm_port = urlsplit(demo_server.endpoint.root).port
    assert vllm_port is not None
    pods = [ready_pod("hymt-vllm-0", NAMESPACE, _pod_labels("hymt-vllm"), "127.0.0.1"),
            ready_pod("hymt-app-7c9f4", NAMESPACE, _pod_labels("hymt-app"), "127.0.0.2")]
    port, metrics = free_port(), free_port()
    # The manifest's args; only the addresses change: on this machine the router listens on
    # 127.0.0.1 and the "pod" serves on the demo server's port instead of 8000.
    key = demo_server.endpoint.api_key  # the Secret's api-key: vLLM's, the router's, the app's
    argv = _router_argv(NAMESPACE)
    for name, value in (("--host", "127.0.0.1"), ("--port", str(port)),
                        ("--prometheus-host", "127.0.0.1"), ("--prometheus-port", str(metrics)),
                        ("--service-discovery-port", str(vllm_port))):
        argv = _flag(argv, name, value)
    with kube_api(pods) as api:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_")}
        env["KUBECONFIG"] = str(api.kubeconfig(tmp_path, NAMESPACE, TOKEN))
        # The image's hymt-router (the manifest's command), its key from the Secret's file.
        secret = tmp_path / "api-key"
        secret.write_text(key + "\n")
        env[KEY_FILE_VARIABLE] = str(secret)
        log = (tmp_path / "router.log").open("wb")
        python = str(Settings().vllm_python)
        router_binary(python)  # installed beside vLLM, as in the image
        router = subprocess.Popen([python, str(ROOT / deploy.ROUTER_LAUNCHER), *argv],
                                  env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            root = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 120  # start-up wait only, not a timing assertion
            while True:
                assert router.poll() is None, (tmp_path / "router.log").read_text()[-3000:]
                try:
                    if httpx.get(f"{root}/readiness", timeout=5).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, (tmp_path / "router.log").read_text()[-3000:]
                time.sleep(0.5)
            # `ps` on the node reads this: the key is not there.
            assert key.encode() not in Path(f"/proc/{router.pid}/cmdline").read_bytes()
            workers = httpx.get(f"{root}/workers", timeout=10).json()["workers"]
            assert [w["url"] for w in workers] == [f"http://127.0.0.1:{vllm_port}"]
            with openai.OpenAI(base_url=f"{root}/v1", api_key=key, max_retries=0) as client:
                answer = client.chat.completions.create(
                    model=demo_server.endpoint.model or "", max_tokens=8, temperature=0,
                    messages=[{"role": "user", "content": "Say hello."}])
            assert answer.choices[0].message.content
        finally:
            router.terminate()
            router.wait(timeout=30)
            log.close()
    # What it asked of Kubernetes: list and watch the pods of its namespace, as its service
    # account — exactly the Role's verbs (router.yaml), nothing cluster-wide, no single-pod get.
    (rule,) = _docs()[("Role", "hymt-router")]["rules"]
    assert {c.verb for c in api.calls} == set(rule["verbs"]) == {"list", "watch"}
    assert {c.namespace for c in api.calls} == {NAMESPACE}
    assert {c.authorization for c in api.calls} == {f"Bearer {TOKEN}"}
