"""deploy/k8s: the manifests parse, vLLM runs the table's flags, the app is sticky."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
import yaml

from hymt_chat.sidecar import deploy
from hymt_chat.sidecar.profiles import ENTRYPOINT, PROFILES, get_profile, parse_flags

ROOT = Path(__file__).resolve().parent.parent
K8S = ROOT / "deploy" / "k8s"


def _docs() -> dict[tuple[str, str], dict]:
    docs = {}
    for path in sorted(K8S.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            docs[(doc["kind"], doc["metadata"]["name"])] = doc
    return docs


def _container(deployment: dict) -> dict:
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return container


def _env(container: dict) -> dict:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def _profile() -> str:
    return deploy.k8s_profile((K8S / "vllm.yaml").read_text())


def test_every_manifest_parses_and_is_in_the_kustomization():
    docs = _docs()
    assert {("Deployment", "hymt-vllm"), ("Service", "hymt-vllm"), ("Deployment", "hymt-app"),
            ("Service", "hymt-app"), ("Ingress", "hymt-app"),
            ("PersistentVolumeClaim", "hymt-hf-cache")} <= set(docs)
    for doc in docs.values():
        assert doc["apiVersion"] and doc["metadata"]["name"]
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert set(kustomization["resources"]) == {
        p.name for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml"}


def test_vllm_args_are_the_tables_and_strings():
    container = _container(_docs()[("Deployment", "hymt-vllm")])
    assert container["image"] == deploy.VLLM_IMAGE
    assert container["command"] == ["python3", *ENTRYPOINT]
    args = container["args"]
    assert all(isinstance(a, str) for a in args), "Kubernetes wants every arg as a string"
    assert args == deploy.k8s_args(_profile())
    flags = dict(parse_flags(args))
    for name, value in get_profile(_profile()).flags:
        assert flags[name] == value, name
    assert flags["--api-key"] == "$(HYMT_API_KEY)"
    assert _env(container)["HYMT_API_KEY"] == {
        "secretKeyRef": {"name": "hymt-chat", "key": "api-key"}}


def test_the_manifest_is_rendered_for_a10_in_the_repository():
    assert _profile() == "a10"


def test_vllm_pod_gets_a_gpu_probes_and_a_memory_backed_shm():
    deployment = _docs()[("Deployment", "hymt-vllm")]
    container = _container(deployment)
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["path"] == "/health", probe
    # The first start downloads ~16 GB: the startup probe must allow many minutes.
    startup = container["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 20 * 60
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    shm = volumes[mounts["/dev/shm"]]["emptyDir"]
    assert shm["medium"] == "Memory" and shm["sizeLimit"] == "1Gi"
    assert "persistentVolumeClaim" in volumes[mounts["/models"]]
    assert _env(container)["HF_HOME"].startswith("/models")
    assert deployment["spec"]["strategy"]["type"] == "Recreate"


def test_services_select_their_pods():
    docs = _docs()
    for name in ("hymt-vllm", "hymt-app"):
        labels = docs[("Deployment", name)]["spec"]["template"]["metadata"]["labels"]
        selector = docs[("Service", name)]["spec"]["selector"]
        assert selector.items() <= labels.items()
        assert docs[("Deployment", name)]["spec"]["selector"]["matchLabels"] == selector


def test_app_is_sticky_and_agrees_with_the_server():
    docs = _docs()
    app = docs[("Deployment", "hymt-app")]
    env = _env(_container(app))
    vllm_port = docs[("Service", "hymt-vllm")]["spec"]["ports"][0]["port"]
    assert env["HYMT_BASE_URL"] == f"http://hymt-vllm:{vllm_port}/v1"
    flags = dict(PROFILES[_profile()].flags)
    assert env["HYMT_MAX_MODEL_LEN"] == flags["--max-model-len"]
    replicas = app["spec"]["replicas"]
    assert replicas > 1
    assert int(env["HYMT_WINDOW_MAX"]) * replicas <= int(flags["--max-num-queued-reqs"])
    assert docs[("Service", "hymt-app")]["spec"]["sessionAffinity"] == "ClientIP"
    annotations = docs[("Ingress", "hymt-app")]["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert app["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True


def test_the_websocket_only_option_named_in_the_manifest_exists_in_chainlit():
    # Read chainlit's source rather than import it (seconds of imports for one field name).
    spec = importlib.util.find_spec("chainlit")
    assert spec is not None and spec.origin is not None
    source = (Path(spec.origin).parent / "config.py").read_text()
    project = source[source.index("class ProjectSettings"):]
    assert re.search(r"^    transports: ", project[: project.index("\nclass ")], re.M)
    assert 'transports = ["websocket"]' in (K8S / "app.yaml").read_text()


@pytest.mark.parametrize("profile", ["a100-80g", "h200"])
def test_the_k8s_block_can_be_rendered_for_another_gpu(profile):
    text = deploy.render_k8s_block((K8S / "vllm.yaml").read_text(), profile)
    assert deploy.k8s_profile(text) == profile
    (container,) = [d for d in yaml.safe_load_all(text) if d["kind"] == "Deployment"][0][
        "spec"]["template"]["spec"]["containers"]
    assert container["args"] == deploy.k8s_args(profile)
    assert deploy.render_k8s_block(text) == text  # stable: rendering twice changes nothing
