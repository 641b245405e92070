"""Guess the language of a message: Unicode-script rules first, langdetect for the rest.

langdetect knows none of bo, ug, mn, km, my, yue and cannot tell Kazakh from Russian, so the
script and a few characteristic letters decide those; it only ranks languages inside Latin,
Cyrillic, Arabic and Devanagari script (and has no Malay: a few spelling differences tell
Malay from what it calls Indonesian). Answers are a table code (``languages.CODES``) or None:
a wrong guess costs the user more than no guess.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable

import numpy as np
from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory
from langdetect.lang_detect_exception import LangDetectException

from hymt_chat.lang.languages import CODES
from hymt_chat.lang.ngram_detector import Detector, Profiles
from hymt_chat.text.cleanup import clean_text

__all__ = ["count_scripts", "detect_language", "detect_other_than", "detect_with_confidence",
           "script_of", "warm_up"]

SAMPLE_CHARS = 4000
"""Only the start of a long text is examined: enough for a stable answer, cheap on 200k."""
MIN_LETTERS = 2
"""Below this nothing is decided, whatever the script."""
MIN_LETTERS_STATISTICAL = 8
"""langdetect is confidently wrong on single short words (measured: "Merhaba" -> id 0.99999,
"Привет" -> bg, "سلام" -> ur, "Hallo" -> fi), so it is not asked about less than this."""
SHORT_TEXT_LETTERS = 30
SHORT_TEXT_MIN_PROB = 0.9
"""langdetect averages 7 random trials, so its probabilities move in steps of 1/7; under
SHORT_TEXT_LETTERS every trial must agree (6/7 = 0.857 is refused)."""
MIN_PROB = 0.7
MARKER_DENSITY = 0.03
"""Share of letters that characteristic letters (Kazakh ә, Uyghur ې…) must reach: 5-10 % in
real Kazakh, Mongolian or Uyghur prose, so that a quoted name ("Қазақстан" in a Russian
article) does not flip the whole text."""

# --------------------------------------------------------------------------------------------
# Scripts
# --------------------------------------------------------------------------------------------

_SCRIPT_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x0041, 0x024F, "latin"),
    (0x0370, 0x03FF, "greek"),
    (0x0400, 0x052F, "cyrillic"),
    (0x0590, 0x05FF, "hebrew"),
    (0x0600, 0x06FF, "arabic"),
    (0x0750, 0x077F, "arabic"),
    (0x08A0, 0x08FF, "arabic"),
    (0x0900, 0x097F, "devanagari"),
    (0x0980, 0x09FF, "bengali"),
    (0x0A80, 0x0AFF, "gujarati"),
    (0x0B80, 0x0BFF, "tamil"),
    (0x0C00, 0x0C7F, "telugu"),
    (0x0E00, 0x0E7F, "thai"),
    (0x0F00, 0x0FFF, "tibetan"),
    (0x1000, 0x109F, "myanmar"),
    (0x1100, 0x11FF, "hangul"),
    (0x1780, 0x17FF, "khmer"),
    (0x1800, 0x18AF, "mongolian"),
    (0x19E0, 0x19FF, "khmer"),
    (0x1C80, 0x1C8F, "cyrillic"),
    (0x1E00, 0x1EFF, "latin"),
    (0x1F00, 0x1FFF, "greek"),
    (0x2C60, 0x2C7F, "latin"),
    (0x2DE0, 0x2DFF, "cyrillic"),
    (0x2E80, 0x2FDF, "han"),
    (0x3005, 0x3007, "han"),  # 々 〆 〇
    (0x3040, 0x30FF, "kana"),
    (0x3130, 0x318F, "hangul"),
    (0x31F0, 0x31FF, "kana"),
    (0x3400, 0x4DBF, "han"),
    (0x4E00, 0x9FFF, "han"),
    (0xA640, 0xA69F, "cyrillic"),
    (0xA720, 0xA7FF, "latin"),
    (0xA960, 0xA97F, "hangul"),
    (0xA9E0, 0xA9FF, "myanmar"),
    (0xAA60, 0xAA7F, "myanmar"),
    (0xAC00, 0xD7FF, "hangul"),
    (0xF900, 0xFAFF, "han"),
    (0xFB1D, 0xFB4F, "hebrew"),
    (0xFB50, 0xFDFF, "arabic"),
    (0xFE70, 0xFEFF, "arabic"),
    (0xFF21, 0xFF5A, "latin"),
    (0xFF66, 0xFF9F, "kana"),
    (0xFFA0, 0xFFDC, "hangul"),
    (0x11660, 0x1167F, "mongolian"),
    (0x1B000, 0x1B16F, "kana"),
    (0x20000, 0x323AF, "han"),
)
_STARTS = [start for start, _, _ in _SCRIPT_RANGES]

# Scripts that only one of the 38 languages writes (Bengali script is also Assamese, Hebrew
# also Yiddish, Myanmar also Shan: none of those is in the table, so the answer is still best).
_UNIQUE_SCRIPTS: dict[str, str] = {
    "tibetan": "bo", "khmer": "km", "myanmar": "my", "mongolian": "mn", "thai": "th",
    "hebrew": "he", "gujarati": "gu", "telugu": "te", "tamil": "ta", "bengali": "bn",
    "hangul": "ko", "kana": "ja",
}
_STATISTICAL_SCRIPTS = frozenset({"latin", "cyrillic", "arabic", "devanagari", "greek"})


def script_of(ch: str) -> str:
    """The script of one character ("latin", "han", "kana", "cyrillic"…; "other" if none)."""
    return _SCRIPTS[ch]


def count_scripts(chars: Iterable[str]) -> Counter[str]:
    """How many of *chars* each script has (one table look-up a character)."""
    return Counter(map(_SCRIPTS.__getitem__, chars))


class _ScriptTable(dict[str, str]):
    """Each character's script, found once (a pure function asked for every letter of every
    text and answer: two to three look-ups a character a message)."""

    def __missing__(self, ch: str) -> str:
        if len(self) > 65536:  # bounded whatever the texts
            self.clear()
        got = self[ch] = _script(ch)
        return got


_SCRIPTS = _ScriptTable()


def _script(ch: str) -> str:
    cp = ord(ch)
    i = bisect.bisect_right(_STARTS, cp) - 1
    if i >= 0 and cp <= _SCRIPT_RANGES[i][1]:
        return _SCRIPT_RANGES[i][2]
    return "other"


# --------------------------------------------------------------------------------------------
# Characteristic letters and characters
# --------------------------------------------------------------------------------------------

# Kazakh-only Cyrillic letters (і is left out: Ukrainian writes it too).
_KAZAKH = frozenset("әғқңұһӘҒҚҢҰҺ")
# ө ү: Mongolian (and Kazakh, which the check above catches first).
_MONGOLIAN_CYRILLIC = frozenset("өүӨҮ")
# Uyghur: ې ۆ ۈ ۋ are written by no other language of the table. ە (its "e") is next best but
# turns up in Urdu typed on some keyboards, and ۇ ڭ ھ ئ are weaker still (ھ is in Urdu
# digraphs such as بھ, ئ in Urdu and Persian): those count only after Urdu is ruled out.
_UYGHUR_STRONG = frozenset("\u06d0\u06c6\u06c8\u06cb")
_UYGHUR_AE = "\u06d5"
_UYGHUR_WEAK = frozenset("\u06c7\u06ad\u06be\u0626")
# Urdu: ٹ ڈ ڑ ں ے ہ ۓ appear in no other language of the table.
_URDU = frozenset("\u0679\u0688\u0691\u06ba\u06d2\u06c1\u06d3")

# langdetect has no Malay profile and calls Malay "id": words that differ between the two
# standards (Malay / Indonesian spelling or vocabulary) decide between them.
_MALAY_WORDS = frozenset(
    "kerana sahaja pejabat awak wang mahu nak kat percuma bahawa bas polis".split()
)
_INDONESIAN_WORDS = frozenset(
    "karena saja kantor bisa uang mobil mau nggak gak enggak gratis bahwa bis polisi "
    "sih dong kok banget aja".split()
)
_WORD = re.compile(r"[^\W\d_]+")

# Written Cantonese: function words Mandarin does not use.
_CANTONESE = frozenset("嘅咗唔佢冇喺啲嚟嗰乜哋嘢噉啱睇畀咩嘞囉啩攞搵瞓諗嬲冚")
CANTONESE_DENSITY = 0.02
"""Cantonese prose has a marker every 10-20 characters; a Mandarin text quoting one has far less."""

# Common characters that exist only in one of the two forms (pairs where the simplified form is
# also a traditional character, such as 后/後 or 台/臺, keep only their unambiguous side).
_SIMPLIFIED_ONLY = frozenset(
    "这们说来国会时为个对学发过还没么样经现见长开关动问题间东车书门马鸟鱼买卖钱银员语话请认让谢"
    "读写觉实应该给头电视网络专业机场飞进远边级热爱亲难欢乐习惯页顾预领风饭馆报纸气环设计务则区县"
    "乡农华义总结构运输讲词课谁调换将记录产办离备脑医药处顺烦恼单双岁数亿钟钢铁错误压济财贵货败负"
    "责费资质购贸赶轻较辆达违连迟选递逻遗邮钥锁镜闭闻阅队阳阴际陆陈随险雾静顶项频额饥饮饱饿驾验鸡"
    "黄从两与无吗号体广厂众军汉变儿战争条极权声观议论识证许线织红约统续维综园图团围坏块坚尔岛师带"
    "帮张当忆怀态庆戏护担拥择挥损杂楼标树桥检欧毕汤沟满灯灵烧爷牵状独猪献画疗码础确积称穷笔签简类"
    "紧细终罗职联艺节苏荣获营虽补装规订训访评试诗询谈谓贝贴赛转软轮载适键闹阶隐韩顿颜鲜龙齐亚仅价"
    "优传伤伦伟刘刚创删别剧劳势协卫厅参启响严丰临丽举乱仓仪侧债倾兰兴养湾"
)
_TRADITIONAL_ONLY = frozenset(
    "這們說來國會時為爲個對學發髮過還沒麼樣經現見長開關動問題間東車書門馬鳥魚買賣錢銀員語話請認讓謝"
    "讀寫聽覺實應該給頭電視網絡專業機場飛進遠邊級熱愛親難歡樂習慣頁顧預領風飯館報紙氣環設計務則區縣"
    "鄉農華義總結構運輸講詞課誰調換將記錄產辦離準備腦醫藥處須順煩惱單雙歲數億鐘鋼鐵錯誤壓濟財貴貨敗"
    "負責費資質購貿趕輕較輛達違連遲選遞邏遺郵鑰鎖鏡閉聞閱隊陽陰際陸陳隨險霧靜頂項頻額饑飲飽餓駕驗雞"
    "黃從兩與無嗎號體廣廠眾軍漢變兒戰爭條極權聲觀議論識證許線織紅約統續維綜園圖團圍壞塊堅爾島師帶幫"
    "張當憶懷態慶戲護擔擁擇揮損雜樓標樹橋檢歐畢湯溝滿燈靈燒爺牽狀獨豬獻畫療碼礎確積稱窮筆簽簡類緊細"
    "終羅職聯藝節蘇榮獲營雖補裝規訂訓訪評試詩詢談謂貝貼賽轉軟輪載適鍵鬧階隱韓頓顏鮮龍齊亞僅價優傳傷"
    "倫偉劉剛創刪別劇勞勢協衛廳參啟響嚴豐臨麗舉亂倉儀側債傾蘭興養灣臺後裡裏萬幾並點鬥麵種據決況雲葉"
    "隻製衝係範醜穀錶纔鹹捲餘鬱樸捨鬍盡稅腳夥"
)

# --------------------------------------------------------------------------------------------
# langdetect, made deterministic and thread-safe
# --------------------------------------------------------------------------------------------

# langdetect codes that differ from the table's; any other code not in CODES means "not ours".
_FROM_LANGDETECT: dict[str, str] = {"zh-cn": "zh", "zh-tw": "zh-Hant", "iw": "he", "in": "id"}
_CODES = frozenset(CODES)

@functools.cache
def _profiles() -> Profiles:
    """Our own profiles (not langdetect's global factory), loaded once, seeded once.

    Read-only data from langdetect's files, like a compiled pattern, not a service: nothing
    about it depends on settings. A Detector copies the seed at creation and owns its random
    generator, and the profile tables are read-only after loading, so one Detector per call is
    safe from any number of threads or asyncio tasks, and the same text always gets the same
    answer.
    """
    return _load_profiles()


def _detector(stop: Callable[[np.ndarray], bool] | None = None) -> Detector:
    return _profiles().create(stop)


def _load_profiles() -> Profiles:
    factory = DetectorFactory()
    factory.load_profile(PROFILES_DIRECTORY)
    factory.set_seed(0)
    return Profiles(factory)


def warm_up() -> None:
    """Load langdetect's profiles now (about a quarter of a second) instead of on first use."""
    _profiles()


def _langdetect(text: str, letters: int, settled: _Settled | None = None, *,
                code_only: bool = False) -> tuple[str | None, float]:
    """langdetect's verdict. *code_only*: the caller reads the code alone (the probability
    returned is then at least the needed one, not the full mean: see :class:`_Decided`)."""
    needed = SHORT_TEXT_MIN_PROB if letters < SHORT_TEXT_LETTERS else MIN_PROB
    stop = settled.stop if settled else _Decided(needed).stop if code_only else None
    detector = _detector(stop)
    detector.append(text)
    try:
        ranked = detector.get_probabilities()
    except LangDetectException:  # no usable features (URLs only, digits...)
        return None, 0.0
    if detector.stopped and settled is not None:
        settled.reached = True
        return None, 0.0
    if not ranked:
        return None, 0.0
    top = ranked[0]
    code = _FROM_LANGDETECT.get(top.lang, top.lang)
    if code not in _CODES or top.prob < needed:
        return None, top.prob
    return code, top.prob


# --------------------------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------------------------

# Not language: URLs, addresses, handles, HTML/XML tags, code spans, Markdown emphasis markers.
_URL_OR_HANDLE = re.compile(
    r"(?:https?://|www\.)\S+|\S+@\S+\.\w+|[@#]\w+|</?[A-Za-z][^<>]*>|```.*?```|`[^`\n]*`|[*_~]{1,3}",
    re.DOTALL,
)


def _dense(count: int, letters: int) -> bool:
    return count > 0 and count >= MARKER_DENSITY * letters


def _han(letters: list[str], han: int) -> tuple[str, float]:
    cantonese = sum(ch in _CANTONESE for ch in letters)
    if cantonese and cantonese >= CANTONESE_DENSITY * han:
        return "yue", 0.9
    simplified = sum(ch in _SIMPLIFIED_ONLY for ch in letters)
    traditional = sum(ch in _TRADITIONAL_ONLY for ch in letters)
    if traditional > simplified:
        return "zh-Hant", traditional / (traditional + simplified)
    if simplified > traditional:
        return "zh", simplified / (traditional + simplified)
    return "zh", 0.6  # no telling character: the forms agree, so Simplified is as right


def _cyrillic(letters: list[str]) -> tuple[str | None, float]:
    if _dense(sum(ch in _KAZAKH for ch in letters), len(letters)):
        return "kk", 0.9
    if _dense(sum(ch in _MONGOLIAN_CYRILLIC for ch in letters), len(letters)):
        return "mn", 0.9
    return None, 0.0


def _arabic(letters: list[str]) -> tuple[str | None, float]:
    n = len(letters)
    if _dense(sum(ch in _UYGHUR_STRONG for ch in letters), n):
        return "ug", 0.9
    if _dense(sum(ch in _URDU for ch in letters), n):
        return "ur", 0.9
    weak = {ch for ch in letters if ch in _UYGHUR_WEAK}
    if _dense(letters.count(_UYGHUR_AE), n) or (len(weak) >= 3 and weak & {"\u06c7", "\u06ad"}):
        return "ug", 0.8
    return None, 0.0


def _malay_or_indonesian(text: str) -> str:
    words = _WORD.findall(text.casefold())
    malay = sum(w in _MALAY_WORDS for w in words)
    indonesian = sum(w in _INDONESIAN_WORDS for w in words)
    return "ms" if malay > indonesian else "id"


# langdetect hesitates between Spanish and Portuguese on short messages ("Hola, mi pedido no ha
# llegado todavía." -> pt 0.71); letters and function words that only one of them uses decide.
_SPANISH_MARKS = frozenset("ñ¿¡")
_PORTUGUESE_MARKS = frozenset("ãõç")
_SPANISH_WORDS = frozenset(
    "el los del mi mis y pero muy hola gracias usted todavía hay ha han está estoy yo cuando "
    "donde dónde qué porque también pedido ayer hoy mañana llegado".split()
)
_PORTUGUESE_WORDS = frozenset(
    "o os do da dos das meu minha e mas muito olá obrigado obrigada você ainda há tem está "
    "estou eu quando onde porque também pedido ontem hoje amanhã chegou não".split()
) - _SPANISH_WORDS


def _spanish_or_portuguese(text: str, guess: str | None) -> str | None:
    lowered = text.casefold()
    words = _WORD.findall(lowered)
    spanish = sum(ch in _SPANISH_MARKS for ch in lowered) + sum(w in _SPANISH_WORDS for w in words)
    portuguese = sum(ch in _PORTUGUESE_MARKS for ch in lowered) + sum(
        w in _PORTUGUESE_WORDS for w in words)
    if spanish == portuguese:
        return guess
    return "es" if spanish > portuguese else "pt"


class _Settled:
    """When a question "is the text, at *threshold* or more, in a language outside *codes*?"
    is answered before langdetect's trials end: the answer is the mean of its trials, each
    summing to 1, so once the finished trials gave *codes* a share S, no other language can
    end above 1 - S."""

    def __init__(self, codes: Collection[str], threshold: float) -> None:
        self.threshold = threshold
        self.reached = False  # stopped early: no language outside *codes* can be the answer
        langs = _profiles().factory.langlist
        self.columns = [i for i, lang in enumerate(langs)
                        if _FROM_LANGDETECT.get(lang, lang) in codes]

    def stop(self, mean_so_far: np.ndarray) -> bool:
        return 1.0 - float(mean_so_far[self.columns].sum()) < self.threshold


class _Decided:
    """When :func:`detect_language`'s question, "which language, if sure enough?", is answered
    before langdetect's trials end: the answer is the mean of seven trials that each sum to 1,
    so once the leader's share of the finished ones reaches *needed* and no other language
    could catch it with every trial left, the rest change only the number (a long sentence:
    five trials of seven)."""

    def __init__(self, needed: float) -> None:
        self.needed = needed

    def stop(self, mean_so_far: np.ndarray) -> bool:
        left = 1.0 - float(mean_so_far.sum())  # the unrun trials' share of the mean
        second, lead = np.partition(mean_so_far, -2)[-2:]
        return bool(lead >= self.needed and lead - second > left + 1e-9)


_REDECIDED = frozenset({"es", "pt", "id", "ms"})  # langdetect's verdict re-decided by markers


def detect_other_than(text: str, codes: Collection[str],
                      threshold: float) -> tuple[str | None, float]:
    """:func:`detect_with_confidence` for a caller who only asks whether *text* is, with
    *threshold* confidence or more, in a language outside *codes* (the answer check: "is this
    reply in the target?"): ``(None, 0.0)`` as soon as that cannot be, which for a reply in
    the target is after one of langdetect's seven trials (the check's CPU per message halved).
    Any answer it does give is :func:`detect_with_confidence`'s. Spanish, Portuguese, Malay
    and Indonesian are re-decided by markers after langdetect, so for them it does not stop
    early."""
    if set(codes) & _REDECIDED:
        return detect_with_confidence(text)
    return _detect(text, _Settled(codes, threshold))


def detect_with_confidence(text: str) -> tuple[str | None, float]:
    """Like :func:`detect_language`, with how sure the answer is (0-1; 0.0 with None)."""
    return _detect(text, None)


def _detect(text: str, settled: _Settled | None, *,
            code_only: bool = False) -> tuple[str | None, float]:
    sample = _URL_OR_HANDLE.sub(" ", clean_text(text[:SAMPLE_CHARS]))
    letters = [ch for ch in sample if ch.isalpha()]
    if len(letters) < MIN_LETTERS:
        return None, 0.0
    scripts = count_scripts(letters)
    # Japanese mixes kanji and kana: judge the pair together against the other scripts.
    if scripts["kana"] and scripts["kana"] * 10 >= scripts["han"]:
        scripts["kana"] += scripts.pop("han", 0)
    script, count = scripts.most_common(1)[0]
    share = count / len(letters)

    if script in _UNIQUE_SCRIPTS:
        return _UNIQUE_SCRIPTS[script], round(min(0.99, share), 3)
    if script == "han":
        return _han(letters, count)
    if script not in _STATISTICAL_SCRIPTS:
        return None, 0.0
    if len(letters) >= 3 and script in ("cyrillic", "arabic"):
        rule = _cyrillic if script == "cyrillic" else _arabic
        code, confidence = rule(letters)
        if code:
            return code, confidence
    if len(letters) < MIN_LETTERS_STATISTICAL:
        return None, 0.0
    code, prob = _langdetect(sample, len(letters), settled, code_only=code_only)
    if settled is not None and settled.reached:
        return None, 0.0
    if code is None:  # unsure between Spanish and Portuguese only: the markers may decide
        ranked = detect_candidates(sample)[:2]
        if {c for c, _ in ranked} == {"es", "pt"} and sum(p for _, p in ranked) >= 0.9:
            code = _spanish_or_portuguese(sample, None)
            prob = sum(p for _, p in ranked) if code else 0.0
    if code == "id":
        code = _malay_or_indonesian(sample)
    elif code in ("es", "pt"):
        code = _spanish_or_portuguese(sample, code)
    return (code, round(prob, 3)) if code else (None, 0.0)


def detect_language(text: str) -> str | None:
    """The language of ``text`` as a table code, or None when too short or ambiguous to say
    (:func:`detect_with_confidence`'s code, found with fewer trials where they cannot change
    it)."""
    return _detect(text, None, code_only=True)[0]


def detect_candidates(text: str, min_prob: float = 0.0) -> list[tuple[str, float]]:
    """langdetect's whole ranking, mapped to table codes (codes outside the table kept as is).

    For callers with priors of their own (the support-agent mode knows the conversation's two
    languages): the runner-up matters when langdetect hesitates between close languages, e.g.
    Spanish and Portuguese. Deterministic: the same seeded factory as detect_language.
    """
    detector = _detector()
    detector.append(text)
    try:
        ranked = detector.get_probabilities()
    except LangDetectException:
        return []
    return [(_FROM_LANGDETECT.get(r.lang, r.lang), r.prob) for r in ranked if r.prob >= min_prob]
