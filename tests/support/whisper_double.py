"""A double of vLLM serving a Whisper model: ``GET /health`` and ``POST /v1/audio/transcriptions``,
answering as vLLM 0.32 does (read in the sidecar's environment, .venv-vllm):

- the route, ``create_transcriptions`` in vllm/entrypoints/speech_to_text/transcription/
  api_router.py: a multipart form (``TranscriptionRequest``: file, model, language,
  response_format, temperature…), answered ``JSONResponse(content=response.model_dump())``, or
  an ``ErrorResponse`` (``{"error": {message, type, param, code}}``) with its code as status;
- the answer, ``SpeechToTextBaseServing._create_speech_to_text`` in vllm/entrypoints/
  speech_to_text/base/serving.py: for ``verbose_json`` a ``TranscriptionResponseVerbose``
  (transcription/protocol.py) of ``duration`` (seconds of audio), ``language``, ``text`` (the
  segments' texts joined by " ", or by "" for ja and zh), ``segments`` and ``words`` (null);
  for ``json`` only ``text`` and ``usage`` (``{"type": "duration", "seconds": ceil}``);
- ``language`` is the request's own ``language`` when it was sent, else the one Whisper
  detects: ``_detect_language`` there, which returns
  ``WhisperForConditionalGeneration.parse_language_detection_output`` (vllm/model_executor/
  models/whisper.py): the code inside the ``<|xx|>`` token, an ISO 639-1 code such as "fr",
  never an English name as OpenAI's own API writes it;
- each segment as ``_get_verbose_segments`` writes it: the decoded text (with Whisper's
  leading space), ``no_speech_prob`` null (vLLM does not compute it), ``compression_ratio`` as
  it computes it;
- a model name it does not serve: ``OpenAIServing._check_model`` (vllm/entrypoints/serve/
  engine/serving.py), 404 ``NotFoundError``; the key: ``AuthenticationMiddleware``
  (vllm/entrypoints/serve/middleware/authenticate.py), a Bearer token on /v1 only, else 401
  ``{"error": "Unauthorized"}``.

It decodes WAV only (vLLM decodes any common format) and refuses a language that is not a
lower-case ISO code (vLLM refuses one outside Whisper's list). What it "hears" is scripted:
:class:`Heard`. It runs in a thread (:class:`WhisperDouble`), or as the process that
``python -m vllm.entrypoints.openai.api_server`` starts (:func:`stand_in_vllm`), so the
speech sidecar's own command line runs under the Supervisor without vLLM.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import sys
import threading
import wave
import zlib
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path

from tests.support.json_handler import JsonHandler

__all__ = ["Heard", "Received", "WhisperDouble", "stand_in_vllm"]

ROUTE = "/v1/audio/transcriptions"
_NO_SPACE = {"ja", "zh"}  # SupportsTranscription.no_space_languages


@dataclass
class Heard:
    """What the model hears in any recording: each segment's text as Whisper decodes it, and
    the language it detects (a Whisper code)."""

    segments: tuple[str, ...] = (" Bonjour tout le monde.",)
    language: str = "fr"


@dataclass(frozen=True)
class Received:
    """One transcription request as it arrived."""

    fields: dict[str, str]  # the form's text fields (model, language, response_format…)
    filename: str
    content_type: str
    audio: bytes
    authorization: str | None


def _form(content_type: str, body: bytes) -> tuple[dict[str, str], list[tuple[str, str, bytes]]]:
    """A multipart/form-data body, byte for byte: (text fields, [(filename, type, bytes)])."""
    found = re.search(r'boundary="?([^";]+)"?', content_type)
    if "multipart/form-data" not in content_type or found is None:
        return {}, []
    fields: dict[str, str] = {}
    files: list[tuple[str, str, bytes]] = []
    for part in body.split(b"--" + found.group(1).encode())[1:]:
        if part.startswith(b"--"):
            break  # the closing boundary
        head, _, data = part.removeprefix(b"\r\n").partition(b"\r\n\r\n")
        data = data.removesuffix(b"\r\n")
        headers = head.decode("utf-8", "replace")
        name = re.search(r'name="([^"]*)"', headers)
        filename = re.search(r'filename="([^"]*)"', headers)
        kind = re.search(r"(?im)^content-type:\s*(\S+)", headers)
        if name is None:
            continue
        if filename is not None:
            files.append((filename.group(1), kind.group(1) if kind else "", data))
        else:
            fields[name.group(1)] = data.decode()
    return fields, files


def _error(message: str, kind: str, code: int, param: str | None = None) -> dict[str, object]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


@dataclass
class WhisperDouble:
    """vLLM's Whisper server in a thread (``with`` starts and stops it)."""

    heard: Heard = field(default_factory=Heard)
    served_name: str = "whisper"
    api_key: str | None = None
    host: str = "127.0.0.1"
    port: int = 0
    received: list[Received] = field(default_factory=list)

    def __post_init__(self) -> None:
        double = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                if self.path == "/health":
                    self.send_response(200)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                else:
                    self._json(404, {"detail": "Not Found"})

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                auth = self.headers.get("Authorization")
                if double.api_key and auth != f"Bearer {double.api_key}":
                    self._json(401, {"error": "Unauthorized"})
                elif self.path != ROUTE:
                    self._json(404, {"detail": "Not Found"})
                else:
                    status, answer = double.answer(
                        self.headers.get("Content-Type", ""), body, auth)
                    self._json(status, answer)

        self.server = ThreadingHTTPServer((self.host, self.port), Handler)
        self.port = self.server.server_address[1]
        self.root = f"http://{self.host}:{self.port}"
        self.base_url = f"{self.root}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def answer(self, content_type: str, body: bytes,
               auth: str | None) -> tuple[int, dict[str, object]]:
        fields, files = _form(content_type, body)
        if not files:
            return 422, {"detail": [{"type": "missing", "loc": ["body", "file"],
                                     "msg": "Field required"}]}
        filename, kind, audio = files[0]
        self.received.append(Received(fields, filename, kind, audio, auth))
        model = fields.get("model")
        if model and model != self.served_name:
            return 404, _error(f"The model `{model}` does not exist. Valid aliases: "
                               f"{self.served_name}.", "NotFoundError", 404, "model")
        fmt = fields.get("response_format", "json")
        if fmt not in ("json", "verbose_json"):
            return 400, _error("Currently only support response_format: `text`, `json`, "
                               "`verbose_json` or `diarized_json`", "BadRequestError", 400)
        language = fields.get("language") or self.heard.language
        if not re.fullmatch(r"[a-z]{2,3}", language):
            return 400, _error(f"Unsupported language: {language!r}.", "BadRequestError", 400)
        try:
            with wave.open(io.BytesIO(audio)) as wav:
                duration = wav.getnframes() / wav.getframerate()
        except (wave.Error, EOFError) as err:
            return 400, _error(f"Invalid or unsupported audio file: {err}", "BadRequestError",
                               400)
        texts = list(self.heard.segments)
        text = ("" if language in _NO_SPACE else " ").join(texts)
        if fmt == "json":
            return 200, {"text": text,
                         "usage": {"type": "duration", "seconds": math.ceil(duration)}}
        step = duration / max(len(texts), 1)
        segments = []
        for index, part in enumerate(texts):
            data = part.encode()
            segments.append({
                "id": index, "avg_logprob": -0.21,
                "compression_ratio": len(data) / len(zlib.compress(data)),
                "end": round(step * (index + 1), 2), "no_speech_prob": None, "seek": 0,
                "start": round(step * index, 2),
                "temperature": float(fields.get("temperature", 0.0)), "text": part,
                "tokens": [50365 + i for i in range(len(part.split()))],
            })
        return 200, {"duration": duration, "language": language, "text": text,
                     "segments": segments, "words": None}

    def __enter__(self) -> WhisperDouble:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


