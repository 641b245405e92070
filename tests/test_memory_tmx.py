"""TMX out and in, and ``hymt-chat memory export|import|stats|clear``: a deployment's
corrections exported and imported by another one, which then answers with them; XXE, entity
bombs, broken XML and files that are not TMX are refused whole with one sentence; what cannot
be used is skipped and counted; reading streams (memory does not grow with the file)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from hymt_chat.cli.main import main
from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.recall import Memory
from hymt_chat.engine.translator import Translator
from hymt_chat.settings import Settings
from hymt_chat.store.memory import CORRECTED, IMPORTED, MemoryStore, TeamEntry
from hymt_chat.store.tmx import ReadReport, TmxError, read_tmx, write_tmx
from tests.support.stub_model import StubModel


def _deployment(monkeypatch: pytest.MonkeyPatch, folder: Path) -> Path:
    """The environment of a deployment whose cache (and so its memory) is *folder*."""
    monkeypatch.setenv("HYMT_CACHE_DIR", str(folder))
    monkeypatch.delenv("HYMT_DATABASE_URL", raising=False)
    monkeypatch.delenv("HYMT_MEMORY_PATH", raising=False)
    return folder / "memory.db"


def _tmx(body: str, header: str = '<header srclang="en" datatype="plaintext"/>',
         doctype: str = "") -> bytes:
    return (f'<?xml version="1.0" encoding="UTF-8"?>{doctype}<tmx version="1.4">{header}'
            f"<body>{body}</body></tmx>").encode()


def _tu(src: str, dst: str, *, lang: str = "es", extra: str = "") -> str:
    return (f'<tu>{extra}<tuv xml:lang="en"><seg>{src}</seg></tuv>'
            f'<tuv xml:lang="{lang}"><seg>{dst}</seg></tuv></tu>')


async def test_a_correction_exported_is_imported_and_used_by_another_deployment(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
        ) -> None:
    first = MemoryStore(_deployment(monkeypatch, tmp_path / "one"))
    first.correct(TeamEntry("en", "es", "Thank you for waiting.", "Gracias por su paciencia.",
                            CORRECTED, "alice"))
    first.put("k", "en", "es", "Model only.", "Solo el modelo.", "m")  # not exported
    out = tmp_path / "team.tmx"
    assert main(["memory", "export", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.count("<tu ") == 1 and 'creationid="alice"' in text
    assert "Gracias por su paciencia." in text and "Solo el modelo" not in text

    other = _deployment(monkeypatch, tmp_path / "two")
    assert main(["memory", "import", str(out)]) == 0
    assert "Imported 1 entry from 1 translation unit(s)" in capsys.readouterr().out
    assert main(["memory", "stats"]) == 0
    stats = capsys.readouterr().out
    assert "corrected by agents" in stats and "1" in stats.split("corrected by agents")[1][:20]

    with StubModel(lambda _p: "Gracias por esperar.") as model:
        settings = Settings(base_url=model.base_url, api_key="k", model="stub",
                            cache_dir=tmp_path / "two")
        translator = Translator(settings, ModelClient(settings), Policy(retries=False),
                                memory=Memory.for_settings(settings))
        result = await translator.translate("Thank you for waiting.", "es", "en")
        assert result.text == "Gracias por su paciencia." and result.remembered == (CORRECTED,)
        assert model.prompts == []  # the other deployment's model was never asked
    assert MemoryStore(other).stats().by_origin[CORRECTED] == 1


def test_export_with_machine_entries_and_clear(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    store = MemoryStore(_deployment(monkeypatch, tmp_path))
    store.put("k", "en", "es", "Model only.", "Solo el modelo.", "m")
    store.correct(TeamEntry("en", "es", "Hello.", "Hola.", CORRECTED, "bob"))
    assert main(["memory", "export", "--machine", str(tmp_path / "all.tmx")]) == 0
    assert (tmp_path / "all.tmx").read_text().count("x-hymt-origin") == 2
    assert main(["memory", "clear"]) == 0  # the model's answers only
    assert store.stats().by_origin == {"machine": 0, "imported": 0, "corrected": 1}
    assert main(["memory", "clear", "--all"]) == 0
    assert store.stats().total == 0
    capsys.readouterr()
    assert main(["memory", "import", str(tmp_path / "all.tmx")]) == 0  # its machine unit skipped
    assert "skipped 1: a model's entry" in capsys.readouterr().out
    assert store.stats().by_origin == {"machine": 0, "imported": 0, "corrected": 1}


def test_units_hymt_chat_cannot_use_are_skipped_and_counted() -> None:
    body = "".join([
        _tu("Good morning.", "Buenos días."),
        _tu("Good night.", "Bonne nuit.", lang="fr"),
        _tu("Klingon.", "Qapla'.", lang="tlh"),
        _tu("Bold <bpt i='1'>x</bpt> text.", "Texto <bpt i='1'>x</bpt> negrita."),
        _tu("Empty.", "  "),
        _tu("Two lines.\nHere.", "Una línea."),
        _tu("Line one.\nLine two.", "Línea uno.\nLínea dos."),
    ])
    report = ReadReport()
    entries = list(read_tmx(io.BytesIO(_tmx(body)), report))
    assert [(e.source, e.target, e.segment, e.translation, e.origin) for e in entries] == [
        ("en", "es", "Good morning.", "Buenos días.", IMPORTED),
        ("en", "fr", "Good night.", "Bonne nuit.", IMPORTED),
        ("en", "es", "Line one.", "Línea uno.", IMPORTED),
        ("en", "es", "Line two.", "Línea dos.", IMPORTED)]
    assert report.units == 7 and sum(report.skipped.values()) == 4, report.skipped
    both = list(read_tmx(io.BytesIO(_tmx(_tu("Yes.", "Sí."), header='<header srclang="*all*"/>'))))
    assert {(e.source, e.target) for e in both} == {("en", "es"), ("es", "en")}


def test_an_xxe_file_is_refused_and_reads_nothing(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE")
    doctype = f'<!DOCTYPE tmx [<!ENTITY xxe SYSTEM "file://{secret}">]>'
    data = _tmx(_tu("Hello &xxe;", "Hola"), doctype=doctype)
    with pytest.raises(TmxError, match="entity references") as caught:
        list(read_tmx(io.BytesIO(data)))
    assert "TOP-SECRET" not in str(caught.value)


def test_an_entity_bomb_expands_to_nothing() -> None:
    lol = "".join(f'<!ENTITY l{n} "{f"&l{n - 1};" * 10}">' for n in range(1, 10))
    doctype = f'<!DOCTYPE tmx [<!ENTITY l0 "lol">{lol}]>'
    with pytest.raises(TmxError, match="entity references|amplification") as caught:
        list(read_tmx(io.BytesIO(_tmx(_tu("&l9;", "x"), doctype=doctype))))
    assert "nothing was imported" in str(caught.value)  # libxml2 itself stops the expansion


def test_a_network_dtd_is_never_fetched() -> None:
    doctype = '<!DOCTYPE tmx SYSTEM "http://192.0.2.1/tmx14.dtd">'  # TEST-NET: would hang
    assert [e.segment for e in read_tmx(io.BytesIO(_tmx(_tu("Hi.", "Hola."), doctype=doctype)))
            ] == ["Hi."]


def test_broken_xml_and_other_roots_import_nothing(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m.db")
    good = "".join(_tu(f"Sentence {n}.", f"Frase {n}.") for n in range(2500))
    broken = _tmx(good)[:-40] + b"<tu><tuv>"  # the end is cut off: well past the first batches
    with pytest.raises(TmxError, match=r"not well-formed XML \(line 1"):
        store.add_team(read_tmx(io.BytesIO(broken)))
    assert store.stats().total == 0  # the 2,000 units before the break are not kept either
    with pytest.raises(TmxError, match="root is <html>"):
        list(read_tmx(io.BytesIO(b"<html><body/></html>")))


def test_reading_streams_a_large_file_in_bounded_memory(tmp_path: Path) -> None:
    """The reader's peak memory (a fresh process's maxrss: libxml2's own allocations count)
    for 100,000 units is about that for 10,000: each unit is cleared once read, so a
    million-unit file reads the same way (benchmarks/memory.py imports one)."""

    def grown(units: int) -> int:
        path = tmp_path / f"{units}.tmx"
        with open(path, "wb") as out:
            out.write(_tmx("")[:-len(b"</body></tmx>")])
            out.writelines(_tu(f"Sentence number {n}.", f"Frase número {n}.").encode() for n in range(units))
            out.write(b"</body></tmx>")
        code = ("import resource, sys\n"
                "from hymt_chat.store.tmx import read_tmx\n"
                "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
                f"n = sum(1 for _ in read_tmx({str(path)!r}))\n"
                f"assert n == {units}, n\n"
                "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=300, cwd=Path(__file__).parent.parent)
        assert done.returncode == 0, done.stderr
        return int(done.stdout)  # KiB

    small, large = grown(10_000), grown(100_000)
    assert large < small + 20_000, (small, large)  # a kept tree would be ~100 MB more


def test_written_tmx_reads_back_the_same() -> None:
    store_entries = [
        TeamEntry("en", "zh", "Your refund is on its way.", "您的退款正在路上。", CORRECTED, "li"),
        TeamEntry("fr", "en", "Merci & à bientôt <3", "Thanks & see you <3", IMPORTED)]
    from hymt_chat.store.memory import Entry, team_key

    entries = [Entry(team_key(e.source, e.target, e.segment), e.origin, e.source, e.target,
                     e.segment, e.translation, "", e.author, 1.7e9, 1.7e9, 2)
               for e in store_entries]
    out = io.BytesIO()
    assert write_tmx(entries, out) == 2
    back = list(read_tmx(io.BytesIO(out.getvalue())))
    assert [(e.source, e.target, e.segment, e.translation, e.origin, e.author, e.created)
            for e in back] == [(e.source, e.target, e.segment, e.translation, e.origin,
                                e.author, 1.7e9) for e in store_entries]


def test_the_command_line_refuses_bad_files_in_one_sentence(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
        ) -> None:
    _deployment(monkeypatch, tmp_path)
    assert main(["memory", "import", str(tmp_path / "missing.tmx")]) == 2
    assert "No TMX file at" in capsys.readouterr().err
    broken = tmp_path / "broken.tmx"
    broken.write_bytes(_tmx(_tu("Hi.", "Hola."))[:-20])
    assert main(["memory", "import", str(broken)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hymt-chat: The TMX file is not well-formed XML") and "\n" == err[-1]
    assert "Traceback" not in err
