"""The `hymt-chat` command speaks the terminal's language: the first of $LANGUAGE, $LC_ALL,
$LC_MESSAGES and $LANG that names one of the 38, for its errors, warnings and notes; what
scripts read (a translation, a code, the table of languages, a key) is the same in any language,
and in English every sentence is what it was (tests/test_cli.py reads them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hymt_chat.cli import main as cli
from hymt_chat.cli.words import terminal_language
from hymt_chat.engine.client import ModelClients
from hymt_chat.modes.page_text import PageText
from hymt_chat.words.said import said

_LOCALE = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


@pytest.mark.parametrize(("environ", "code"), [
    ({"LANG": "fr_FR.UTF-8"}, "fr"),
    ({"LANG": "ja_JP.eucJP"}, "ja"),
    ({"LC_MESSAGES": "zh_TW.UTF-8", "LANG": "en_US.UTF-8"}, "zh-Hant"),
    ({"LC_ALL": "pt_BR.UTF-8", "LC_MESSAGES": "de_DE"}, "pt"),
    ({"LANGUAGE": "xx:es_MX:en", "LANG": "fr_FR"}, "es"),  # a list: its first known one
    ({"LANGUAGE": "", "LANG": "de_DE.UTF-8@euro"}, "de"),
    ({"LANG": "C"}, "en"),
    ({"LC_ALL": "C.UTF-8", "LANG": "ja_JP.UTF-8"}, "en"),  # C is a choice: English
    ({"LANG": "POSIX"}, "en"),
    ({"LANG": "xx_YY"}, "en"),
    ({}, "en"),
])
def test_the_terminals_language_is_the_first_locale_variable_naming_one_of_the_38(environ, code):
    assert terminal_language(environ) == code


def _cli(*args: str, lang: str, stdin: bytes | None = None
         ) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in _LOCALE}
    return subprocess.run([sys.executable, "-m", "hymt_chat.cli.main", *args], input=stdin,
                          capture_output=True, timeout=120, env={**env, "LANG": lang})


def test_a_refusal_is_said_in_the_terminals_language_and_stays_one_sentence():
    french = _cli("translate", "--to", "xx", "hello", lang="fr_FR.UTF-8")
    assert french.returncode == 2 and french.stdout == b""
    assert french.stderr.decode().startswith(
        "hymt-chat: Langue inconnue 'xx'. Codes valides\u00a0: zh, en")
    japanese = _cli("translate", "--to", "fr", "   ", lang="ja_JP.UTF-8").stderr.decode()
    assert japanese.startswith("hymt-chat: ") and "empty" not in japanese
    assert japanese.strip() == f"hymt-chat: {PageText.of('ja')['empty_message']}"
    latin = _cli("translate", "--to", "fr", "-", stdin=b"caf\xe9", lang="de_DE.UTF-8")
    assert latin.returncode == 2 and latin.stderr.decode().startswith(
        "hymt-chat: „stdin“ ist kein UTF-8-Text") and "{{" not in latin.stderr.decode()
    english = _cli("translate", "--to", "xx", "hello", lang="C.UTF-8").stderr.decode()
    assert english.startswith("hymt-chat: Unknown language 'xx'. Valid codes: zh, en")


def test_what_scripts_read_is_the_same_in_any_language():
    for lang in ("fr_FR.UTF-8", "ja_JP.UTF-8"):
        assert _cli("detect", "Das ist ein deutscher Satz über das Wetter.",
                    lang=lang).stdout.decode().strip() == "de"
        table = _cli("languages", lang=lang).stdout.decode().splitlines()
        assert table[0].split() == ["zh", "Chinese", "中文"] and len(table) == 38


class _Answers:
    """A model client that always gives one answer."""

    def __init__(self, answer: str) -> None:
        self.answer = answer

    async def complete(self, prompt: str, **_request: object) -> list[str]:
        return [self.answer]


def _locale(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    for name in _LOCALE:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", value)


def test_a_warning_and_the_translation_apart_in_german(monkeypatch, capsys):
    client = _Answers("The parcel arrives on Thursday.")
    monkeypatch.setattr(ModelClients, "current", lambda self: client)
    _locale(monkeypatch, "de_DE.UTF-8")
    code = cli.main(["translate", "--to", "en", "--from", "de", "--base-url",
                     "http://127.0.0.1:9/v1", "Das Paket kommt am Freitag."])
    out, err = capsys.readouterr()
    assert code == 0 and out == "The parcel arrives on Thursday.\n"  # the result as it is
    assert err.startswith("hymt-chat: Warnung: ") and "Freitag" in err
    assert "may be wrong" not in err


def test_a_text_already_in_the_target_is_noted_in_spanish(monkeypatch, capsys):
    client = _Answers("unused")
    monkeypatch.setattr(ModelClients, "current", lambda self: client)
    _locale(monkeypatch, "es_ES.UTF-8")
    assert cli.main(["translate", "--to", "en", "--base-url", "http://127.0.0.1:9/v1",
                     "The parcel arrives on Thursday morning at the front desk."]) == 0
    out, err = capsys.readouterr()
    assert out == "The parcel arrives on Thursday morning at the front desk.\n"
    assert err == "hymt-chat: el texto ya está en inglés; se muestra sin cambios.\n"


def test_the_operators_commands_say_their_sentences_in_the_terminals_language(
        monkeypatch, capsys, tmp_path: Path):
    monkeypatch.setenv("HYMT_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("HYMT_DATABASE_URL", raising=False)
    missing = tmp_path / "missing.tmx"
    _locale(monkeypatch, "ja_JP.UTF-8")
    assert cli.main(["memory", "import", str(missing)]) == 2
    assert capsys.readouterr().err == f"hymt-chat: {missing} に TMX ファイルがありません。\n"
    assert cli.main(["audit"]) == 0
    assert capsys.readouterr().out == "該当する行は監査ログにありません。\n"
    assert cli.main(["audit", "--since", "yesterday"]) == 2
    assert capsys.readouterr().err.startswith("hymt-chat: 「yesterday」は日付ではありません")
    _locale(monkeypatch, "fr_FR.UTF-8")
    assert cli.main(["api-key", "list"]) == 0
    assert capsys.readouterr().out == (
        "Aucune clé d'API. Créez-en une avec\u00a0: hymt-chat api-key create NAME\n")
    assert cli.main(["retention", "run"]) == 0
    assert capsys.readouterr().out.startswith("Aucune durée de conservation n'est définie")
    _locale(monkeypatch, "C.UTF-8")  # English: the sentences the other tests read
    assert cli.main(["memory", "import", str(missing)]) == 2
    assert capsys.readouterr().err == f"hymt-chat: No TMX file at {missing}.\n"
    assert cli.main(["retention", "run"]) == 0
    assert capsys.readouterr().out.startswith("No retention is set")


def test_every_cli_sentence_is_written_in_the_reviewed_languages():
    from hymt_chat.words.source import CHAT, PLURALS

    keys = [k for k in (*CHAT, *PLURALS) if k.startswith("cli_")]
    assert len(keys) >= 30
    for code in ("fr", "es", "de", "zh", "ja"):
        page = PageText.of(code)
        for key in keys:
            slots = {"count": 3} if key in PLURALS else {}
            english = str(said(key, **slots))
            assert page.say(said(key, **slots)) != english, (code, key)
