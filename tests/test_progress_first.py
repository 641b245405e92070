"""Work of several parts shows its count from the first second: the progress line says
"3 parts · on their way" while the model still holds every part, not only once the first is
back (on a slow model that was half a minute of a silent dot), and not "0 of 3 parts".

Against the real app (``tests/support/tabs.py``) over a stand-in model whose answers are held
back (``tests/support/gate.py``) until the line has been seen."""

from __future__ import annotations

from tests.support.gate import Gate
from tests.support.tabs import Tab, app, marked

TEXT = "\n\n".join(f"Paragraphe {i} de la lettre du client, assez long." for i in range(3))


def _steps(tab: Tab, text: str) -> list[str]:
    """The progress lines of *tab* that say *text* (each a message of its own)."""
    return [line for line in tab.said(text) if line.startswith("Translating")]


async def test_a_text_of_several_parts_shows_its_count_before_the_first_part(tmp_path):
    gate = Gate(answer=marked)
    try:
        with app(tmp_path, answer=gate, HYMT_SEGMENT_CHARS="60") as (url, _):
            async with Tab(url) as tab:
                await tab.send(TEXT)
                line = await tab._first(lambda: next(iter(_steps(tab, "3 parts")), None),
                                        60, "a part count")
                assert "3 parts · on their way" in line and line.startswith("Translating")
                assert not tab.said("EN:")  # shown while every part was still at the model
                gate.open()
                await tab.wait("EN:Paragraphe 2")
                assert tab.said("EN:Paragraphe 2")[-1].count("EN:") == 3
    finally:
        gate.open()
