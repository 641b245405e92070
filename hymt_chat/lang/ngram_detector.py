"""langdetect's detector with its trials on numpy arrays: the same answers for about half the CPU.

langdetect multiplies its 55 language probabilities by an n-gram's 55 scores a few dozen times
a trial, seven trials a text, one Python float and one ``random.choice`` at a time: ~1 ms of
CPU for a chat sentence, twice a message (the source, and the answer's check) — the largest
cost of a message in the app (``benchmarks/app_ceiling.py``). :class:`Detector` keeps
langdetect's model and its randomness exactly and changes only how the arithmetic is done:

- **The same random draws.** Python's ``random.Random`` is the Mersenne Twister; numpy's
  ``MT19937`` set to the same state gives the same 32-bit words, from which ``choice`` and
  ``gauss`` are re-derived as CPython 3.11 derives them (``_randbelow_with_getrandbits``,
  ``random()``, ``gauss``), many draws at once.
- **A trial in one pass.** langdetect multiplies the probabilities by each drawn n-gram's row
  and normalises every fifth draw to see whether one language passed 0.99999. Normalising
  does not change where the product points, so the same checkpoints are read off one
  cumulative sum of log rows, every fifth row of it: the same draws, the same checkpoint where
  a trial stops, and probabilities equal to langdetect's up to float rounding
  (``tests/test_detection.py`` compares them to 1e-9 and the draws exactly).
- **n-grams read once per word** (they never cross a space), each character's normalisation
  (pure) remembered; langdetect's text cleaning as regexes instead of character loops.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable

import numpy as np
from langdetect.detector import Detector as _LangDetector
from langdetect.detector_factory import DetectorFactory
from langdetect.lang_detect_exception import ErrorCode, LangDetectException
from langdetect.utils.ngram import NGram

__all__ = ["Detector", "Profiles"]

_SPACES = re.compile(" {2,}")
_LATIN = re.compile("[A-z]")  # langdetect's 'A' <= ch <= 'z' ([ \\ ] ^ _ ` too)
# langdetect's non-Latin: from U+0300 on. It means to leave out the block "Latin Extended
# Additional", but compares unicode_block()'s number with that name, so it never does.
_NON_LATIN = re.compile("[^\x00-\u02ff]")

_TWOPI = 2.0 * math.pi  # as random.py rounds it
_NORMALIZED: dict[str, str] = {}  # NGram.normalize, a pure function of one character


def _normalize(ch: str) -> str:
    got = _NORMALIZED.get(ch)
    if got is None:
        if len(_NORMALIZED) > 65536:  # bounded whatever the texts
            _NORMALIZED.clear()
        got = _NORMALIZED[ch] = NGram.normalize(ch)
    return got


def extract_ngrams(text: str, known: dict[str, int]) -> list[str]:
    """langdetect's ``Detector._extract_ngrams``: the 1-, 2- and 3-grams of *text* it knows,
    in its order, skipping words in capitals.

    Its n-grams never cross a space (a space starts them again), so each word's are a pure
    function of the word and of whether a space follows it; they are read once per word
    (``_word_ngrams``, remembered) instead of once per character of every text."""
    words = "".join(map(_normalize, text)).split(" ")
    result: list[str] = []
    last = len(words) - 1
    for i, word in enumerate(words):
        if word:
            result += _word_ngrams(word, i < last, known)
    return result


_WORD_NGRAMS: dict[tuple[str, bool, int], tuple[str, ...]] = {}


def _word_ngrams(word: str, spaced: bool, known: dict[str, int]) -> tuple[str, ...]:
    """One normalised word's known n-grams (and a following space's, when *spaced*), as
    langdetect's ``NGram.add_char`` makes them (per table: a process loads one)."""
    key = (word, spaced, id(known))
    got = _WORD_NGRAMS.get(key)
    if got is None:
        if len(_WORD_NGRAMS) > 65536:  # bounded whatever the texts
            _WORD_NGRAMS.clear()
        got = _WORD_NGRAMS[key] = tuple(_char_ngrams(word + " " * spaced, known))
    return got


