"""The translator and the translate CLI end to end.

On the real vLLM server with the demo model (marked slow): a French sentence comes back in
English, and one multi-paragraph text of about 1,500 characters comes back whole and in order.
Everything else runs against the engine double (tests/support/engine_double.py), an
OpenAI-compatible server over real HTTP whose answers are a phrasebook
(tests/support/phrasebook.py): the long text at full size (10,000+ characters), its partial
result and "Retry the rest", the model calls a text already in the target language does not
make, and the CLI, a real subprocess talking to the double as it would to vLLM.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys

import pytest

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.translator import MISSING_MARK, Translator, plan_translation
from hymt_chat.errors import IncompleteTranslationError
from hymt_chat.lang.detect import detect_language
from tests.support.engine_double import EngineDouble, running_double
from tests.support.phrasebook import phrasebook, source_text

FRENCH = "Bonjour, je voudrais réserver une table pour deux personnes ce soir, s'il vous plaît."
FRENCH_EN = "Hello, I would like to book a table for two people tonight, please."
CHINESE = "您好，我的订单号是JD123456789，想查询物流状态。"
CHINESE_EN = "Hello, my order number is JD123456789, I would like to check the shipping status."


def _translator(server, **overrides) -> Translator:
    settings = server.settings(**overrides)
    return Translator(settings, ModelClient(settings), Policy(deadline=settings.deadline))


# --- the real model: the round trip a user sees ----------------------------------------------


@pytest.mark.slow
async def test_french_to_english_comes_back_in_english(demo_server):
    result = await _translator(demo_server).translate(FRENCH, "en")
    assert result.source == "fr" and result.detected
    assert detect_language(result.text) == "en", result.text
    assert result.segments == 1 and not result.same_language


# About 1,500 characters in five paragraphs, each with a number of its own: the numbers say
# whether the paragraphs came back in their order, whatever words the model chose.
LETTER = [
    "Madame, Monsieur, nous avons bien reçu votre commande numéro 1101 du lundi matin. "
    "Elle sera préparée dans notre entrepôt de Lyon et partira dès demain par la poste. "
    "Vous recevrez un message avec le lien de suivi dès que le transporteur l'aura prise. "
    "Il passe chez vous entre huit heures et midi.",
    "Le colis contient trois articles. Si l'un d'eux manque à la livraison, écrivez-nous "
    "en indiquant la référence 2202 et nous vous enverrons la pièce manquante sans frais. "
    "Gardez l'emballage d'origine jusqu'à ce que tout soit arrivé en bon état. Un retour "
    "reste possible pendant quatorze jours, sans avoir à donner de raison.",
    "La facture de la commande est jointe à ce message. Vous pouvez la payer par carte ou par "
    "virement; le montant doit nous parvenir dans les trente jours, référence 3303. "
    "Une copie reste disponible à tout moment dans votre espace client sur notre site.",
    "Notre service client répond du lundi au vendredi, de neuf heures à dix-huit heures. "
    "Pour toute question sur la garantie, donnez-nous le numéro de dossier 4404 et la date "
    "de votre achat, et nous reviendrons vers vous dans la journée. Le samedi, une "
    "permanence répond aux urgences par courriel, de dix heures à midi seulement.",
    "Nous vous remercions de votre confiance et de votre patience. Toute notre équipe vous "
    "souhaite une excellente journée; à très bientôt dans notre magasin, numéro 5505. "
    "Nos horaires d'ouverture sont affichés à l'entrée et sur notre site internet, avec "
    "les jours fériés.",
]


@pytest.mark.slow
async def test_a_multi_paragraph_letter_comes_back_whole_and_in_order(demo_server):
    """The real model, the app's own window (2 slots, one kept for live messages) and its
    checks: every paragraph comes back, in English, in its place."""
    text = "\n\n".join(LETTER)
    assert 1_300 <= len(text) <= 1_700
    settings = demo_server.settings(window_max=2, temperature=0.0)
    policy = Policy(window_max=2, deadline=settings.deadline, reserve=settings.interactive_reserve)
    result = await Translator(settings, ModelClient(settings), policy).translate(text, "en", "fr")
    paragraphs = result.text.split("\n\n")
    assert len(paragraphs) == len(LETTER), result.text
    assert all(p.strip() for p in paragraphs), result.text
    numbers = [re.findall(r"\d{4}", p) for p in paragraphs]
    assert numbers == [["1101"], ["2202"], ["3303"], ["4404"], ["5505"]], result.text
    assert sum(detect_language(p) == "en" for p in paragraphs) >= 4, result.text
    print(f"{len(text):,} characters in {result.seconds:.0f} s")


# --- the double: what the app does with the model's answers ----------------------------------

ANSWERS = phrasebook({
    FRENCH: {"en": FRENCH_EN},
    CHINESE: {"en": CHINESE_EN},
})


async def test_chinese_to_english_goes_through_the_chinese_instruction_and_keeps_the_number():
    with running_double(answer=ANSWERS) as double:
        result = await _translator(double).translate(CHINESE, "en", "zh")
    assert [source_text(p) for p in double.prompts] == [CHINESE]
    assert double.prompts[0].startswith("把下面的文本翻译成英语")  # Chinese source: its template
    assert result.text == CHINESE_EN and detect_language(result.text) == "en"


async def test_already_in_target_language_does_not_call_the_model(engine: EngineDouble):
    result = await _translator(engine).translate(
        "This sentence is already written in plain English.", "en")
    assert result.same_language and result.segments == 0
    assert result.text == "This sentence is already written in plain English."
    assert engine.requests == []


_SENTENCES = {
    "The delivery arrived two days late.": "La livraison est arrivée avec deux jours de retard.",
    "Please check the tracking number again.": "Veuillez vérifier à nouveau le numéro de suivi.",
    "Our support team answers within one hour.": "Notre équipe d'assistance répond en une heure.",
    "The invoice was sent to your e-mail.": "La facture a été envoyée à votre adresse e-mail.",
    "We apologise for the inconvenience.": "Nous nous excusons pour la gêne occasionnée.",
    "Your refund has been approved today.": "Votre remboursement a été approuvé aujourd'hui.",
    "The new model ships next month.": "Le nouveau modèle sera livré le mois prochain.",
    "Thank you for your patience.": "Merci de votre patience.",
    "The warehouse in Lyon closes at six in the evening.":
        "L'entrepôt de Lyon ferme à six heures du soir.",
    "A replacement part will be sent free of charge.":
        "Une pièce de rechange sera envoyée gratuitement.",
}
# Ordinary paragraphs: 600 to 1,400 characters (the long ones are one segment each).
_SIZES = [650, 1400, 930, 1200, 720, 1350, 1000, 820, 1300, 680, 1100]
# Each paragraph starts with its own number (not one of the phrasebook's words), so that a
# paragraph's answer says which paragraph it is.
IN_FRENCH = phrasebook({english: {"fr": french} for english, french in _SENTENCES.items()})


def _long_english_text() -> str:
    sentences = list(_SENTENCES)
    paragraphs = []
    i = 0
    for n, size in enumerate(_SIZES, start=1):
        paragraph = f"{n}."
        while len(paragraph) + len(sentences[i % len(sentences)]) + 1 <= size:
            paragraph += " " + sentences[i % len(sentences)]
            i += 1
        paragraphs.append(paragraph)
    return "\n\n".join(paragraphs)


def _in_french(paragraph: str) -> str:
    for english, french in _SENTENCES.items():
        paragraph = paragraph.replace(english, french)
    return paragraph


def _long_translator(double: EngineDouble) -> Translator:
    """The app's own settings: its deadline, a window of the 2 running slots, one of them kept
    free for live messages, and its answer checks."""
    settings = double.settings(window_max=2)
    policy = Policy(window_max=2, deadline=settings.deadline, reserve=settings.interactive_reserve)
    return Translator(settings, ModelClient(settings), policy)


async def test_ten_thousand_characters_in_long_paragraphs_come_back_whole_and_in_order():
    """Every paragraph is sent (one part at a time: the other slot is kept for live messages)
    and its answer lands in its own place; nothing lost, nothing doubled."""
    text = _long_english_text()
    paragraphs = text.split("\n\n")
    assert len(text) >= 10_000 and max(map(len, paragraphs)) >= 1_300
    assert min(map(len, paragraphs)) >= 600
    with running_double(answer=IN_FRENCH, hold=True) as double:
        translator = _long_translator(double)
        parts = plan_translation(text, "fr", "en", translator.settings).work
        progress: list[tuple[int, int]] = []
        job = asyncio.create_task(translator.translate(
            text, "fr", "en", on_progress=lambda done, total: progress.append((done, total))))
        # Step the double one answer at a time: a second part sent beside the first would be
        # running too (2 slots), and would be found beside it.
        for released in range(parts):
            await double.until(lambda d, n=released: d.count("finished") == n
                               and len(d.running) == 1, f"part {released + 1} at the engine")
            assert len(double.running) + len(double.waiting) == 1, double.requests
            double.release(1)
        result = await asyncio.wait_for(job, 60)
    assert result.text == "\n\n".join(_in_french(p) for p in paragraphs)  # whole, in order
    assert result.segments >= len(paragraphs) and len(double.requests) == parts
    assert sorted(source_text(p) for p in double.prompts) == sorted(
        source_text(p) for p in set(double.prompts))  # no part sent twice
    assert progress[-1] == (result.segments, result.segments)
    assert detect_language(result.text) == "fr"


async def test_a_long_text_whose_parts_fail_keeps_the_rest_and_retries_only_the_missing():
    """The double fails (HTTP 500) every call for two chosen paragraphs: the others come back
    translated in place, the two are marked; "Retry the rest" sends only those two."""
    text = _long_english_text()
    paragraphs = text.split("\n\n")
    broken = {paragraphs[2], paragraphs[7]}

    def answer(prompt: str) -> str:
        if source_text(prompt) in broken:
            raise RuntimeError("the engine failed this part")
        return IN_FRENCH(prompt)

    with running_double(answer=answer) as double:
        settings = double.settings(window_max=2, retries=False)
        policy = Policy(window_max=2, deadline=settings.deadline, retries=False,
                        reserve=settings.interactive_reserve)
        translator = Translator(settings, ModelClient(settings), policy)
        with pytest.raises(IncompleteTranslationError) as info:
            await translator.translate(text, "fr", "en")
        err = info.value
        assert err.missing == [3, 8] and err.done == err.total - 2, str(err)
        kept = err.partial.text.split("\n\n")
        assert len(kept) == len(paragraphs)
        for n, (got, paragraph) in enumerate(zip(kept, paragraphs, strict=True)):
            expected = MISSING_MARK + paragraph if n in (2, 7) else _in_french(paragraph)
            assert got == expected, n

        broken.clear()  # the engine is well again
        sent_before = len(double.requests)
        result = await translator.translate_rest(err.partial)
        again = [source_text(p) for p in double.prompts[sent_before:]]
    assert sorted(again) == sorted([paragraphs[2], paragraphs[7]])  # only the missing ones
    assert result.text == "\n\n".join(_in_french(p) for p in paragraphs)


# --- the CLI, a real subprocess, against the double -------------------------------------------


def _cli(*args: str, env: dict[str, str], stdin: bytes | None = None):
    return subprocess.run([sys.executable, "-m", "hymt_chat.cli.main", *args], env=env, input=stdin,
                          capture_output=True, timeout=300)


def test_cli_translates_argument_and_stdin_at_the_base_url_flag():
    """Each CLI call is a fresh Python (seconds on a busy host): the argument's call also
    proves that ``--base-url`` wins over HYMT_BASE_URL (nothing listens at the latter)."""
    with running_double(answer=ANSWERS) as double:
        env = {**double.env(), "HYMT_BASE_URL": "http://127.0.0.1:9/v1"}
        out = _cli("translate", "--to", "en", "--base-url", double.base_url, FRENCH, env=env)
        assert out.returncode == 0, out.stderr
        assert out.stdout.decode() == FRENCH_EN + "\n"  # only the translation

        out = _cli("translate", "--to", "english", "--from", "zh", "-", env=double.env(),
                   stdin=CHINESE.encode())
        assert out.returncode == 0, out.stderr
        assert out.stdout.decode() == CHINESE_EN + "\n"
    assert [source_text(p) for p in double.prompts] == [FRENCH, CHINESE]
