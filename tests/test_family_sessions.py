"""The sessions use the family: the agent's Tone picker and /tone, a .json upload through the
structured-data instruction. A stand-in server (real HTTP) answers and records the prompts."""

from __future__ import annotations

import json

import pytest

from hymt_chat.engine.families import forget_served_model
from hymt_chat.modes.agent.session import AgentSession
from hymt_chat.modes.session import Upload
from hymt_chat.modes.translator_session import TranslatorSession
from tests.support.sessions import RecordingScreen
from tests.support.sessions import services as _services
from tests.support.stub_model import StubModel, echo_source


def answer(prompt: str) -> str:
    """The structured instruction's block back as it came; the text itself otherwise."""
    if prompt.startswith("### Task"):
        return prompt.split("### Source Data\n", 1)[1]
    return echo_source(prompt)


@pytest.fixture
def stub():
    forget_served_model()
    with StubModel(answer) as model:
        yield model
    forget_served_model()


async def test_the_tone_picker_and_command_reach_the_style_instruction(stub, tmp_path):
    screen = RecordingScreen()
    session = AgentSession(_services(stub, tmp_path, model_family="hy-mt2"), screen,
                           session_id="a1", user_key="user:bob")
    await session.start()
    tone = next(f for f in screen.panels[-1] if f.id == "tone")
    assert (tone.id, tone.value, set(tone.items.values())) == (
        "tone", "neutral", {"neutral", "formal", "friendly"})
    await session.message("/customer Spanish", None)
    await session.settings_changed({"tone": "formal", "back_translate": False})
    assert session.conv.tone == "formal"
    assert "Tone: formal" in screen.last().markdown.replace("\\", "")
    await session.message("I will send a new box tomorrow.", None)
    assert stub.prompts[-1] == ("Please translate the following text into Spanish. Note that "
                                "the translation style must strictly conform to [formal]:\n\n"
                                "I will send a new box tomorrow.")
    await session.message("/tone neutral", None)
    assert session.conv.tone == "neutral" and "Tone: neutral" in screen.last().markdown.replace("\\", "")


async def test_tone_on_a_family_without_style_says_it_is_not_applied(stub, tmp_path):
    screen = RecordingScreen()
    session = AgentSession(_services(stub, tmp_path, model_family="hy-mt1.5"), screen,
                           session_id="a2", user_key="user:ann")
    await session.message("/tone friendly", None)
    assert "HY-MT1.5 has no style instruction" in screen.last().markdown.replace("\\", "")


async def test_a_json_upload_goes_through_the_structured_instruction(stub, tmp_path):
    screen = RecordingScreen()
    session = TranslatorSession(_services(stub, tmp_path, model_family="hy-mt2"), screen,
                                session_id="s1", user_key="addr:1")
    await session.settings_changed({"source": "en", "target": "fr"})
    path = tmp_path / "ui.json"
    path.write_text(json.dumps({"save": "Save changes", "hello": "Hello, {name}!", "n": 3}),
                    encoding="utf-8")
    await session.message("", None, uploads=[Upload(str(path), "ui.json")])
    await session.settled()  # a file runs in the background
    out = screen.last().files[0]
    assert out.name == "ui.fr.json"
    assert json.loads(out.content) == {"save": "Save changes", "hello": "Hello, {name}!", "n": 3}
    structured = [p for p in stub.prompts if p.startswith("### Task")]
    assert len(structured) == 1 and len(stub.prompts) == 1  # one request for the whole file
    assert '"2": "Hello, {name}!"' in structured[0]
