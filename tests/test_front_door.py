"""The package's front door: the public surface, importable from ``hymt_chat`` itself."""

from __future__ import annotations

import subprocess
import sys

import hymt_chat


def test_the_public_surface_is_importable_from_the_package():
    from hymt_chat import errors
    from hymt_chat.engine import translator

    assert hymt_chat.Translator is translator.Translator
    assert hymt_chat.InputError is errors.InputError
    assert issubclass(hymt_chat.UnknownLanguageError, hymt_chat.InputError)
    assert issubclass(hymt_chat.IncompleteTranslationError, hymt_chat.ModelError)
    assert len(hymt_chat.LANGUAGES) == 38
    assert hymt_chat.get_language("法语").code == "fr"
    for name in hymt_chat.__all__:
        assert getattr(hymt_chat, name) is not None, name


def test_importing_the_package_loads_nothing_heavy():
    probe = "import sys, hymt_chat; print(sorted(m for m in ('openai', 'httpx', 'pydantic') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_refusal_is_an_input_error():
    from hymt_chat.errors import CommandError
    from hymt_chat.modes.agent.glossary import GlossaryError
    from hymt_chat.modes.documents import DocumentError

    for kind in (CommandError, DocumentError, GlossaryError, hymt_chat.EmptyTextError,
                 hymt_chat.NotTextError, hymt_chat.InputTooLongError):
        assert issubclass(kind, hymt_chat.InputError), kind
    assert not issubclass(hymt_chat.ModelError, hymt_chat.InputError)