def _char_ngrams(text: str, known: dict[str, int]) -> list[str]:
    """``NGram.add_char`` over normalised *text*, one character at a time."""
    result: list[str] = []
    grams, capital = " ", False
    for ch in text:
        last = grams[-1]
        if last == " ":
            grams, capital = " ", False
            if ch == " ":
                continue
        elif len(grams) >= 3:
            grams = grams[1:]
        grams += ch
        if ch.isupper():
            if last.isupper():
                capital = True
        else:
            capital = False
        if capital:
            continue
        if ch != " " and ch in known:
            result.append(ch)
        if len(grams) >= 2:
            if grams[-2:] in known:
                result.append(grams[-2:])
            if len(grams) >= 3 and grams[-3:] in known:
                result.append(grams[-3:])
    return result


class _Stream:
    """``random.Random(seed)``'s draws, many at a time, read off its Mersenne Twister words."""

    def __init__(self, profiles: Profiles, seed: int) -> None:
        self.profiles, self.seed = profiles, seed
        self.words = profiles.words(seed, 0)
        self.at = 0  # the first word not yet used
        self.gauss_next: float | None = None  # random.seed() clears it

    def peek(self, n: int) -> np.ndarray:
        """The next *n* words, not yet used up."""
        if self.at + n > len(self.words):
            self.words = self.profiles.words(self.seed, self.at + n)
        return self.words[self.at:self.at + n]

    def random(self) -> float:
        a, b = (int(w) for w in self.peek(2))  # CPython's random_random: 53 bits of two words
        self.at += 2
        return ((a >> 5) * 67108864.0 + (b >> 6)) * (1.0 / 9007199254740992.0)

    def gauss(self, mu: float, sigma: float) -> float:
        z, self.gauss_next = self.gauss_next, None
        if z is None:
            x2pi = self.random() * _TWOPI
            g2rad = math.sqrt(-2.0 * math.log(1.0 - self.random()))
            z = math.cos(x2pi) * g2rad
            self.gauss_next = math.sin(x2pi) * g2rad
        return mu + z * sigma

    def below(self, n: int, count: int) -> tuple[np.ndarray, np.ndarray]:
        """*count* draws of ``randbelow(n)`` (``random.choice`` of n items), without using
        them up: the draws, and how many words each one's end has used."""
        shift = np.uint64(32 - n.bit_length())  # getrandbits(k): a word's top k bits
        words = 2 * count  # more than half are accepted on average: n > 2**(k-1)
        while True:
            drawn = self.peek(words) >> shift
            accepted = np.flatnonzero(drawn < n)[:count]
            if len(accepted) == count:
                break
            words *= 2
        return drawn[accepted].astype(np.intp), accepted + 1


class Profiles:
    """A loaded factory's n-gram scores as one matrix (row per n-gram, column per language).

    The factory's ``word_lang_prob_map`` becomes ``{n-gram: row}``: langdetect reads it only to
    know which n-grams it has, and its lists of floats are let go.
    """

    WORDS = 1 << 14  # words kept: a chat sentence uses ~600, the iteration limit ~14,000

    def __init__(self, factory: DetectorFactory) -> None:
        table = factory.word_lang_prob_map
        self.factory = factory
        self.matrix = np.array(list(table.values()), dtype=np.float64)
        factory.word_lang_prob_map = {word: row for row, word in enumerate(table)}
        self._words: dict[int, np.ndarray] = {}

    def words(self, seed: int, n: int) -> np.ndarray:
        """The first *n* or more 32-bit words of ``random.Random(seed)`` (numpy's MT19937 in
        the same state gives the same words): every detection starts from the same seed, so
        its stream is made once, and longer only for a text that needs more."""
        made = self._words.get(seed)
        if made is None or len(made) < n:
            _, internal, _ = random.Random(seed).getstate()
            bits = np.random.MT19937(0)
            bits.state = {"bit_generator": "MT19937", "state": {
                "key": np.array(internal[:624], dtype=np.uint32), "pos": internal[624]}}
            made = self._words[seed] = bits.random_raw(max(2 * n, self.WORDS))
        return made

    def create(self, stop: Callable[[np.ndarray], bool] | None = None) -> Detector:
        return Detector(self, stop)


