"""deploy/k8s: the manifests parse, vLLM runs the table's flags, vllm-router finds exactly the
vLLM pods with exactly the permissions it needs and makes plan_router's choices, the app replicas
talk to the router, share Redis and PostgreSQL and split the engine's slots.

No cluster here: the manifests are read with PyYAML; the router's args are read by vllm-router's
own parser (tests/support/router_args.py, in the sidecar's venv) and Redis's by a real
redis-server."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import time
import tomllib
from pathlib import Path

import pytest
import redis
import yaml

from hymt_chat.errors import RateLimitedError, SidecarError
from hymt_chat.service.ratelimit import RateLimiter
from hymt_chat.settings import Settings
from hymt_chat.sidecar import deploy
from hymt_chat.sidecar.capacity import engine_slots
from hymt_chat.sidecar.profiles import ENTRYPOINT, PROFILES, get_profile, parse_flags
from hymt_chat.sidecar.router import KEY_FILE_VARIABLE, plan_router
from tests.support.ports import free_port
from tests.support.router_parse import VLLM_PYTHON, parse_launched, parse_router

ROOT = Path(__file__).resolve().parent.parent
K8S = ROOT / "deploy" / "k8s"
WORKLOADS = ("Deployment", "StatefulSet")
# What the discovery adds instead of --worker-urls: the rest must be plan_router's.
DISCOVERY_FIELDS = {"worker_urls", "service_discovery", "selector", "service_discovery_port",
                    "service_discovery_namespace"}


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


def _workload(name: str) -> dict:
    docs = _docs()
    (found,) = [docs[(kind, name)] for kind in WORKLOADS if (kind, name) in docs]
    return found


def _pod_labels(name: str) -> dict[str, str]:
    return _workload(name)["spec"]["template"]["metadata"]["labels"]


def _port(container: dict, name: str) -> int:
    (port,) = [p["containerPort"] for p in container["ports"] if p["name"] == name]
    return port


def k8s_expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' $(VAR) expansion of args and env values ($$ escapes; an unknown name stays)."""
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                  lambda m: "$" if m[0] == "$$" else env.get(m[1], m[0]), text)


def _router_pod() -> dict:
    return _docs()[("Deployment", "hymt-router")]["spec"]["template"]["spec"]


def _router_container() -> dict:
    return _container(_docs()[("Deployment", "hymt-router")])


def _router_argv(namespace: str = "translate") -> list[str]:
    return [k8s_expand(a, {"POD_NAMESPACE": namespace}) for a in _router_container()["args"]]


def _router_key_file() -> tuple[str, str, str]:
    """(the file the router's launcher reads its key from, the Secret and the key of it that
    is mounted there), as the manifest wires them."""
    container = _router_container()
    path = Path(_env(container)[KEY_FILE_VARIABLE])
    (mount,) = [m for m in container["volumeMounts"] if path.parent == Path(m["mountPath"])]
    (volume,) = [v for v in _router_pod()["volumes"] if v["name"] == mount["name"]]
    (item,) = [i for i in volume["secret"]["items"] if i["path"] == path.name]
    return str(path), volume["secret"]["secretName"], item["key"]


