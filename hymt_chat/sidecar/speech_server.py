"""The speech sidecar: a vLLM server of a Whisper model (its ``/v1/audio/transcriptions``) on
the GPU that serves the translation model, started by the same launcher and supervisor.

Sizes assume whisper-large-v3-turbo: 809M parameters, about 1.6 GB of FP16 weights; 4 decoder
layers of width 1280, so a sequence's KV cache is its 448 decoder positions plus the 1,500
encoder positions its cross-attention reads: about 40 MB.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hymt_chat.errors import SidecarError
from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import Endpoint, connect_host
from hymt_chat.sidecar.launch import looks_local, require_free
from hymt_chat.sidecar.profiles import LaunchSpec, Profile, build_launch
from hymt_chat.sidecar.vllm_flags import installed_vllm

__all__ = ["DEFAULT_SPEECH_MODEL", "DEFAULT_SPEECH_PORT", "SPEECH_PROFILE", "SPEECH_SERVED_NAME",
           "SpeechLaunch", "plan_speech", "speech_launch"]

DEFAULT_SPEECH_MODEL = "openai/whisper-large-v3-turbo"
DEFAULT_SPEECH_PORT = 8011
# The name the app asks for when HYMT_SPEECH_SERVED_MODEL is unset (speech/service.py).
SPEECH_SERVED_NAME = "whisper"

SPEECH_PROFILE = Profile(
    "whisper", "gpu",
    (
        ("--max-model-len", "448"),
        ("--gpu-memory-utilization", "0.08"),
        ("--max-num-seqs", "16"),
    ),
    "Beside a translation profile at 0.90 (a100-80g, h100, h200) on one card. "
    "--max-model-len 448: Whisper's decoder has 448 positions (max_target_positions, what vLLM "
    "derives anyway and refuses to exceed). --gpu-memory-utilization 0.08, not 0.10: vLLM "
    "refuses to start when the card's free memory is below utilization x total "
    "(request_memory, vllm/v1/worker/utils.py), and 0.90 + 0.10 leaves nothing for the second "
    "process's own CUDA context (about 0.5 GiB), whichever starts first. 0.08 is 6.4 GB of an "
    "80 GB card: the weights, the encoder's activations and a KV cache for more sequences than "
    "it runs; a 24 GB card at the a10's 0.92 leaves less than the weights. --max-num-seqs 16: "
    "an utterance is one request, sent when a speaker pauses, so 16 at once covers a busy "
    "room; vLLM's default (1,024 on an H100) would capture CUDA graphs for batches up to 512, "
    "memory and start-up time this share does not have.",
)


def speech_launch(
    *,
    python: str,
    model: str = DEFAULT_SPEECH_MODEL,
    host: str = "127.0.0.1",
    port: int = DEFAULT_SPEECH_PORT,
    api_key: str | None = None,
    served_name: str = SPEECH_SERVED_NAME,
    vllm_version: str | None = None,
) -> LaunchSpec:
    """The Whisper server's command line: the translation model's launcher with this profile,
    so a flag this vLLM lacks is dropped or refused the same way. The key, when there is one,
    goes in the environment, out of the argv that `ps` shows every local user."""
    return build_launch(SPEECH_PROFILE, python=python, model=model, served_name=served_name,
                        host=host, port=port, api_key=api_key, key_in_env=True,
                        vllm_version=vllm_version)


@dataclass(frozen=True, slots=True)
class SpeechLaunch:
    spec: LaunchSpec
    model: str  # as given: a folder or a hub name
    endpoint: Endpoint  # what the app's HYMT_SPEECH_URL and HYMT_SPEECH_SERVED_MODEL name
    log_path: Path


def plan_speech(
    settings: Settings,
    *,
    model: str | None = None,
    host: str | None = None,
    port: int | None = None,
    check: bool = True,
) -> SpeechLaunch:
    """The speech server's launch, checked before anything starts (check=False: a dry run).

    Its key is HYMT_SPEECH_API_KEY, the one the app sends; unset, the server takes any caller
    that can reach it (bound to the loopback by default)."""
    host = host or settings.host
    port = port or DEFAULT_SPEECH_PORT
    python = str(settings.vllm_python)
    chosen = model or DEFAULT_SPEECH_MODEL
    if check:
        if not Path(python).exists():
            raise SidecarError(
                f"The vLLM environment is missing ({python} does not exist): run `make setup` "
                "or set HYMT_VLLM_PYTHON.")
        if looks_local(chosen) and not Path(chosen).expanduser().exists():
            raise SidecarError(f"The model folder {Path(chosen).expanduser()} does not exist.")
        require_free(host, port, "stop what uses it or pick --port", name=f" on {host}")
    key = settings.speech_api_key if settings.speech_api_key not in ("", "EMPTY") else None
    version = installed_vllm(python) if Path(python).exists() else None
    spec = speech_launch(
        python=python, host=host, port=port, api_key=key, vllm_version=version,
        model=str(Path(chosen).expanduser()) if looks_local(chosen) else chosen)
    endpoint = Endpoint(f"http://{connect_host(host)}:{port}/v1", key or "EMPTY",
                        SPEECH_SERVED_NAME)
    return SpeechLaunch(spec, chosen, endpoint, settings.cache_dir / "logs" / f"whisper-{port}.log")
