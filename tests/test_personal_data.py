"""Personal data found and replaced by placeholders (hymt_chat/text/personal.py), and the log
lines that carry placeholders instead (hymt_chat/service/logs.py).

The card and IBAN numbers are the published test numbers: Visa's 4111 1111 1111 1111 (Luhn,
ISO/IEC 7812-1 annex B) and the IBAN registry's German example DE89 3704 0044 0532 0130 00
(ISO 13616, check digits by ISO 7064 mod 97-10).
"""

from __future__ import annotations

import io
import json
import logging

import pytest

from hymt_chat.service.logs import configure_logging
from hymt_chat.settings import Settings
from hymt_chat.text.personal import fill, find_personal, redact, redact_pair

EMAIL, PHONE = "anna.berg@example.com", "+49 170 1234567"


@pytest.mark.parametrize(("text", "kind", "value"), [
    ("Schreiben Sie an anna.berg@example.com bitte", "email", EMAIL),
    ("Rufen Sie +49 170 1234567 an", "phone", PHONE),
    ("call (030) 123-4567 today", "phone", "(030) 123-4567"),
    ("mobile 0170/1234567.", "phone", "0170/1234567"),
    ("tel 555 123 4567", "phone", "555 123 4567"),
    ("Karte 4111 1111 1111 1111 bitte", "card", "4111 1111 1111 1111"),
    ("IBAN DE89 3704 0044 0532 0130 00 danke", "iban", "DE89 3704 0044 0532 0130 00"),
    ("IBAN DE89370400440532013000.", "iban", "DE89370400440532013000"),
    ("Bestellung ORD-2024-001 kam nicht", "order", "ORD-2024-001"),
    ("see https://shop.example/o/77?t=abc", "url", "https://shop.example/o/77?t=abc"),
])
def test_each_kind_is_found(text: str, kind: str, value: str) -> None:
    assert [(f.kind, f.text) for f in find_personal(text)] == [(kind, value)]


@pytest.mark.parametrize("text", [
    "Delivered on 2024-12-05 at 10:30.",
    "Am 05.12.2024 geliefert.",
    "It costs 1 234 567 euros.",
    "Room 12, floor 3, 45 minutes.",
    "Listening on 10.20.30.40 port 8021.",
    "4111 1111 1111 1112 fails the Luhn check",
    "DE00 3704 0044 0532 0130 00 fails mod 97",
])
def test_dates_amounts_and_numbers_that_fail_their_checks_are_not_personal(text: str) -> None:
    kinds = {f.kind for f in find_personal(text)}
    assert not kinds & {"phone", "card", "iban"}, find_personal(text)


def test_redact_numbers_each_distinct_value_per_kind() -> None:
    out = redact(f"Mail {EMAIL}, again {EMAIL}, or b@example.org; call {PHONE}.")
    assert out.text == "Mail [email-1], again [email-1], or [email-2]; call [phone-1]."
    assert out.values == {"[email-1]": EMAIL, "[email-2]": "b@example.org",
                          "[phone-1]": PHONE}


def test_a_pair_gets_the_same_placeholders_and_fills_back() -> None:
    source = f"Bitte schreiben Sie an {EMAIL} oder rufen Sie {PHONE} an."
    answer = f"Please write to {EMAIL} or call {PHONE}."
    pair = redact_pair(source, answer)
    assert pair == ("Bitte schreiben Sie an [email-1] oder rufen Sie [phone-1] an.",
                    "Please write to [email-1] or call [phone-1].")
    assert fill(pair[1], source) == answer
    assert fill(pair[1], "Bitte schreiben Sie an c@d.example an.") is None  # no phone there


def test_a_translation_that_rewrote_a_value_is_not_kept() -> None:
    """The model wrote the phone another way: the clear number would be kept, so nothing is."""
    assert redact_pair(f"Rufen Sie {PHONE} an.", "Call +49 (170) 123-4567.") is None


def _log_line(settings: Settings, message: str, **extra: object) -> dict[str, object]:
    stream = io.StringIO()
    name = f"hymt-test-personal-{id(stream)}"
    handlers = configure_logging(settings, stream=stream, logger=name)
    log = logging.getLogger(name)
    log.propagate = False
    try:
        log.warning(message, extra=extra)
    finally:
        for handler in handlers:
            log.removeHandler(handler)
            handler.close()
    line: dict[str, object] = json.loads(stream.getvalue().splitlines()[-1])
    return line


def test_log_lines_carry_placeholders_by_default(tmp_path) -> None:
    line = _log_line(Settings(cache_dir=tmp_path, log_file=tmp_path / "a.log"),
                     f"could not reach {EMAIL}", who=f"phone {PHONE}")
    assert line["message"] == "could not reach [email-1]"
    assert line["who"] == "phone [phone-1]"
    assert EMAIL not in (tmp_path / "a.log").read_text()


def test_log_pii_keep_writes_them_in_clear(tmp_path) -> None:
    line = _log_line(Settings(cache_dir=tmp_path, log_file=tmp_path / "a.log", log_pii="keep"),
                     f"could not reach {EMAIL}")
    assert line["message"] == f"could not reach {EMAIL}"