# --- as the process `python -m vllm.entrypoints.openai.api_server` starts -----------------------

_SHIM = "from tests.support.whisper_double import main\nmain()\n"


def stand_in_vllm(folder: Path) -> dict[str, str]:
    """A package named ``vllm`` under *folder* whose API server is this double; the
    environment that makes a launch's ``python -m vllm.entrypoints.openai.api_server`` run it.
    Each process it starts leaves ``server-<pid>`` (its argv, as JSON) in *folder*."""
    package = folder / "vllm" / "entrypoints" / "openai"
    package.mkdir(parents=True, exist_ok=True)
    for init in (folder / "vllm", folder / "vllm" / "entrypoints", package):
        (init / "__init__.py").touch()
    (package / "api_server.py").write_text(_SHIM)
    root = Path(__file__).resolve().parents[2]
    return {"PYTHONPATH": os.pathsep.join([str(folder), str(root)]),
            "WHISPER_DOUBLE_DIR": str(folder)}


def main(argv: list[str] | None = None) -> None:
    """Serve as vLLM's API server would with these flags (the rest are read and ignored)."""
    args = list(sys.argv[1:] if argv is None else argv)

    def flag(name: str, default: str) -> str:
        return args[args.index(name) + 1] if name in args else default

    folder = os.environ.get("WHISPER_DOUBLE_DIR")
    if folder:
        Path(folder, f"server-{os.getpid()}").write_text(json.dumps(args))
    double = WhisperDouble(served_name=flag("--served-model-name", flag("--model", "whisper")),
                           api_key=os.environ.get("VLLM_API_KEY") or flag("--api-key", "") or None,
                           host=flag("--host", "127.0.0.1"), port=int(flag("--port", "8000")))
    double.server.serve_forever()
