"""From settings to a checked launch: pick the profile and model, refuse what cannot work."""

from __future__ import annotations

import secrets
import shutil
import socket
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from hymt_chat.errors import SidecarError
from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import Endpoint, connect_host
from hymt_chat.sidecar.profiles import (
    LaunchSpec,
    Profile,
    build_launch,
    get_profile,
    merge_flags,
    parse_flags,
)
from hymt_chat.sidecar.vllm_flags import Flags, installed_vllm

DEFAULT_GPU_MODEL = "tencent/Hunyuan-MT-7B"


def gpu_memory_gib() -> float | None:
    """Total memory of the first NVIDIA GPU, or None without one."""
    if not shutil.which("nvidia-smi"):
        return None
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout
        return float(out.splitlines()[0]) / 1024
    except (subprocess.SubprocessError, ValueError, IndexError, OSError):
        return None


def gpu_count() -> int:
    """NVIDIA GPUs on this host (0 without nvidia-smi)."""
    if not shutil.which("nvidia-smi"):
        return 0
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10, check=True).stdout
    except (subprocess.SubprocessError, OSError):
        return 0
    return len([line for line in out.splitlines() if line.strip()])


def auto_profile(memory_gib: float | None) -> str:
    """The safest profile for the GPU found: the smallest one it can hold."""
    if memory_gib is None:
        return "cpu"
    for limit, name in ((30, "a10"), (48, "a100-40g"), (100, "h100"), (1e9, "h200")):
        if memory_gib < limit:
            return name
    return "a10"


def resolve_profile(name: str, gpu_memory: Callable[[], float | None] = gpu_memory_gib) -> Profile:
    """The profile *name* names; "auto" picks by the GPU memory *gpu_memory* reads."""
    return get_profile(auto_profile(gpu_memory()) if name == "auto" else name)


def resolve_model(settings: Settings, profile: Profile, model: str | None) -> tuple[str, bool]:
    """(model, is_demo): explicit model, else the demo on CPU, else Hunyuan-MT-7B."""
    chosen = model or settings.model_path
    if chosen:
        return chosen, False
    if profile.device == "cpu":
        return str(settings.demo_model_dir), True
    return DEFAULT_GPU_MODEL, False


@dataclass(frozen=True, slots=True)
class Choice:
    """The profile and model to serve: the one decision the launcher and the doctor share."""

    requested: str  # the profile asked for ("auto" included)
    profile: Profile
    model: str  # a folder or a hub name, as configured
    is_demo: bool
    vllm_args: str = ""  # HYMT_VLLM_ARGS

    @property
    def flags(self) -> Flags:
        """The profile's flags with HYMT_VLLM_ARGS applied (what the doctor and the window
        sizing read; the launch adds model, port and the host-specific ones)."""
        return merge_flags(self.profile.flags, parse_flags(self.vllm_args))


def choose(
    settings: Settings,
    *,
    profile: str | None = None,
    model: str | None = None,
    gpu_memory: Callable[[], float | None] = gpu_memory_gib,
) -> Choice:
    """Profile (argument, else HYMT_PROFILE; "auto" by *gpu_memory*) and model (argument, else
    HYMT_MODEL_PATH, else the demo on CPU, else Hunyuan-MT-7B). No checks: see plan_launch."""
    asked = profile or settings.profile
    prof = resolve_profile(asked, gpu_memory)
    chosen, is_demo = resolve_model(settings, prof, model)
    return Choice(asked, prof, chosen, is_demo, settings.vllm_args)


def looks_local(model: str) -> bool:
    return model.startswith(("/", ".", "~")) or Path(model).exists()


def port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def system_binary(name: str, missing: str, *, check: bool = True) -> str:
    """The path of the system's *name* (also in the sbin folders, where Debian puts daemons,
    off a normal user's PATH); SidecarError *missing* when absent and *check*, else the bare
    name (a dry run prints the command anyway)."""
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/local/sbin:/sbin")
    if found is None and check:
        raise SidecarError(missing)
    return found or name


def require_free(host: str, port: int, fix: str, *, name: str = "") -> None:
    """Refuse, before anything starts, a *port* on *host* that something else holds: the
    one check of every launch plan (model, replicas, router, apps, proxy, Redis)."""
    if not port_free(host, port):
        raise SidecarError(f"Port {port}{name} is already in use: {fix}.")


def server_key(settings: Settings) -> str:
    """The API key of the server(s) we launch: ``HYMT_API_KEY``, else a fresh random one (the
    app reads it from the state file; nobody else on the host can call the server)."""
    return settings.api_key if settings.api_key not in ("", "EMPTY") else secrets.token_urlsafe(24)


@dataclass(frozen=True, slots=True)
class Launch:
    profile: Profile
    spec: LaunchSpec
    endpoint: Endpoint
    model: str
    is_demo: bool
    log_path: Path


def plan_launch(
    settings: Settings,
    *,
    profile: str | None = None,
    model: str | None = None,
    port: int | None = None,
    host: str | None = None,
    check: bool = True,
    generation_config: Mapping[str, float | int] | None = None,
) -> Launch:
    """Everything about the launch, checked before anything starts (check=False: dry run)."""
    choice = choose(settings, profile=profile, model=model)
    prof, chosen, is_demo = choice.profile, choice.model, choice.is_demo
    host = host or settings.host
    port = port or settings.port
    api_key = server_key(settings)
    if check:
        python = settings.vllm_python
        if not Path(python).exists():
            raise SidecarError(
                f"The vLLM environment is missing ({python} does not exist): run `make setup` "
                "or set HYMT_VLLM_PYTHON."
            )
        model_path = Path(chosen).expanduser()
        if is_demo and not (model_path / "config.json").exists():
            raise SidecarError(
                f"The demo model is not prepared in {model_path}: run `make setup`."
            )
        if looks_local(chosen) and not model_path.exists():
            raise SidecarError(f"The model folder {model_path} does not exist.")
        require_free(host, port, "stop what uses it or pick --port", name=f" on {host}")
    # The flags this vLLM knows (a dry run too, where it is installed: it prints what would run).
    version = installed_vllm(settings.vllm_python) if Path(settings.vllm_python).exists() else None
    spec = build_launch(
        prof,
        python=str(settings.vllm_python),
        model=str(Path(chosen).expanduser()) if looks_local(chosen) else chosen,
        served_name=settings.served_name,
        host=host,
        port=port,
        api_key=api_key,
        overrides=settings.vllm_args,
        tensor_parallel_size=settings.tensor_parallel_size,
        data_parallel_size=settings.data_parallel_size,
        key_in_env=True,
        vllm_version=version,
        generation_config=generation_config,
    )
    endpoint = Endpoint(f"http://{connect_host(host)}:{port}/v1", api_key, settings.served_name)
    log_path = settings.cache_dir / "logs" / f"vllm-{port}.log"
    return Launch(prof, spec, endpoint, chosen, is_demo, log_path)
