"""Each family's prompts end to end, on the engine double (tests/support/engine_double.py).

What is tested is what the app sends and what it does with the answer: each family's
instruction is what reaches the server (read from the requests the double received), with the
family's sampling in the request's body, and the server's answer comes back through the whole
path (the glossary term, the tone, a .json and a .po file with keys, placeholders and plural
forms). The double answers from a phrasebook (tests/support/phrasebook.py), the structured
prompt with the JSON it was given, its values in French. That the real vLLM takes the
request and uses the sampling it is sent is tested on the real server in
tests/test_warm_start.py (its log) and tests/test_engine_contract.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

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
from tests.support.engine_double import EngineDouble, running_double
from tests.support.phrasebook import phrasebook
from tests.test_structured_documents import PO_FILE

GREETING = "Good morning, how are you today?"
FRENCH = {
    GREETING: "Bonjour, comment allez-vous aujourd'hui ?",
    "Save changes": "Enregistrer les modifications",
    "Hello, {name}! You have %d new messages.": "Bonjour, {name} ! Vous avez %d nouveaux messages.",
    "Quit the application": "Quitter l'application",
    "Save": "Enregistrer",
    "%(count)d files": "%(count)d fichiers",
    "%(count)d file": "%(count)d fichier",
    "Hello, {name}!": "Bonjour, {name} !",
}
BOOK = phrasebook({
    **{english: {"fr": french} for english, french in FRENCH.items()},
    "请问我的订单号是多少？": {"en": "Could you tell me what my order ID is?"},
    "Thanks, I will check your order now.": {"es": "Gracias, revisaré su pedido ahora."},
    "The parcel arrived this morning.": {"de": "Das Paket ist heute Morgen angekommen."},
})
STRUCTURED_DATA = "### Source Data\n"


def answer(prompt: str) -> str:
    """The structured prompt's JSON with its values in French; any other prompt, the book's."""
    if prompt.startswith("### Task") and STRUCTURED_DATA in prompt:
        values = json.loads(prompt.split(STRUCTURED_DATA, 1)[1])
        return json.dumps({k: FRENCH.get(v, v) for k, v in values.items()}, ensure_ascii=False,
                          indent=2)
    return BOOK(prompt)


@pytest.fixture
def double() -> Iterator[EngineDouble]:
    with running_double(answer=answer) as engine:
        yield engine


def _translator(server, family: str, **overrides) -> Translator:
    settings = server.settings(model_family=family, **{"temperature": 0.0, **overrides})
    return Translator(settings, ModelClient(settings), Policy(deadline=settings.deadline))


@pytest.fixture(autouse=True)
def _no_served_model():
    forget_served_model()
    yield
    forget_served_model()


@pytest.mark.parametrize("family", ["hunyuan-mt", "hy-mt1.5", "hy-mt2"])
async def test_each_familys_default_prompt_reaches_the_server_and_is_answered(double, family):
    result = await _translator(double, family).translate(GREETING, "fr", "en")
    assert double.prompts == [get_family(family).prompt(
        "default", text=GREETING, source="en", target="fr")]
    assert result.text == FRENCH[GREETING]


async def test_the_sampling_sent_to_the_engine_is_the_familys(double):
    # Served Hy-MT2-30B-A3B: its own sampling (top_p 1.0, no top-k, no repetition penalty),
    # not the 7B's that the other tests send.
    note_served_model("tencent/Hy-MT2-30B-A3B")
    result = await _translator(double, "hy-mt2", temperature=None).translate(
        "The parcel arrived this morning.", "de", "en")
    [body] = [r.body for r in double.requests]
    assert {k: body.get(k) for k in ("repetition_penalty", "temperature", "top_p", "top_k")} == {
        "repetition_penalty": 1.0, "temperature": 0.7, "top_p": 1.0, "top_k": -1}, body
    assert result.text == "Das Paket ist heute Morgen angekommen."


async def test_glossary_goes_through_the_terminology_prompt(double):
    translator = _translator(double, "hy-mt2")
    conv = Conversation("en", "zh")
    run_agent_command(conv, parse_agent_command("/glossary add 订单号 = order ID"))
    result = await handle_agent_message(conv, "请问我的订单号是多少？", translator)
    assert double.prompts[0] == ("参考下面的翻译：\n订单号 翻译成 order ID\n将以下文本翻译为英语，"
                                 "注意只需要输出翻译后的结果，不要额外解释：\n\n请问我的订单号是多少？")
    assert result.template == "terminology", result  # the answer had the term: no masking
    assert result.translation == "Could you tell me what my order ID is?"


async def test_tone_goes_through_the_style_prompt(double):
    translator = _translator(double, "hy-mt2")
    conv = Conversation("en", "es")
    run_agent_command(conv, parse_agent_command("/tone formal"), translator.family)
    result = await handle_agent_message(conv, "Thanks, I will check your order now.", translator)
    assert double.prompts == ["Please translate the following text into Spanish. Note that the "
                              "translation style must strictly conform to [formal]:\n\n"
                              "Thanks, I will check your order now."]
    assert result.template == "style"
    assert result.translation == "Gracias, revisaré su pedido ahora."


async def _document(server, name: str, data: bytes) -> tuple[str, StructuredCall, list[str]]:
    translator = _translator(server, "hy-mt2")

    async def one(text: str, **_kw) -> str:
        return (await translator.translate(text, "fr", "en")).text

    call = StructuredCall.for_translator(translator, "en", "fr")
    assert call is not None
    out = await translate_document(load_document(name, data), one, structured=call)
    return out, call, server.prompts


async def test_a_json_file_through_the_structured_prompt_keeps_keys_and_placeholders(
        double):
    source = {"title": "Save changes", "greeting": "Hello, {name}! You have %d new messages.",
              "menu": {"quit": "Quit the application", "count": 3, "enabled": True}}
    out, call, prompts = await _document(double, "ui.json",
                                         json.dumps(source, indent=2).encode())
    assert prompts[0].startswith("### Task\nTranslate the user-facing text within the following "
                                 "JSON data into French.")
    assert '"1": "Save changes"' in prompts[0] and call.blocks == 1 and call.values == 3
    data = json.loads(out)
    assert list(data) == list(source) and list(data["menu"]) == list(source["menu"])
    assert (data["menu"]["count"], data["menu"]["enabled"]) == (3, True)
    assert placeholders(data["greeting"]) == ["{name}", "%d"]
    assert (data["title"], data["greeting"], data["menu"]["quit"]) == (
        FRENCH["Save changes"], FRENCH[source["greeting"]], FRENCH["Quit the application"])
    assert call.accepted == call.values and len(prompts) == 1  # one call for the whole file


async def test_a_po_file_through_the_structured_prompt_keeps_plural_forms(double):
    out, call, prompts = await _document(double, "app.po", PO_FILE.encode())
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
    assert set(plural.msgstr_plural.values()) <= {FRENCH["%(count)d file"],
                                                  FRENCH["%(count)d files"]}, plural
    assert placeholders(po[2].msgstr) == ["{name}"]
    assert (po[0].msgstr, po[2].msgstr) == ("Enregistrer", "Bonjour, {name} !")
    assert call.accepted == call.values and len(prompts) == 1  # one call for the whole file
