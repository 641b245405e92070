"""Launch settings for vLLM per target machine: one table, the single source of truth.

Sizes assume Hunyuan-MT-7B: BF16 weights 14.17 GiB (measured); 32 layers x 8 KV heads x
head_dim 128 gives 2 x 32 x 8 x 128 x 2 bytes = 128 KiB of KV cache per token in BF16. A
translation request is short (a segment of at most ~1,500 characters plus its translation: about
2k tokens), so seqs x 2k tokens, and one full context, is the KV budget each GPU profile is
sized against; vLLM queues what does not fit (measured: docs/results/gpu.md).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hymt_chat.errors import SidecarError
from hymt_chat.sidecar.vllm_flags import Flags, fit_flags


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    device: str  # "gpu" or "cpu"
    flags: Flags
    why: str
    env: Mapping[str, str] = field(default_factory=dict)

    def flag(self, name: str) -> str | None:
        return dict(self.flags).get(name)


# Priority scheduling: each request's class (hymt_chat.engine.priority) arrives as its `priority`, so a
# live message overtakes document parts waiting inside vLLM (measured: P95 8.3x -> 4.3x of
# alone with raw clients; the app's reserved slot does the rest).
# No --disable-log-stats: it also empties vLLM's /metrics of its vllm:* series, which the app's
# window reads (hymt_chat/engine/window.py) and an operator's Grafana shows. Its cost is in the
# README (Measured: what vLLM's stats cost); its log line comes every 10 s while requests run.
_COMMON: Flags = (("--scheduling-policy", "priority"),)

PROFILES: dict[str, Profile] = {
    "a10": Profile(
        "a10", "gpu",
        (
            ("--dtype", "bfloat16"),
            ("--max-model-len", "4096"),
            ("--gpu-memory-utilization", "0.92"),
            ("--max-num-seqs", "16"),
            ("--max-num-batched-tokens", "2048"),
            ("--max-num-queued-reqs", "48"),
            *_COMMON,
        ),
        "24 GB, sized from measurement with the A10's memory emulated (docs/measured.md, On a "
        "GPU): 16 sequences and 2,048 batched tokens, each of 16 requests at the full "
        "4,096-token context served (vLLM queues what the KV cache cannot hold: no OOM). CUDA "
        "graphs cost 0.9 GiB of KV cache and give about 5x eager mode's rate. Queue cap = 3 x "
        "seqs.",
    ),
    "a100-40g": Profile(
        "a100-40g", "gpu",
        (
            ("--dtype", "bfloat16"),
            ("--max-model-len", "8192"),
            ("--gpu-memory-utilization", "0.90"),
            ("--max-num-seqs", "16"),
            ("--max-num-batched-tokens", "8192"),
            ("--enable-prefix-caching", None),
            ("--max-num-queued-reqs", "48"),
            *_COMMON,
        ),
        "40 GB, measured as the a10 (docs/measured.md, On a GPU): 16 sequences of the full "
        "8,192-token context served at once (20 would fit); 32 concurrent requests go no faster "
        "than 16. The 8k context is the model's practical limit. Prefix "
        "caching reuses the prompt template's tokens; CUDA graphs are affordable here. Queue "
        "cap = 3 x seqs.",
    ),
    "a100-80g": Profile(
        "a100-80g", "gpu",
        (
            ("--dtype", "bfloat16"),
            ("--max-model-len", "8192"),
            ("--gpu-memory-utilization", "0.90"),
            ("--max-num-seqs", "48"),
            ("--max-num-batched-tokens", "8192"),
            ("--enable-prefix-caching", None),
            ("--max-num-queued-reqs", "144"),
            *_COMMON,
        ),
        "80 GB x 0.90 - 15 GiB - ~4 GiB = ~53 GiB KV = ~430k tokens: 48 sequences of 8k fit "
        "(~390k). Decode is memory-bound, so more sequences add throughput almost for free "
        "until the KV cache is full. Queue cap = 3 x seqs.",
    ),
    "h100": Profile(
        "h100", "gpu",
        (
            ("--dtype", "bfloat16"),
            ("--max-model-len", "8192"),
            ("--gpu-memory-utilization", "0.90"),
            ("--max-num-seqs", "64"),
            ("--max-num-batched-tokens", "16384"),
            ("--enable-prefix-caching", None),
            ("--max-num-queued-reqs", "192"),
            *_COMMON,
        ),
        "Same 80 GB as the A100-80G (~430k KV tokens) but ~2x the compute: 64 sequences of the "
        "typical ~2k-token translation use ~130k tokens, and a larger prefill chunk (16k "
        "batched tokens) keeps its tensor cores busy. Queue cap = 3 x seqs.",
    ),
    "h200": Profile(
        "h200", "gpu",
        (
            ("--dtype", "bfloat16"),
            ("--max-model-len", "8192"),
            ("--gpu-memory-utilization", "0.90"),
            ("--max-num-seqs", "128"),
            ("--max-num-batched-tokens", "16384"),
            ("--enable-prefix-caching", None),
            ("--max-num-queued-reqs", "384"),
            *_COMMON,
        ),
        "141 GB x 0.90 - 15 GiB - ~5 GiB = ~107 GiB KV = ~870k tokens: 128 sequences of 6.8k "
        "each fit. Queue cap = 3 x seqs.",
    ),
    "cpu": Profile(
        "cpu", "cpu",
        (
            ("--dtype", "float32"),  # replaced by cpu_dtype() at build time
            ("--max-model-len", "4096"),
            ("--max-num-seqs", "4"),
            ("--max-num-batched-tokens", "4096"),
            ("--enforce-eager", None),
            ("--max-num-queued-reqs", "8"),
            *_COMMON,
        ),
        "vLLM's CPU build. bfloat16 only where the CPU has avx512_bf16 or amx_bf16 (measured "
        "elsewhere: without them bf16 runs at about half the float32 speed). 4 sequences: "
        "measured 13 tokens/s at 4 at once versus 6.2 for one, on 2 cores. Eager mode skips "
        "the torch.compile warm-up: ready in about 40 s instead of 2-4 minutes. "
        "VLLM_CPU_KVCACHE_SPACE=2 (GiB) keeps memory modest.",
        env={"VLLM_CPU_KVCACHE_SPACE": "2"},
    ),
}
ALIASES = {"l4": "a10", "a100": "a100-80g", "h100-80g": "h100"}
ENTRYPOINT = ("-m", "vllm.entrypoints.openai.api_server")


def get_profile(name: str) -> Profile:
    key = ALIASES.get(name.lower(), name.lower())
    if key not in PROFILES:
        valid = ", ".join([*PROFILES, *ALIASES])
        raise SidecarError(f"Unknown profile {name!r}. Valid profiles: {valid}.")
    return PROFILES[key]


def cpu_dtype(cpu_flags: Iterable[str]) -> str:
    """bfloat16 only when the CPU computes it natively; float32 is faster everywhere else."""
    flags = set(cpu_flags)
    return "bfloat16" if flags & {"avx512_bf16", "amx_bf16"} else "float32"


def read_cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> set[str]:
    try:
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


# --- model sizes ------------------------------------------------------------------------------
# The GPU profiles above are sized for a 7B (Hunyuan-MT-7B, HY-MT1.5-7B, Hy-MT2-7B: the same
# dense architecture). Other sizes change them as below; KV figures use the 7B's 128 KiB per
# token, an upper bound for the 1.8B (the successor READMEs publish no architecture numbers).

_SIZE = (
    (re.compile(r"30b[-_]?a3b|a3b", re.I), "30b-a3b"),
    (re.compile(r"1[._]8b", re.I), "1.8b"),
    (re.compile(r"7b", re.I), "7b"),
)


def model_size(model: str) -> str | None:
    """ "1.8b", "7b" or "30b-a3b" from a model's name or path, if it says."""
    name = Path(model.rstrip("/")).name
    return next((size for pattern, size in _SIZE if pattern.search(name)), None)