class Detector(_LangDetector):  # type: ignore[misc]
    """One text's detection (``append`` then ``get_probabilities``, as langdetect's)."""

    BATCH = 66  # draws looked at first (5k + 1: whole stretches); a chat sentence needs ~40

    def __init__(self, profiles: Profiles,
                 stop: Callable[[np.ndarray], bool] | None = None) -> None:
        """*stop*: asked after each trial with the mean so far (each finished trial's share
        added); True ends the detection there (``stopped``), for a caller whose question is
        already answered (:func:`hymt_chat.lang.detect.detect_other_than`)."""
        # langdetect's __init__, less the random.Random() it seeds from os.urandom: the draws
        # here are the _Stream's.
        factory = profiles.factory
        self.word_lang_prob_map, self.langlist = factory.word_lang_prob_map, factory.langlist
        self.seed, self.text = factory.seed, ""
        self.langprob: list[float] | None = None
        self.alpha, self.n_trial, self.max_text_length = self.ALPHA_DEFAULT, 7, 10000
        self.prior_map, self.verbose = None, False
        self.profiles = profiles
        self.stop = stop
        self.stopped = False

    def append(self, text: str) -> None:
        """langdetect's ``append`` (addresses out, Vietnamese normalised, runs of spaces made
        one), its character loop as one regex."""
        text = self.MAIL_RE.sub(" ", self.URL_RE.sub(" ", text))
        self.text += _SPACES.sub(" ", NGram.normalize_vi(text)[:self.max_text_length])

    def cleaning_text(self) -> None:
        """langdetect's ``cleaning_text``: a text mostly in another script loses its Latin
        letters ("A" to "z"); its two character loops as regexes."""
        if 2 * len(_LATIN.findall(self.text)) < len(_NON_LATIN.findall(self.text)):
            self.text = _LATIN.sub("", self.text)

    def _detect_block(self) -> None:
        self.cleaning_text()
        ngrams = extract_ngrams(self.text, self.word_lang_prob_map)
        if not ngrams:
            raise LangDetectException(ErrorCode.CantDetectError, "No features in text.")
        rows = np.fromiter(map(self.word_lang_prob_map.__getitem__, ngrams), dtype=np.intp,
                           count=len(ngrams))
        stream = _Stream(self.profiles, self.seed)
        start = np.log(np.array(self._init_probability(), dtype=np.float64))
        langprob = np.zeros(len(self.langlist))
        for _ in range(self.n_trial):
            alpha = self.alpha + stream.gauss(0.0, 1.0) * self.ALPHA_WIDTH
            langprob += self._trial(stream, rows, start, alpha / self.BASE_FREQ) / self.n_trial
            if self.stop is not None and self.stop(langprob):
                self.stopped = True
                break
        self.langprob = langprob.tolist()

    def _trial(self, stream: _Stream, rows: np.ndarray, start: np.ndarray,
               weight: float) -> np.ndarray:
        """One trial: draws until a checkpoint (every fifth draw from the first) where one
        language is past CONV_THRESHOLD, or the ITERATION_LIMIT's; its normalised
        probabilities."""
        most = self.ITERATION_LIMIT + 1
        count = min(self.BATCH, most)
        while True:
            draws, used = stream.below(len(rows), count)
            logs = np.log(weight + self.profiles.matrix[rows[draws]])
            # log-probabilities at the checkpoints, draws 0, 5, 10… (the draws come 5k + 1 at a
            # time, so the last is one); a running sum read every fifth row (no BLAS: its
            # threads would spin)
            at = np.cumsum(logs, axis=0)[::5] + start
            top = at.max(axis=1, keepdims=True)
            # the leader's normalised probability is 1 / sum(exp(at - top)) at each checkpoint
            done = np.exp(at - top).sum(axis=1) < 1.0 / self.CONV_THRESHOLD
            if count == most:
                done[self.ITERATION_LIMIT // 5] = True
            if done.any():
                checkpoint = int(done.argmax())
                stream.at += int(used[5 * checkpoint])
                prob: np.ndarray = np.exp(at[checkpoint] - top[checkpoint])
                prob /= prob.sum()
                return prob
            count = min(2 * count - 1, most)  # still 5k + 1
