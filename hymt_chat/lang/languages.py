"""The 38 languages Hunyuan-MT-7B supports, in the order of the official table."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hymt_chat.errors import UnknownLanguageError


@dataclass(frozen=True, slots=True)
class Language:
    code: str
    english: str
    chinese: str

    @property
    def is_chinese(self) -> bool:
        """Chinese-side languages select the Chinese prompt template."""
        return self.code in CHINESE_CODES

    def __str__(self) -> str:
        return self.english


_TABLE = """\
zh Chinese 中文|en English 英语|fr French 法语|pt Portuguese 葡萄牙语|es Spanish 西班牙语|\
ja Japanese 日语|tr Turkish 土耳其语|ru Russian 俄语|ar Arabic 阿拉伯语|ko Korean 韩语|\
th Thai 泰语|it Italian 意大利语|de German 德语|vi Vietnamese 越南语|ms Malay 马来语|\
id Indonesian 印尼语|tl Filipino 菲律宾语|hi Hindi 印地语|zh-Hant Traditional_Chinese 繁体中文|\
pl Polish 波兰语|cs Czech 捷克语|nl Dutch 荷兰语|km Khmer 高棉语|my Burmese 缅甸语|\
fa Persian 波斯语|gu Gujarati 古吉拉特语|ur Urdu 乌尔都语|te Telugu 泰卢固语|mr Marathi 马拉地语|\
he Hebrew 希伯来语|bn Bengali 孟加拉语|ta Tamil 泰米尔语|uk Ukrainian 乌克兰语|\
bo Tibetan 藏语|kk Kazakh 哈萨克语|mn Mongolian 蒙古语|ug Uyghur 维吾尔语|yue Cantonese 粤语"""

LANGUAGES: tuple[Language, ...] = tuple(
    Language(code, english.replace("_", " "), chinese)
    for code, english, chinese in (entry.split() for entry in _TABLE.split("|"))
)
CHINESE_CODES = frozenset({"zh", "zh-Hant", "yue"})
CODES: tuple[str, ...] = tuple(lang.code for lang in LANGUAGES)

# Names people and systems commonly use that are not in the table itself.
_ALIASES: dict[str, str] = {
    "zh-cn": "zh", "zh-hans": "zh", "zh-sg": "zh", "zh_cn": "zh", "cmn": "zh", "chi": "zh",
    "zho": "zh", "mandarin": "zh", "simplified chinese": "zh", "chinese simplified": "zh",
    "汉语": "zh", "中文简体": "zh", "简体中文": "zh", "普通话": "zh", "国语": "zh", "华语": "zh",
    "zh-tw": "zh-Hant", "zh-hk": "zh-Hant", "zh-mo": "zh-Hant", "zh_tw": "zh-Hant",
    "zh_hk": "zh-Hant", "traditional": "zh-Hant", "chinese traditional": "zh-Hant",
    "繁體中文": "zh-Hant", "中文繁體": "zh-Hant", "繁体": "zh-Hant", "繁體": "zh-Hant",
    "cantonese": "yue", "廣東話": "yue", "广东话": "yue", "粵語": "yue", "zh-yue": "yue",
    "英文": "en", "eng": "en", "法文": "fr", "日文": "ja", "韩文": "ko", "韓語": "ko",
    "德文": "de", "俄文": "ru", "西班牙文": "es",
    "fil": "tl", "tagalog": "tl", "pilipino": "tl",
    "farsi": "fa", "iw": "he", "in": "id", "bahasa indonesia": "id", "bahasa melayu": "ms",
    "myanmar": "my", "cambodian": "km", "uighur": "ug", "uygur": "ug",
    "português": "pt", "español": "es", "français": "fr", "deutsch": "de", "italiano": "it",
    "русский": "ru", "日本語": "ja", "한국어": "ko", "العربية": "ar", "ไทย": "th",
    "tiếng việt": "vi", "हिन्दी": "hi", "türkçe": "tr", "polski": "pl", "čeština": "cs",
    "nederlands": "nl", "українська": "uk", "עברית": "he", "فارسی": "fa", "བོད་ཡིག": "bo",
    "қазақ тілі": "kk", "монгол": "mn", "ئۇيغۇرچە": "ug",
}

_INDEX: dict[str, str] = {}
for _lang in LANGUAGES:
    for _key in (_lang.code, _lang.english, _lang.chinese):
        _INDEX[_key.casefold()] = _lang.code
for _alias, _code in _ALIASES.items():
    _INDEX[_alias.casefold()] = _code

_BY_CODE: dict[str, Language] = {lang.code: lang for lang in LANGUAGES}


def _normalise(name: str) -> str:
    return re.sub(r"[\s_]+", " ", name.strip()).casefold().replace(" - ", "-")


def find_language(code_or_name: object) -> Language | None:
    """Like :func:`get_language` but returns None for unknown input (anything not a string:
    values that come from the browser are not trusted to be one)."""
    if not isinstance(code_or_name, str) or len(code_or_name) > 64:
        return None
    key = _normalise(code_or_name)
    if not key:
        return None
    for candidate in (key, key.replace(" ", "-"), key.replace("_", "-")):
        if candidate in _INDEX:
            return _BY_CODE[_INDEX[candidate]]
    # A BCP 47 tag with a region or script we don't list (pt-BR, en-US, es_419): use its base.
    base = re.split(r"[-_ ]", key, maxsplit=1)[0]
    if base != key and base in _INDEX and base != "zh":
        return _BY_CODE[_INDEX[base]]
    return None


def get_language(code_or_name: object) -> Language:
    """Look a language up by code, English or Chinese name, or a common alias.

    Raises :class:`UnknownLanguageError` (a ``ValueError``) listing the valid codes.
    """
    lang = find_language(code_or_name)
    if lang is None:
        shown = repr(code_or_name[:40]) if isinstance(code_or_name, str) else "that value"
        raise UnknownLanguageError(f"Unknown language {shown}. Valid codes: {', '.join(CODES)}."
                                   ).saying("unknown_language_code", name=shown,
                                            codes=", ".join(CODES))
    return lang