@dataclass(frozen=True, slots=True)
class SizeFit:
    """How one model size changes the GPU profiles: flag overrides, or a refusal, with why."""

    size: str
    flags: Mapping[str, Flags]  # profile name -> overrides (--no-X removes --X)
    refuse: Mapping[str, str]  # profile name -> the sentence saying why it does not fit
    why: str
    fp8_flags: Mapping[str, Flags] = field(default_factory=dict)  # FP8 checkpoints instead


_MOE_TOO_BIG = ("Hy-MT2-30B-A3B does not fit a {gpu} card: its BF16 weights are about 61 GB "
                "(FP8 about 31 GB, too tight beside the KV cache). Use an 80 GB card "
                "(a100-80g, h100, h200) or a 7B/1.8B model.")

MODEL_SIZES: dict[str, SizeFit] = {
    "1.8b": SizeFit(
        "1.8b",
        {"a10": (("--max-model-len", "8192"), ("--max-num-seqs", "16"),
                 ("--max-num-batched-tokens", "4096"), ("--max-num-queued-reqs", "48"))},
        {},
        "1.8B: about 3.6 GB of BF16 weights. On the a10 profile (24 GB, and the 16 GB cards "
        "auto gives it: T4, A4000) that leaves 10-16 GB of KV cache, 80k+ tokens: 16 sequences "
        "and the full 8k context (with CUDA graphs, as the 7B has them). A T4 has no "
        "bfloat16: add HYMT_VLLM_ARGS='--dtype float16' (doctor names the error). On the CPU "
        "profile it runs as the demo does (about 7 GB of float32 weights in RAM). Bigger GPUs "
        "keep the 7B's numbers, which only over-provision it.",
    ),
    "30b-a3b": SizeFit(
        "30b-a3b",
        {"a100-80g": (("--gpu-memory-utilization", "0.92"), ("--max-num-seqs", "8"),
                      ("--max-num-queued-reqs", "24")),
         "h100": (("--gpu-memory-utilization", "0.92"), ("--max-num-seqs", "8"),
                  ("--max-num-queued-reqs", "24")),
         "h200": (("--max-num-seqs", "64"), ("--max-num-queued-reqs", "192"))},
        {"a10": _MOE_TOO_BIG.format(gpu="24 GB"), "a100-40g": _MOE_TOO_BIG.format(gpu="40 GB"),
         "cpu": "Hy-MT2-30B-A3B is not served on the CPU profile: about 120 GB of float32 "
                "weights. Use Hy-MT2-1.8B on a CPU."},
        "30B-A3B (mixture of experts, 3B active per token): about 61 GB of BF16 weights. On "
        "80 GB, 0.92 x 80 - 61 - ~4 GB leaves ~8 GB of KV (~65k tokens): 8 sequences of 8k. "
        "On the H200, ~61 GB of KV: 64. FP8 (~31 GB) frees ~30 GB more on 80 GB: 32 "
        "sequences. Decoding reads only the active experts, so it runs nearer a 3B's speed "
        "than a 30B's once it fits.",
        fp8_flags={"a100-80g": (("--max-num-seqs", "32"), ("--max-num-queued-reqs", "96")),
                   "h100": (("--max-num-seqs", "32"), ("--max-num-queued-reqs", "96")),
                   "h200": (("--max-num-seqs", "96"), ("--max-num-queued-reqs", "288"))},
    ),
}