def test_every_manifest_parses_and_is_in_the_kustomization():
    docs = _docs()
    assert {("StatefulSet", "hymt-vllm"), ("Service", "hymt-vllm"), ("Deployment", "hymt-app"),
            ("Service", "hymt-app"), ("Ingress", "hymt-app"), ("Deployment", "hymt-router"),
            ("Service", "hymt-router"), ("ServiceAccount", "hymt-router"),
            ("Role", "hymt-router"), ("RoleBinding", "hymt-router"),
            ("Deployment", "hymt-redis"), ("Service", "hymt-redis")} <= set(docs)
    for doc in docs.values():
        assert doc["apiVersion"] and doc["metadata"]["name"]
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert set(kustomization["resources"]) == {
        p.name for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml"}


def test_vllm_args_are_the_tables_and_strings():
    container = _container(_workload("hymt-vllm"))
    assert container["image"] == deploy.VLLM_IMAGE
    assert container["command"] == ["python3", *ENTRYPOINT]
    args = container["args"]
    assert all(isinstance(a, str) for a in args), "Kubernetes wants every arg as a string"
    assert args == deploy.k8s_args(_profile())
    flags = dict(parse_flags(args))
    for name, value in get_profile(_profile()).flags:
        assert flags[name] == value, name
    # The key from the Secret in VLLM_API_KEY, which vLLM reads: never argv, which `ps` on
    # the node shows and where a key that begins with '-' stops vLLM's parser.
    assert "--api-key" not in flags and not any("API_KEY" in a for a in args)
    assert _env(container)["VLLM_API_KEY"] == {
        "secretKeyRef": {"name": "hymt-chat", "key": "api-key"}}


def test_the_manifest_is_rendered_for_a10_in_the_repository():
    assert _profile() == "a10"


def test_vllm_pod_gets_a_gpu_probes_and_a_memory_backed_shm():
    statefulset = _docs()[("StatefulSet", "hymt-vllm")]
    container = _container(statefulset)
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["path"] == "/health", probe
    # The first start downloads ~16 GB: the startup probe must allow many minutes.
    startup = container["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 20 * 60
    volumes = {v["name"]: v for v in statefulset["spec"]["template"]["spec"]["volumes"]}
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    shm = volumes[mounts["/dev/shm"]]["emptyDir"]
    assert shm["medium"] == "Memory" and shm["sizeLimit"] == "1Gi"
    assert _env(container)["HF_HOME"].startswith("/models")


def test_every_vllm_replica_has_its_own_weights_cache():
    # Several replicas on several GPU nodes cannot share one ReadWriteOnce claim.
    statefulset = _docs()[("StatefulSet", "hymt-vllm")]
    assert statefulset["spec"]["replicas"] >= 2
    (claim,) = statefulset["spec"]["volumeClaimTemplates"]
    mounts = {m["mountPath"]: m["name"] for m in _container(statefulset)["volumeMounts"]}
    assert mounts["/models"] == claim["metadata"]["name"]
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    assert "persistentVolumeClaim" not in str(statefulset["spec"]["template"])
    # The governing Service exists and is headless: nothing balances vLLM but the router.
    service = _docs()[("Service", statefulset["spec"]["serviceName"])]
    assert service["spec"]["clusterIP"] == "None"
    assert statefulset["spec"]["podManagementPolicy"] == "Parallel"


def test_services_select_their_pods():
    docs = _docs()
    for name in ("hymt-vllm", "hymt-app", "hymt-router", "hymt-redis"):
        workload = _workload(name)
        labels = workload["spec"]["template"]["metadata"]["labels"]
        selector = docs[("Service", name)]["spec"]["selector"]
        assert selector.items() <= labels.items()
        assert workload["spec"]["selector"]["matchLabels"] == selector
        container = _container(workload)
        for port in docs[("Service", name)]["spec"]["ports"]:
            assert port["targetPort"] in {p["name"] for p in container["ports"]}, (name, port)


def test_app_is_sticky_and_agrees_with_the_server():
    docs = _docs()
    app = docs[("Deployment", "hymt-app")]
    env = _env(_container(app))
    flags = dict(PROFILES[_profile()].flags)
    assert env["HYMT_MAX_MODEL_LEN"] == flags["--max-model-len"]
    assert docs[("Service", "hymt-app")]["spec"]["sessionAffinity"] == "ClientIP"
    annotations = docs[("Ingress", "hymt-app")]["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    # The cookie the rooms' join links carry (HYMT_AFFINITY_COOKIE's default) is the Ingress's.
    assert annotations["nginx.ingress.kubernetes.io/session-cookie-name"] == Settings(
        _env_file=None).affinity_cookie
    assert app["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True


def test_the_app_talks_to_the_router_service_never_to_vllm():
    docs = _docs()
    env = _env(_container(docs[("Deployment", "hymt-app")]))
    router = docs[("Service", "hymt-router")]
    (http,) = [p for p in router["spec"]["ports"] if p["name"] == "http"]
    assert env["HYMT_BASE_URL"] == f"http://{deploy.ROUTER_SERVICE}:{http['port']}/v1"
    assert router["metadata"]["name"] == deploy.ROUTER_SERVICE
    # The Service's port reaches the router's --port.
    argv = _router_argv()
    assert _port(_router_container(), http["targetPort"]) == int(argv[argv.index("--port") + 1])


def test_the_app_replicas_split_the_engines_running_slots():
    docs = _docs()
    app = docs[("Deployment", "hymt-app")]
    env = _env(_container(app))
    app_replicas = app["spec"]["replicas"]
    vllm_replicas = docs[("StatefulSet", "hymt-vllm")]["spec"]["replicas"]
    assert app_replicas > 1 and vllm_replicas > 1
    # The app is told the shape of the deployment: vLLM's profile and both replica counts.
    assert env["HYMT_PROFILE"] == _profile()
    assert env["HYMT_REPLICAS"] == str(vllm_replicas)
    assert env["HYMT_APP_REPLICAS"] == str(app_replicas)
    assert "HYMT_WINDOW_MAX" not in env
    # The window the app computes from it (its own code) is its share of the running slots:
    # nothing waits inside vLLM (docs/configuration.md's rule), no slot is left unused, and one is left
    # to background work beside the reserved one.
    settings = Settings(_env_file=None, **{k.removeprefix("HYMT_").lower(): v
                                           for k, v in env.items()
                                           if isinstance(v, str) and k.startswith("HYMT_")})
    seqs = int(dict(parse_flags(_container(_workload("hymt-vllm"))["args"]))["--max-num-seqs"])
    window = engine_slots(settings)
    assert window * app_replicas == vllm_replicas * seqs
    assert window > settings.interactive_reserve


def test_the_app_replicas_share_redis_and_postgresql():
    docs = _docs()
    container = _container(docs[("Deployment", "hymt-app")])
    env = _env(container)
    redis_port = docs[("Service", "hymt-redis")]["spec"]["ports"][0]["port"]
    url = k8s_expand(env["HYMT_REDIS_URL"], {"HYMT_REDIS_PASSWORD": "pw"})
    assert url == f"redis://:pw@hymt-redis:{redis_port}/0"
    assert env["HYMT_REDIS_PASSWORD"] == {
        "secretKeyRef": {"name": "hymt-chat", "key": "redis-password"}}
    redis_env = _env(_container(docs[("Deployment", "hymt-redis")]))
    assert redis_env["REDIS_PASSWORD"] == env["HYMT_REDIS_PASSWORD"]  # the same secret
    # History and API keys: required (not optional) with several replicas.
    assert env["HYMT_DATABASE_URL"] == {
        "secretKeyRef": {"name": "hymt-chat", "key": "database-url"}}


@pytest.mark.parametrize("name", ["hymt-app", "hymt-router", "hymt-redis", "hymt-vllm"])
def test_every_dollar_reference_names_a_variable_of_the_container(name):
    # Kubernetes passes an undefined $(NAME) on literally: a typo would become the API key.
    container = _container(_workload(name))
    defined: set[str] = set()
    for var in container.get("env", []):  # an env value may use only the variables before it
        for ref in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", var.get("value", "")):
            assert ref in defined, (name, var["name"], ref)
        defined.add(var["name"])
    for arg in container.get("args", []) + container.get("command", []):
        # ($$ is the escape: "$$(mktemp)" reaches the shell as "$(mktemp)")
        for ref in re.findall(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)", arg):
            assert not ref or ref in defined, (name, arg)


def test_the_websocket_only_option_named_in_the_manifest_exists_in_chainlit():
    # Read chainlit's source rather than import it (seconds of imports for one field name).
    spec = importlib.util.find_spec("chainlit")
    assert spec is not None and spec.origin is not None
    source = (Path(spec.origin).parent / "config.py").read_text()
    project = source[source.index("class ProjectSettings"):]
    assert re.search(r"^    transports: ", project[: project.index("\nclass ")], re.M)
    assert 'transports = ["websocket"]' in (K8S / "app.yaml").read_text()
    # ... and the app's own config (copied into the image) sets it, as that comment says.
    config = tomllib.loads((ROOT / ".chainlit" / "config.toml").read_text())
    assert config["project"]["transports"] == ["websocket"]


@pytest.mark.parametrize("profile", ["a100-80g", "h200"])
def test_the_k8s_block_can_be_rendered_for_another_gpu(profile):
    text = deploy.render_k8s_block((K8S / "vllm.yaml").read_text(), profile)
    assert deploy.k8s_profile(text) == profile
    (container,) = [d for d in yaml.safe_load_all(text) if d["kind"] == "StatefulSet"][0][
        "spec"]["template"]["spec"]["containers"]
    assert container["args"] == deploy.k8s_args(profile)
    assert deploy.render_k8s_block(text) == text  # stable: rendering twice changes nothing


# --- vllm-router: discovery of the vLLM pods, its permissions, plan_router's choices ------------

def test_the_router_discovers_exactly_the_vllm_pods():
    argv = _router_argv()
    parsed = parse_router(argv)
    assert parsed["service_discovery"] is True and parsed["worker_urls"] == []
    selector = parsed["selector"]
    assert selector == deploy.VLLM_SELECTOR
    # The vLLM pods carry every label of the selector; no other pod of the stack does (the
    # router would send translations to it).
    assert selector.items() <= _pod_labels("hymt-vllm").items()
    for other in ("hymt-app", "hymt-router", "hymt-redis"):
        assert not selector.items() <= _pod_labels(other).items(), other
    # It adds http://<pod IP>:<this port>: the port vLLM listens on.
    vllm = _container(_workload("hymt-vllm"))
    vllm_flags = dict(parse_flags(vllm["args"]))
    assert parsed["service_discovery_port"] == _port(vllm, "http") == int(vllm_flags["--port"])


def test_the_router_watches_its_own_namespace_only():
    container = _router_container()
    assert _env(container)["POD_NAMESPACE"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    assert parse_router(_router_argv("translate"))["service_discovery_namespace"] == "translate"


def test_the_router_may_list_and_watch_pods_and_nothing_else():
    docs = _docs()
    # A namespaced Role (a ClusterRole would let it read every namespace's pods).
    assert not [key for key in docs if key[0] in ("ClusterRole", "ClusterRoleBinding")]
    role = docs[("Role", "hymt-router")]
    assert role["rules"] == [{"apiGroups": [""], "resources": ["pods"],
                              "verbs": ["list", "watch"]}]
    binding = docs[("RoleBinding", "hymt-router")]
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                  "name": "hymt-router"}
    pod = _router_pod()
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": pod["serviceAccountName"]}]
    assert ("ServiceAccount", pod["serviceAccountName"]) in docs
    # Only the router has an account that may read pods: the others run as the default one.
    for name in ("hymt-app", "hymt-redis", "hymt-vllm"):
        assert "serviceAccountName" not in _workload(name)["spec"]["template"]["spec"], name


def test_the_router_makes_plan_routers_choices(tmp_path):
    # plan_router's command for two replicas on the same address and port, read by the same
    # parser: every field but the worker list and the discovery must be equal. The deployed
    # router's key comes from the mounted Secret's file, through the image's launcher.
    plan = plan_router(["http://10.0.0.1:8000", "http://10.0.0.2:8000"],
                       vllm_python=str(VLLM_PYTHON), host="0.0.0.0",
                       port=deploy.ROUTER_PORT, metrics_port=deploy.ROUTER_METRICS_PORT,
                       api_key="k3y")
    theirs = parse_router(plan.router_args())
    secret = tmp_path / "api-key"
    secret.write_text("k3y\n")  # kubectl create secret --from-file keeps a trailing newline
    ours = parse_launched(_router_argv(), {KEY_FILE_VARIABLE: str(secret)})
    differ = {k for k in ours if ours[k] != theirs[k]}
    assert differ <= DISCOVERY_FIELDS, {k: (ours[k], theirs[k]) for k in differ}
    for name in ("policy", "health_check_interval_secs", "retry_max_retries",
                 "cb_failure_threshold", "api_key"):
        assert ours[name] == theirs[name], name
    assert ours["policy"] == "round_robin" and ours["cb_failure_threshold"] == 1


def test_no_key_is_on_any_command_line():
    """A pod's command and args are in its spec for anyone who may read it, and in `ps` on
    the node: keys go through the environment (vLLM: VLLM_API_KEY) or a mounted file."""
    for (kind, name), doc in _docs().items():
        if kind not in WORKLOADS:
            continue
        for container in doc["spec"]["template"]["spec"]["containers"]:
            line = " ".join([*container.get("command", []), *container.get("args", [])])
            # no flag that takes a secret (vllm-router's --api-key, redis's --requirepass) ...
            assert not re.search(r"--[\w-]*(?:key|pass|password|secret)\b", line), (name, line)
            # ... and no Secret's value expanded into the line by Kubernetes
            env = {e["name"]: e for e in container.get("env", [])}
            for ref in re.findall(r"(?<!\$)\$\((\w+)\)", line):
                assert "secretKeyRef" not in env[ref].get("valueFrom", {}), (name, ref)


def test_the_router_reads_its_key_from_the_apps_secret_as_a_file():
    path, secret, key = _router_key_file()
    app_key = _env(_container(_workload("hymt-app")))["HYMT_API_KEY"]
    assert {"secretKeyRef": {"name": secret, "key": key}} == app_key  # the app's own key
    assert _router_container()["command"] == ["hymt-router"]
    pod = _router_pod()
    # The file is the router's group's (fsGroup) and nobody else's.
    (volume,) = [v for v in pod["volumes"] if "secret" in v]
    assert volume["secret"]["defaultMode"] == 0o440
    assert pod["securityContext"]["fsGroup"] == pod["securityContext"]["runAsGroup"]
    assert path.startswith("/run/secrets/")


def test_the_router_is_ready_only_with_a_replica_and_scraped_on_its_metrics_port():
    container = _router_container()
    argv = _router_argv()
    port = int(argv[argv.index("--port") + 1])
    # vllm-router 0.1.17, measured: /readiness is 503 until a discovered replica is healthy;
    # /health is 503 while any replica is down; /liveness is 200 while the process serves.
    assert container["readinessProbe"]["httpGet"]["path"] == "/readiness"
    assert container["livenessProbe"]["httpGet"]["path"] == "/liveness"
    for probe in ("readinessProbe", "livenessProbe"):
        assert _port(container, container[probe]["httpGet"]["port"]) == port
    metrics = int(argv[argv.index("--prometheus-port") + 1])
    assert argv[argv.index("--prometheus-host") + 1] == "0.0.0.0"
    assert _port(container, "metrics") == metrics
    annotations = _docs()[("Deployment", "hymt-router")]["spec"]["template"]["metadata"][
        "annotations"]
    assert annotations["prometheus.io/port"] == str(metrics)


def test_the_router_image_is_built_with_the_version_the_tests_run():
    # The sidecar locks scripts/setup.sh installs and the router image's own lock.
    locks = [ROOT / "requirements" / "sidecar-cpu.txt", ROOT / "requirements" / "sidecar-gpu.txt",
             ROOT / "deploy" / "router" / "requirements.txt"]
    pinned = {v for lock in locks for v in re.findall(r"^vllm-router==([\d.]+)", lock.read_text(),
                                                       re.M)}
    assert pinned == {deploy.ROUTER_VERSION}
    (installed,) = VLLM_PYTHON.parent.parent.glob("lib/python*/site-packages/vllm_router-*.dist-info")
    assert installed.name == f"vllm_router-{deploy.ROUTER_VERSION}.dist-info"
    assert _router_container()["image"] == deploy.ROUTER_IMAGE
    assert _router_container()["command"] == ["hymt-router"]  # the image's keyed launcher


def test_the_generated_router_block_is_stable_and_found():
    text = (K8S / "router.yaml").read_text()
    assert deploy.render_k8s_router_block(text) == text
    with pytest.raises(SidecarError, match="router"):
        deploy.render_k8s_router_block(text.replace("(router)", "(routr)"))


# --- Redis: the manifest's server and the app's URL, for real -----------------------------------

def test_redis_runs_with_the_manifests_args_and_the_apps_url_shares_limits(tmp_path):
    docs = _docs()
    container = _container(docs[("Deployment", "hymt-redis")])
    assert container["env"] == [{"name": "REDIS_PASSWORD", "valueFrom": {"secretKeyRef": {
        "name": "hymt-chat", "key": "redis-password"}}}]
    port = free_port()
    # The container's command line as the image runs it (its redis-server on PATH here).
    line = [k8s_expand(a, {}) for a in (*container["command"], *container["args"])]
    proc = subprocess.Popen([*line,
                             "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path)],
                            env={"PATH": os.environ["PATH"], "REDIS_PASSWORD": "s3cret"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        app_env = _env(_container(docs[("Deployment", "hymt-app")]))
        url = k8s_expand(app_env["HYMT_REDIS_URL"], {"HYMT_REDIS_PASSWORD": "s3cret"}).replace(
            "hymt-redis:6379", f"127.0.0.1:{port}")
        client = redis.Redis.from_url(url)
        deadline = time.monotonic() + 20  # start-up wait only, not a timing assertion
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                assert proc.poll() is None and time.monotonic() < deadline, "redis did not start"
                time.sleep(0.05)
        # The password is required, and on no command line (`ps` on the node reads it); nothing
        # is written to disk; full memory evicts, not refuses.
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(host="127.0.0.1", port=port).ping()
        assert b"s3cret" not in Path(f"/proc/{proc.pid}/cmdline").read_bytes()
        assert Path(f"/proc/{proc.pid}/cmdline").read_bytes().startswith(b"redis-server")  # exec'd
        assert client.config_get("save") == {"save": ""}
        assert client.config_get("maxmemory-policy") == {"maxmemory-policy": "volatile-ttl"}
        # Two app replicas (two limiters) on that URL share one user's allowance.
        first, second = (RateLimiter("3/minute", storage=url) for _ in range(2))
        first.hit("agent:ana")
        first.hit("agent:ana")
        second.hit("agent:ana")
        with pytest.raises(RateLimitedError):
            second.hit("agent:ana")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_check_notices_a_hand_edit_of_the_routers_args(tmp_path, capsys):
    from hymt_chat.cli.main import main

    (tmp_path / "compose.yaml").write_text((ROOT / "compose.yaml").read_text())
    (tmp_path / "deploy" / "k8s").mkdir(parents=True)
    router = tmp_path / deploy.K8S_ROUTER
    router.write_text((K8S / "router.yaml").read_text())
    assert main(["compose-args", "--write", "--root", str(tmp_path)]) == 0
    assert main(["compose-args", "--check", "--root", str(tmp_path)]) == 0
    text = router.read_text()
    assert '- "--cb-failure-threshold"\n            - "1"' in text
    router.write_text(text.replace('- "--cb-failure-threshold"\n            - "1"',
                                   '- "--cb-failure-threshold"\n            - "5"'))
    capsys.readouterr()
    assert main(["compose-args", "--check", "--root", str(tmp_path)]) == 1
    assert "deploy/k8s/router.yaml" in capsys.readouterr().out
    assert main(["compose-args", "--write", "--root", str(tmp_path)]) == 0
    assert router.read_text() == text


def test_the_app_runs_on_a_read_only_root_with_the_images_writable_folders():
    app = _workload("hymt-app")
    container = _container(app)
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in app["spec"]["template"]["spec"]["volumes"]}
    cache = re.search(r"HYMT_CACHE_DIR=(\S+)", (ROOT / "Dockerfile").read_text())[1]
    # What tests/test_images.py runs the image with under --read-only (and compose.yaml);
    # Chainlit's uploads live under the cache (hymt_chat/service/web.py, own_files).
    assert set(mounts) == {"/tmp", cache}
    assert all("emptyDir" in volumes[name] for name in mounts.values())
