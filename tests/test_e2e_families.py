"""Each family's prompts end to end on the real vLLM server (the demo model, forced to a family).

The demo model is none of the families: what is tested is that each family's instruction is
what reaches the server, that the server's answer comes back through the whole path (the
glossary term, the tone, a .json and a .po file with keys, placeholders and plural forms), and
that the sampling vLLM actually used is the family's (read in vLLM's own request log, which
the session's server writes with ``--enable-log-requests``). Prompts are recorded by a
subclass of the real client that calls through to it.
"""

from __future__ import annotations

import json
import re

import polib
import pytest

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.families import forget_served_model, get_family, note_served_model
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.translator import Translator
from hymt_chat.modes.agent.conversation import Conversation
from hymt_chat.modes.agent.turns import handle_agent_message, parse_agent_command, run_agent_command
from hymt_chat.modes.documents import StructuredCall, load_document, translate_document
from hymt_chat.modes.structured import placeholders
from tests.test_structured_documents import PO_FILE

pytestmark = pytest.mark.slow


class RecordingClient(ModelClient):
    """The real client; it also keeps every prompt it sends."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.prompts: list[str] = []

    async def complete(self, prompt: str, **kwargs) -> list[str]:  # type: ignore[override]
        self.prompts.append(prompt)
        return await super().complete(prompt, **kwargs)


def _translator(server, family: str, **overrides) -> tuple[Translator, RecordingClient]:
    settings = server.settings(model_family=family, **{"temperature": 0.0, **overrides})
    client = RecordingClient(settings)
    return Translator(settings, client, Policy(deadline=settings.deadline)), client


@pytest.fixture(autouse=True)
def _no_served_model():
    forget_served_model()
    yield
    forget_served_model()


_PARAMS = re.compile(r"Received request \S+: params: SamplingParams\((?P<params>.*?)\), lora")


def _logged_sampling(server) -> list[dict[str, str]]:
    """The sampling of every request vLLM logged so far, in order."""
    log = server.log_path.read_text(errors="replace")
    return [dict(item.split("=", 1) for item in m.group("params").split(", ") if "=" in item)
            for m in _PARAMS.finditer(log)]


@pytest.mark.parametrize("family", ["hunyuan-mt", "hy-mt1.5", "hy-mt2"])
async def test_each_familys_default_prompt_reaches_the_server_and_is_answered(demo_server,
                                                                             family):
    translator, client = _translator(demo_server, family)
    result = await translator.translate("Good morning, how are you today?", "fr", "en")
    assert client.prompts == [get_family(family).prompt(
        "default", text="Good morning, how are you today?", source="en", target="fr")]
    assert result.text.strip() and "without additional explanation" not in result.text
    assert "translated result" not in result.text


async def test_the_sampling_vllm_used_is_the_familys(demo_server):
    # The server is told it serves Hy-MT2-30B-A3B so that its sampling (which no other test
    # sends: top_p 1.0, no top-k, no repetition penalty) can be told apart in the log.
    note_served_model("tencent/Hy-MT2-30B-A3B")
    translator, _client = _translator(demo_server, "hy-mt2", temperature=None)
    before = _logged_sampling(demo_server)
    await translator.translate("The parcel arrived this morning.", "de", "en")
    new = _logged_sampling(demo_server)[len(before):]
    assert {"repetition_penalty": "1.0", "temperature": "0.7", "top_p": "1.0",
            "top_k": "-1"} in [{k: p.get(k) for k in ("repetition_penalty", "temperature",
                                                     "top_p", "top_k")} for p in new], new


async def test_glossary_goes_through_the_terminology_prompt(demo_server):
    translator, client = _translator(demo_server, "hy-mt2")
    conv = Conversation("en", "zh")
    run_agent_command(conv, parse_agent_command("/glossary add 订单号 = order ID"))
    result = await handle_agent_message(conv, "请问我的订单号是多少？", translator)
    assert client.prompts[0] == ("参考下面的翻译：\n订单号 翻译成 order ID\n将以下文本翻译为英语，"
                                 "注意只需要输出翻译后的结果，不要额外解释：\n\n请问我的订单号是多少？")
    # Through the instruction, or (when the small model ignored it) masked: the term arrives.
    assert result.template in ("terminology", "terminology, then masking"), result
    assert "order ID" in result.translation, result.translation


async def test_tone_goes_through_the_style_prompt(demo_server):
    translator, client = _translator(demo_server, "hy-mt2")
    conv = Conversation("en", "es")
    run_agent_command(conv, parse_agent_command("/tone formal"), translator.family)
    result = await handle_agent_message(conv, "Thanks, I will check your order now.", translator)
    assert client.prompts == ["Please translate the following text into Spanish. Note that the "
                              "translation style must strictly conform to [formal]:\n\n"
                              "Thanks, I will check your order now."]
    assert result.template == "style" and result.translation.strip()
    assert "strictly conform" not in result.translation


async def _document(server, name: str, data: bytes) -> tuple[str, StructuredCall, list[str]]:
    translator, client = _translator(server, "hy-mt2")

    async def one(text: str, **_kw) -> str:
        return (await translator.translate(text, "fr", "en")).text

    call = StructuredCall.for_translator(translator, "en", "fr")
    assert call is not None
    out = await translate_document(load_document(name, data), one, structured=call)
    return out, call, client.prompts


async def test_a_json_file_through_the_structured_prompt_keeps_keys_and_placeholders(
        demo_server):
    source = {"title": "Save changes", "greeting": "Hello, {name}! You have %d new messages.",
              "menu": {"quit": "Quit the application", "count": 3, "enabled": True}}
    out, call, prompts = await _document(demo_server, "ui.json",
                                         json.dumps(source, indent=2).encode())
    assert prompts[0].startswith("### Task\nTranslate the user-facing text within the following "
                                 "JSON data into French.")
    assert '"1": "Save changes"' in prompts[0] and call.blocks == 1 and call.values == 3
    data = json.loads(out)
    assert list(data) == list(source) and list(data["menu"]) == list(source["menu"])
    assert (data["menu"]["count"], data["menu"]["enabled"]) == (3, True)
    assert placeholders(data["greeting"]) == ["{name}", "%d"]
    assert all(isinstance(v, str) and v.strip() for v in
               (data["title"], data["greeting"], data["menu"]["quit"]))
    print(f"json: {call.accepted} of {call.values} values accepted from the structured answer")


async def test_a_po_file_through_the_structured_prompt_keeps_plural_forms(demo_server):
    out, call, prompts = await _document(demo_server, "app.po", PO_FILE.encode())
    assert prompts[0].startswith("### Task\nTranslate the user-facing text within the following "
                                 "JSON data into French.")
    assert call.blocks == 1 and call.values == 5  # Save, 3 plural forms, Hello
    po, original = polib.pofile(out), polib.pofile(PO_FILE)
    assert po.metadata == original.metadata  # Plural-Forms and all
    assert [(e.msgctxt, e.msgid, e.msgid_plural) for e in po] == [
        (e.msgctxt, e.msgid, e.msgid_plural) for e in original]
    plural = po[1]
    assert sorted(plural.msgstr_plural) == [0, 1, 2]
    assert all(placeholders(s) == ["%(count)d"] for s in plural.msgstr_plural.values())
    assert placeholders(po[2].msgstr) == ["{name}"] and po[0].msgstr.strip()
    print(f"po: {call.accepted} of {call.values} values accepted from the structured answer")