def size_flags(profile: Profile, model: str) -> Flags:
    """The overrides *model*'s size needs on *profile*; SidecarError when it cannot run there
    (too big, or a GGUF file, which this launcher does not give vLLM)."""
    if "gguf" in Path(model.rstrip("/")).name.lower():
        raise SidecarError(
            f"{Path(model.rstrip('/')).name} is a GGUF (llama.cpp) file: vLLM's GGUF support is "
            "experimental and Hy-MT2's GGUF needs llama.cpp's own STQ kernel. Serve it with "
            "llama.cpp's llama-server and point HYMT_BASE_URL at it, or use the safetensors "
            "or -FP8 model here.")
    fit = MODEL_SIZES.get(model_size(model) or "")
    if fit is None:
        return ()
    if profile.name in fit.refuse:
        raise SidecarError(fit.refuse[profile.name])
    if is_fp8_checkpoint(model) and profile.name in fit.fp8_flags:
        return merge_flags(fit.flags.get(profile.name, ()), fit.fp8_flags[profile.name])
    return fit.flags.get(profile.name, ())


def is_fp8_checkpoint(model: str) -> bool:
    """FP8 checkpoints (e.g. tencent/Hunyuan-MT-7B-fp8) want an FP8 KV cache too."""
    return "fp8" in Path(model).name.lower()


def parse_flags(text: str | Sequence[str]) -> Flags:
    """`--a 1 --b --c=2` -> ((--a, 1), (--b, None), (--c, 2))."""
    tokens = shlex.split(text) if isinstance(text, str) else list(text)
    out: list[tuple[str, str | None]] = []
    for token in tokens:
        if token.startswith("--"):
            name, eq, value = token.partition("=")
            out.append((name, value if eq else None))
        elif out and out[-1][1] is None:
            out[-1] = (out[-1][0], token)
        else:
            raise SidecarError(f"Cannot read the vLLM flag override near {token!r}.")
    return tuple(out)


