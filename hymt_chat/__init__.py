"""hymt-chat: live translation between 38 languages with Tencent's Hunyuan-MT models.

The front door: tools import the public surface from here. Names load on first use, so that
``import hymt_chat`` stays cheap (the sidecar's own environment imports parts of the package
without the app's dependencies).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_PUBLIC: dict[str, str] = {
    "Translator": "engine.translator",
    "Translation": "engine.translator",
    "PartialTranslation": "engine.translator",
    "plan_translation": "engine.translator",
    "Settings": "settings",
    "get_settings": "settings",
    "LANGUAGES": "lang.languages",
    "get_language": "lang.languages",
    "build_prompt": "engine.prompts",
    "build_chimera_prompt": "engine.prompts",
    "get_family": "engine.families",
    "Family": "engine.families",
    "UnsupportedPromptError": "errors",
    "clean_text": "text.cleanup",
    "split_segments": "text.segments",
    "detect_language": "lang.detect",
    "Finding": "text.checks",
    "check_translation": "text.checks",
    "HymtError": "errors",
    "InputError": "errors",
    "UnknownLanguageError": "errors",
    "EmptyTextError": "errors",
    "InputTooLongError": "errors",
    "NotTextError": "errors",
    "ModelError": "errors",
    "ModelBusyError": "errors",
    "ModelUnavailableError": "errors",
    "ModelTimeoutError": "errors",
    "IncompleteTranslationError": "errors",
    "RateLimitedError": "errors",
}
__all__ = ["__version__", *_PUBLIC]  # noqa: PLE0604 - the dict's keys, all strings


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'hymt_chat' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value  # next time, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
