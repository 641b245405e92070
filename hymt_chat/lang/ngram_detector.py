"""langdetect's detector with its inner loop on numpy rows: the same answers for half the CPU.

langdetect multiplies its 55 language probabilities by an n-gram's 55 scores a few hundred
times a text, one Python float at a time: 1.2–1.7 ms of CPU for a chat sentence, twice a
message (the source, and the answer's check) — the largest cost of a message in the app
(``benchmarks/app_ceiling.py``). :class:`Detector` keeps every step of langdetect's
``_detect_block``: the same seeded random draws in the same order, the same float operations
in the same order (an elementwise sum and product, a left-to-right sum to normalise), so its
probabilities are langdetect's bit for bit (``tests/test_detection.py`` compares them). Only
the profile table changes form: one matrix, and each n-gram's row number (half the memory of
langdetect's lists of floats).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from langdetect.detector import Detector as _LangDetector
from langdetect.detector_factory import DetectorFactory
from langdetect.lang_detect_exception import ErrorCode, LangDetectException

__all__ = ["Detector", "Profiles"]


class Profiles:
    """A loaded factory's n-gram scores as one matrix (row per n-gram, column per language).

    The factory's ``word_lang_prob_map`` becomes ``{n-gram: row}``: langdetect reads it only to
    know which n-grams it has, and its lists of floats are let go.
    """

    def __init__(self, factory: DetectorFactory) -> None:
        table = factory.word_lang_prob_map
        self.factory = factory
        self.matrix = np.array(list(table.values()), dtype=np.float64)
        factory.word_lang_prob_map = {word: row for row, word in enumerate(table)}

    def create(self, stop: Callable[[np.ndarray], bool] | None = None) -> Detector:
        return Detector(self, stop)


class Detector(_LangDetector):  # type: ignore[misc]
    """One text's detection (``append`` then ``get_probabilities``, as langdetect's)."""

    def __init__(self, profiles: Profiles,
                 stop: Callable[[np.ndarray], bool] | None = None) -> None:
        """*stop*: asked after each trial with the mean so far (each finished trial's share
        added); True ends the detection there (``stopped``), for a caller whose question is
        already answered (:func:`hymt_chat.lang.detect.detect_other_than`)."""
        super().__init__(profiles.factory)
        self.matrix = profiles.matrix
        self.stop = stop
        self.stopped = False

    def _detect_block(self) -> None:
        self.cleaning_text()
        ngrams = self._extract_ngrams()
        if not ngrams:
            raise LangDetectException(ErrorCode.CantDetectError, "No features in text.")
        local: dict[str, int] = {}  # the text's n-grams, each its row in *scores* below
        drawn = [local.setdefault(word, len(local)) for word in ngrams]
        scores = self.matrix[[self.word_lang_prob_map[word] for word in local]]
        self.random.seed(self.seed)
        choice, gauss = self.random.choice, self.random.gauss
        langprob = np.zeros(len(self.langlist))
        for _ in range(self.n_trial):
            prob = np.array(self._init_probability(), dtype=np.float64)
            alpha = self.alpha + gauss(0.0, 1.0) * self.ALPHA_WIDTH
            weighted = (alpha / self.BASE_FREQ) + scores  # langdetect's weight + score
            i = 0
            while True:
                prob *= weighted[choice(drawn)]  # choice() over as many items: the same draw
                if i % 5 == 0:
                    prob /= sum(prob.tolist())  # Python's sum: left to right, like langdetect
                    if prob.max() > self.CONV_THRESHOLD or i >= self.ITERATION_LIMIT:
                        break
                i += 1
            langprob += prob / self.n_trial
            if self.stop is not None and self.stop(langprob):
                self.stopped = True
                break
        self.langprob = langprob.tolist()