def merge_flags(base: Flags, overrides: Flags) -> Flags:
    """Overrides replace flags of the same name (in place) and append new ones.

    `--no-enforce-eager` style negation: an override `--no-X` removes `--X`.
    """
    merged = dict(base)
    for name, value in overrides:
        if name.startswith("--no-") and f"--{name[5:]}" in merged:
            merged.pop(f"--{name[5:]}")
            continue
        merged[name] = value
    return tuple(merged.items())


def flags_to_args(flags: Flags) -> list[str]:
    args: list[str] = []
    for name, value in flags:
        args.append(name)
        if value is not None:
            args.append(value)
    return args


def parallel_flags(tensor_parallel_size: int = 1, data_parallel_size: int = 1) -> Flags:
    """``--tensor-parallel-size N --data-parallel-size M`` for the sizes above 1."""
    out: list[tuple[str, str | None]] = []
    for name, size in (("--tensor-parallel-size", tensor_parallel_size),
                       ("--data-parallel-size", data_parallel_size)):
        if int(size) < 1:
            raise SidecarError(f"{name} must be at least 1, not {size}.")
        if int(size) > 1:
            out.append((name, str(int(size))))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class LaunchSpec:
    """Everything needed to start the server: argv, the extra environment, the folder."""

    argv: list[str]
    env: dict[str, str]
    cwd: str | None = None  # None: the supervisor's own
    dropped: tuple[str, ...] = ()  # one line per flag this vLLM lacks (vllm_flags.fit_flags)
    cpus: tuple[int, ...] = ()  # the cores the process may run on (empty: the supervisor's)

    def shell_line(self) -> str:
        prefix = [f"{k}={shlex.quote(v)}" for k, v in sorted(self.env.items())]
        return " ".join([*prefix, shlex.join(self.argv)])


def build_launch(
    profile: Profile,
    *,
    python: str,
    model: str,
    served_name: str,
    host: str,
    port: int,
    api_key: str | None,
    overrides: str | Sequence[str] = "",
    cpu_flags: Iterable[str] | None = None,
    tensor_parallel_size: int = 1,
    data_parallel_size: int = 1,
    key_in_env: bool = False,
    vllm_version: str | None = None,
    generation_config: Mapping[str, float | int] | None = None,
) -> LaunchSpec:
    """The vLLM command line for a profile, with settings' overrides applied last.

    Several GPUs of one host: ``tensor_parallel_size`` splits the model across GPUs (more KV
    cache per replica), ``data_parallel_size`` runs that many replicas behind vLLM's own API
    server and load balancer; the host needs tensor x data GPUs. Each is passed only above 1.
    *vllm_version* (the installed vLLM's) drops the flags it lacks, or refuses
    (:func:`~hymt_chat.sidecar.vllm_flags.fit_flags`); None keeps every flag.
    The model's size adjusts the profile (:data:`MODEL_SIZES`); *generation_config* (the
    family's sampling) becomes ``--override-generation-config``.
    """
    flags = merge_flags(profile.flags, parallel_flags(tensor_parallel_size, data_parallel_size))
    if profile.device == "cpu":
        dtype = cpu_dtype(read_cpu_flags() if cpu_flags is None else cpu_flags)
        flags = merge_flags(flags, (("--dtype", dtype),))
    flags = merge_flags(flags, size_flags(profile, model))
    if is_fp8_checkpoint(model):
        flags = merge_flags(flags, (("--kv-cache-dtype", "fp8"),))
    if generation_config:
        # vLLM's own defaults become the family's, for any other client of this server.
        flags = merge_flags(flags, (("--override-generation-config",
                                     json.dumps(dict(generation_config), sort_keys=True)),))
    head: Flags = (
        ("--model", model),
        ("--served-model-name", served_name),
        ("--host", host),
        ("--port", str(port)),
    )
    if api_key and not key_in_env:
        head += (("--api-key", api_key),)
    fit = fit_flags(merge_flags(head + flags, parse_flags(overrides)), vllm_version)
    env = dict(profile.env)
    if any(name == "--kv-cache-memory-bytes" for name, _ in fit.flags):
        # vLLM's CPU build applies this older variable after the flags: it would undo the size
        # an operator asked for (HYMT_VLLM_ARGS).
        env.pop("VLLM_CPU_KVCACHE_SPACE", None)
    if api_key and key_in_env:
        env["VLLM_API_KEY"] = api_key  # not in argv: `ps` shows argv to every local user
    return LaunchSpec([python, *ENTRYPOINT, *flags_to_args(fit.flags)], env,
                      dropped=tuple(line for _name, line in fit.dropped))
