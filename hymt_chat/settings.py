"""Settings read from ``HYMT_*`` environment variables and a ``.env`` file: what an app's
Runtime (``hymt_chat.modes.runtime``) is built from."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

ModelFamily = Literal["auto", "hunyuan-mt", "hy-mt1.5", "hy-mt2"]
"""HYMT_MODEL_FAMILY's values (the families are hymt_chat/engine/families.py's table)."""

PROJECT_DIR = Path(__file__).resolve().parent.parent
MASKABLE = ("amount", "date", "time", "percent", "number")  # hymt_chat.text.masking.ALL_KINDS


def _default_cache_dir() -> Path:
    return Path.home() / ".cache" / "hymt-chat"


class Settings(BaseSettings):
    """Everything an operator may tune; every field is documented in ``.env.example``."""

    model_config = SettingsConfigDict(
        env_prefix="HYMT_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    # --- the OpenAI-compatible model server -------------------------------------------------
    base_url: str | None = Field(
        default=None,
        description="Base URL of an OpenAI-compatible server (…/v1). Unset: launch the sidecar.",
    )
    api_key: str = Field(default="EMPTY", description="Bearer key for the model server.")
    model: str | None = Field(
        default=None, description="Served model name; unset: the first one /v1/models lists."
    )
    request_timeout: float | None = Field(
        default=None, gt=0,
        description="Fixed seconds per model call; unset: sized per call from its max_tokens at "
        "the measured decode rate (floor timeout_floor), widened on each retry.",
    )
    timeout_floor: float = Field(default=30.0, gt=0, description="Shortest sized call timeout.")
    decode_rate: float = Field(
        default=4.0, gt=0, description="Tokens/s of one request assumed until one is measured."
    )
    engine_priority: bool = Field(
        default=True, description="Send each request's class as vLLM's `priority` field."
    )
    bench_tokens: int | None = Field(
        default=None, ge=1,
        description="Benchmarks only: every model call decodes exactly this many tokens "
        "(max_tokens and vLLM's ignore_eos), so that the app's path and raw vLLM do the same "
        "work (benchmarks/gpu.py). Unset in production.",
    )

    # --- translation -----------------------------------------------------------------------
    default_target: str = Field(default="en", description="Target language of a new chat.")
    max_input_chars: int = Field(
        default=200_000, gt=0, description="Longer input is refused whole, never truncated."
    )
    max_model_len: int = Field(
        default=4096, gt=256, description="Model context (tokens); sizes segments and max_tokens."
    )
    segment_chars: int | None = Field(
        default=None, gt=16, description="Segment size override; default derives from context."
    )
    segment_concurrency: int = Field(
        default=4, ge=1, description="Segments of one message translated at the same time."
    )
    model_family: ModelFamily = Field(
        default="auto",
        description="Prompt and sampling family: auto (from the served model's name, else "
        "model_path), hunyuan-mt, hy-mt1.5 or hy-mt2 (hymt_chat/engine/families.py).",
    )
    # Unset: the family's recommended value for the served model's size (families.py).
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    repetition_penalty: float | None = None

    # --- retry and downgrade (the policy) --------------------------------------------------
    retries: bool = Field(default=True, description="Off: a 503 fails at once (for tests).")
    deadline: float = Field(default=180.0, gt=0, description="Seconds one message may wait.")
    window_max: int | None = Field(
        default=None, ge=1,
        description="Most in-flight requests per process, fixed; unset: what the engine runs "
        "at once, so that nothing waits inside vLLM (the launch flags' --max-num-seqs, else 2 "
        "for a server by URL), then what its /metrics shows (hymt_chat/engine/window.py).",
    )
    window_lead: int | None = Field(
        default=None, ge=0,
        description="Live messages sent beyond the window, to wait in vLLM's priority queue so "
        "a GPU batch that ends starts the next ones at once; unset: a quarter of the window "
        "(none under 16 slots, none with HYMT_WINDOW_MAX).",
    )
    interactive_reserve: int = Field(
        default=1, ge=0, description="Slots documents and other background work may never take."
    )
    priorities: str = Field(
        default="interactive=0,best=10,check=20,api=25,bulk=30",
        description="Rank per request class (lower first): our queue order and vLLM's priority.",
    )
    bulk_segments: int = Field(
        default=4, ge=1, description="A message of more parts than this is a long paste: bulk."
    )
    window_min: int = Field(default=1, ge=1)
    rate_limit: str = Field(
        default="20/minute", description="Per-user job limit (limits syntax); empty: none."
    )
    rate_limit_chars: str = Field(
        default="400000/hour", description="Per-user characters (messages, files, buttons)."
    )
    rate_limit_calls: str = Field(
        default="4000/hour", description="Per-user model calls (a file's values and parts, a "
        "text's lines, an API list's texts): the largest input, 200,000 characters of "
        "50-character values, fits one hour; empty: none."
    )
    redis_url: str = Field(
        default="", description="Redis for state shared by app replicas (rate limits); "
        "empty: each process keeps its own."
    )
    trusted_proxies: str = Field(
        default="", description="Proxy addresses whose X-Forwarded-For names the client."
    )
    allowed_origins: str = Field(
        default="", description="Other origins (https://host:port) that may call the signed-in "
        "app with its cookies."
    )
    api_origins: str = Field(
        default="", description="Origins whose pages may call /deepl from a browser (no "
        "cookies; never the signed-in app), and /libretranslate without a key where 127.0.0.1 "
        "may (any origin may with one)."
    )
    allowed_hosts: str = Field(
        default="", description="Host names the app answers to ('*': any); unset: the loopback "
        "names when it listens on loopback, else any."
    )
    session_hours: float = Field(
        default=8.0, gt=0, description="Hours a sign-in lasts (Chainlit's token lifetime)."
    )

    # --- Best quality (Hunyuan-MT-Chimera fuses several candidates) ------------------------
    fusion_base_url: str | None = Field(
        default=None,
        description="Chimera server (…/v1); unset: the translation endpoint (same server).",
    )
    fusion_api_key: str | None = Field(
        default=None, description="Bearer key for the Chimera server; unset: HYMT_API_KEY."
    )
    fusion_model: str | None = Field(
        default=None, description="Served name of Chimera; set (or the URL): Best quality."
    )
    chimera_candidates: int = Field(
        default=4, ge=2, le=16, description="Candidates asked for in one request (n) per segment."
    )
    chimera_temperature: float = Field(default=0.9, ge=0, description="Sampling of candidates.")
    chimera_top_p: float = Field(default=0.9, gt=0, le=1, description="Sampling of candidates.")
    chimera_wait: float = Field(
        default=20.0, gt=0, description="Seconds Best quality may wait for room before downgrading."
    )

    # --- kiosk, sign-in and history ----------------------------------------------------------
    reconnect_grace: float = Field(
        default=10.0, ge=0, description="Seconds a tab whose connection dropped keeps its "
        "session and the work under way (a reconnect within them loses nothing); then a closed "
        "tab's queued and running translations are cancelled and its texts let go."
    )
    kiosk_idle_seconds: float = Field(
        default=120.0, ge=10, description="Idle seconds after which a kiosk starts afresh."
    )
    room_hours: float = Field(
        default=12.0, gt=0, description="Hours a room's join link stays valid (/room)."
    )
    desk_queue: int = Field(
        default=20, ge=1, description="Support desk: at most this many conversations wait for "
        "an agent; past it a visitor reads \"all agents are busy\" in their language."
    )
    desk_per_visitor: int = Field(
        default=2, ge=1, description="Support desk: open conversations one visitor (address) "
        "may have at once."
    )
    desk_starts: str = Field(
        default="5/hour", description="Support desk: conversations one visitor may start "
        "(limits syntax; the shared limiter's storage); empty: no limit."
    )
    widget_origins: str = Field(
        default="", description="Sites (https://shop.example, comma-separated) whose pages may "
        "embed the desk's widget (frame-ancestors of the visitor's pages); empty: none."
    )
    affinity_cookie: str = Field(
        default="hymt-route", description="The sticky proxy's cookie (deploy/k8s: ingress-nginx's "
        "session-cookie-name): room links carry the agent's, so a guest reaches the agent's "
        "replica; empty: one replica."
    )
    public_url: str = Field(
        default="", description="The page's address as phones reach it (https://chat.example), "
        "for room links; unset: the address the agent's browser used."
    )
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy async URL for history; unset: sqlite under cache_dir. A "
        "PostgreSQL URL also holds the API keys (every replica sees the same keys and quotas).",
    )
    agents: str = Field(
        default="", description="Support agents: 'name:hash,name:hash' (hymt-chat hash-password)."
    )
    metrics_token: str | None = Field(
        default=None, description="Bearer token for /metrics; unset: open without sign-in only."
    )
    # --- checks on every answer (numbers, amounts, dates, leftovers) ----------------------
    checks: bool = Field(
        default=True, description="Check every answer's values, language, lines and glosses."
    )
    check_repair: bool = Field(
        default=True, description="Ask once more (another seed) when an answer fails a check."
    )
    mask_values: bool = Field(
        default=True,
        description="Mask values (HYMT_MASK_KINDS) before translation and restore them in "
        "the target's format (measured: benchmarks/fidelity.py).",
    )
    mask_kinds: str = Field(
        default="amount",
        description="What masking covers, of amount, date, time, percent, number; on the demo "
        "model masking amounts helped, masking dates did not, masking times, percentages and "
        "numbers hurt (it dropped their placeholders; benchmarks/fidelity.py).",
    )
    # --- the translation memory (hymt_chat/engine/recall.py, hymt_chat/store/memory.py) -----
    memory: bool = Field(
        default=True, description="Answer a segment translated before (same model, prompt, "
        "pair, settings) from the memory, without a model call; needs HYMT_CHECKS (a hit "
        "passes the same checks as a fresh answer)."
    )
    memory_path: Path | None = Field(
        default=None, description="SQLite file of the memory; unset: memory.db in the cache "
        "folder. Not used when HYMT_DATABASE_URL is PostgreSQL (the memory is there)."
    )
    memory_max_entries: int = Field(
        default=200_000, ge=100, description="Most entries kept; past it the least recently "
        "used model answers go (agents' corrections and imports are never evicted)."
    )
    memory_kiosk: Literal["read", "write", "off"] = Field(
        default="read", description="The kiosk and its counter: read the memory but store "
        "nothing visitors typed (read), store like other pages (write), or off."
    )
    memory_pii: Literal["mask", "skip", "keep"] = Field(
        default="mask", description="Personal data (e-mail addresses, phone, card and IBAN "
        "numbers, links, order and long numbers) in what the memory keeps: as placeholders "
        "([email-1]) put back from the text looked up (mask), segments holding any not kept "
        "(skip), or in clear (keep) (hymt_chat/text/personal.py)."
    )
    log_pii: Literal["mask", "keep"] = Field(
        default="mask", description="Personal data in the app's log lines (e-mail addresses, "
        "phone, card, IBAN and order numbers; links and bare numbers stay): as placeholders "
        "(mask) or in clear (keep)."
    )
    # --- retention (hymt_chat/service/retention.py): days kept; unset: the general setting --
    retention_days: int | None = Field(
        default=None, ge=0, description="Days anything about a conversation is kept (history, "
        "conversations, uploads, the memory's model answers, logs); unset or 0: kept until "
        "removed by hand."
    )
    retention_history_days: int | None = Field(
        default=None, ge=0, description="Agents' history threads (0: kept)."
    )
    retention_conversations_days: int | None = Field(
        default=None, ge=0, description="Rooms', desk conversations and their transcripts (0: "
        "kept)."
    )
    retention_uploads_days: int | None = Field(
        default=None, ge=0, description="Uploaded files and translated documents (0: kept)."
    )
    retention_memory_days: int | None = Field(
        default=None, ge=0, description="The memory's model answers (0: kept)."
    )
    retention_logs_days: int | None = Field(
        default=None, ge=0, description="Log lines (0: kept)."
    )
    retention_team_days: int | None = Field(
        default=None, ge=0, description="The memory's corrections and imports: their own "
        "setting, never HYMT_RETENTION_DAYS (unset or 0: kept)."
    )
    retention_every: float = Field(
        default=3600.0, gt=0, description="Seconds between two retention sweeps in the app."
    )
    secure_cookies: bool = Field(
        default=False, description="Mark cookies Secure even when TLS ends at a proxy in front."
    )
    allow_framing: bool = Field(
        default=False, description="Let other pages frame the app (a kiosk shell); off: DENY."
    )

    # --- support-agent mode --------------------------------------------------------------
    glossary_template: bool = Field(
        default=False,
        description="Send glossary terms with the (unofficial) terminology template; off: "
        "terms are enforced by masking, which kept them 16/24 times vs 6/24 on the demo model.",
    )
    agent_back_translate: bool = Field(default=True, description="Initial 'check before sending'.")
    agent_context: bool = Field(default=False, description="Initial 'send recent turns'.")
    agent_context_turns: int = Field(default=4, ge=1, description="Turns sent as context.")
    agent_context_chars: int = Field(default=800, ge=50, description="Context size cap.")
    agent_drift_threshold: float = Field(
        default=0.15, ge=0, le=1,
        description="Back-translation similarity below which a long reply is flagged as reading "
        "like another text (0: off). The meaning checks flag the rest.",
    )

    # --- the LibreTranslate- and DeepL-compatible HTTP APIs --------------------------------
    api_open_local: bool = Field(
        default=False,
        description="Open the API without a key to 127.0.0.1 only (off: keys only; no key: off).",
    )
    api_max_body: int = Field(
        default=131_072, ge=1024,
        description="Largest translate request body in bytes (DeepL documents 128 KiB).",
    )
    api_per_minute: int = Field(
        default=60, ge=1, description="Requests per minute of a key created without a limit."
    )
    api_keys_path: Path | None = Field(
        default=None, description="SQLite file of API keys, usage and glossaries; unset: cache. "
        "Not used when HYMT_DATABASE_URL is PostgreSQL (the keys are there)."
    )

    # --- voice (hymt_chat/speech): speech in with Whisper, speech out with Piper or espeak-ng -
    speech: bool = Field(default=True, description="Let people speak and hear answers.")
    speech_model: str = Field(
        default="base",
        description="faster-whisper model: a folder, or a name that `hymt-chat voice fetch` put "
        "under cache_dir (base: multilingual, 74M parameters).",
    )
    speech_url: str | None = Field(
        default=None,
        description="A vLLM server of a Whisper model (…/v1); set: speech is recognised there "
        "instead of in-process.",
    )
    speech_served_model: str | None = Field(
        default=None, description="The Whisper model's name on speech_url."
    )
    speech_api_key: str = Field(default="EMPTY", description="Bearer key for speech_url.")
    speech_threads: int = Field(
        default=0, ge=0, description="CPU threads of the in-process recogniser; 0: all cores."
    )
    speech_pause_seconds: float = Field(
        default=0.8, gt=0, description="Silence that ends an utterance on a live microphone."
    )
    speech_utterance_seconds: float = Field(
        default=30.0, gt=0, description="A live utterance is cut and transcribed at this length."
    )
    speech_max_seconds: float = Field(
        default=120.0, gt=0, description="Longest recording transcribed whole."
    )
    speech_max_mb: float = Field(default=25.0, gt=0, description="Largest recording accepted.")
    piper_voices: Path | None = Field(
        default=None,
        description="Folder of Piper voices (xx_YY-name-quality.onnx with its .onnx.json); a "
        "language with none there is read by espeak-ng.",
    )

    # --- the vLLM sidecar ------------------------------------------------------------------
    profile: str = Field(default="auto", description="Launch profile: auto, cpu, a10, a100-40g…")
    model_path: str | None = Field(
        default=None, description="Model folder or hub name; unset on CPU: the demo model."
    )
    served_name: str = Field(default="hymt", description="Name the sidecar serves the model as.")
    host: str = "127.0.0.1"
    port: int = Field(default=8021, ge=1, le=65535)
    vllm_python: Path = Field(
        default=PROJECT_DIR / ".venv-vllm" / "bin" / "python",
        description="Python of the sidecar's own virtual environment.",
    )
    vllm_args: str = Field(
        default="", description="Extra or overriding vLLM flags, shell syntax: '--max-num-seqs 4'."
    )
    tensor_parallel_size: int = Field(
        default=1, ge=1, description="GPUs one model replica is split across (vLLM -tp)."
    )
    data_parallel_size: int = Field(
        default=1, ge=1, description="Model replicas behind the one vLLM server (vLLM -dp)."
    )
    replicas: int = Field(
        default=1, ge=1, description="vLLM servers behind vllm-router (serve-model/up "
        "--replicas; for an external router: how many replicas it spreads over)."
    )
    router_policy: str = Field(
        default="round_robin", description="vllm-router's --policy over the replicas "
        "(round_robin: see hymt_chat/sidecar/router.py for why not power_of_two)."
    )
    app_replicas: int = Field(
        default=1, ge=1, description="App processes sharing the engine (up --app-replicas; in "
        "Kubernetes the Deployment's replicas): each takes its share of the engine's slots."
    )
    cache_dir: Path = Field(default_factory=_default_cache_dir)
    log_file: Path | None = Field(
        default=None, description="The app's JSON log (rotated); unset: logs/app.log in the "
        "cache folder. One per process: up --app-replicas gives each replica its own."
    )
    startup_timeout: float = Field(default=900.0, gt=0, description="Seconds to wait for /health.")

    @field_validator("mask_kinds")
    @classmethod
    def _known_kinds(cls, value: str) -> str:
        unknown = [k.strip() for k in value.split(",") if k.strip() and k.strip() not in MASKABLE]
        if unknown:
            raise ValueError(f"HYMT_MASK_KINDS: unknown {', '.join(unknown)}; use any of "
                             f"{', '.join(MASKABLE)}.")
        return value

    @property
    def masked_kinds(self) -> frozenset[str]:
        """HYMT_MASK_KINDS as a set (unknown names are refused when the settings load)."""
        return frozenset(k.strip() for k in self.mask_kinds.split(",") if k.strip())

    @property
    def demo_model_dir(self) -> Path:
        return self.cache_dir / "models" / "qwen2.5-coder-0.5b-instruct"

    @property
    def api_keys_file(self) -> Path:
        """``api_keys_path``, or ``api-keys.db`` in the cache folder."""
        return self.api_keys_path or self.cache_dir / "api-keys.db"

    @property
    def memory_file(self) -> Path:
        """``memory_path``, or ``memory.db`` in the cache folder."""
        return self.memory_path or self.cache_dir / "memory.db"

    @property
    def history_url(self) -> str:
        """``database_url``, or SQLite in the cache folder (a file, created on first use)."""
        return self.database_url or f"sqlite+aiosqlite:///{self.cache_dir / 'history.db'}"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Process-wide settings, read once."""
    return Settings()
