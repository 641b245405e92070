"""Fidelity of numbers, amounts, dates, times, weekdays and order numbers, on a real model.

64 one-line support messages in 16 language pairs, translated through the real Translator
against a real server (the demo model unless HYMT_BASE_URL is set), in four configurations:

* ``plain``: checks and one repair, values sent as written (HYMT_MASK_VALUES=false);
* ``amount`` (the default), ``amount,date``, ``all``: checks and one repair, those values
  masked (HYMT_MASK_KINDS) and restored in the target's format.

Each run keeps the first answer's findings and the final one's: the first answer of
``plain`` is the official prompt with nothing checked (the baseline), its
final answer is "repair only", the first answer of a masked configuration is "masking only",
its final answer is masking + repair. Findings are the checks' (hymt_chat.text.checks); every
final answer whose checks passed can be printed for a human to read (``--show-clean``), since
the checks can only vouch for what they recognise.

    .venv/bin/python benchmarks/fidelity.py [--repeat 2] [--only NAME ...] [--show-clean]

Results: docs/results/fidelity.json (every answer) and fidelity.md (the table).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _server import model_server
from load import machine

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.translator import SegmentJob, Translator
from hymt_chat.errors import ModelError
from hymt_chat.settings import Settings
from hymt_chat.text.checks import check_translation
from hymt_chat.text.masking import mask_values
from hymt_chat.text.protect import unmask

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"

# (source, target, message): 16 pairs x 4, rich in amounts, dates, times, weekdays, orders.
MESSAGES: list[tuple[str, str, str]] = [
    ("en", "ja", "Your parcel will be delivered on 12 March between 9:00 and 11:00."),
    ("en", "ja", "The refund of $45.90 was sent on Friday."),
    ("en", "ja", "Order JD123456789 ships on 3 April."),
    ("en", "ja", "Our hotline is open Monday to Friday, 8:00 to 18:00."),
    ("zh", "en", "退款金额为 259 元，3 个工作日内到账。"),
    ("zh", "en", "您的订单 JD987654321 将于 3月12日 送达。"),
    ("zh", "en", "快递员会在星期五下午3点上门。"),
    ("zh", "en", "本次优惠 15%，有效期至 6月30日。"),
    ("en", "zh", "Your refund of €120.50 will arrive within 5 business days."),
    ("en", "zh", "The courier will come on Tuesday at 14:30."),
    ("en", "zh", "Order ORD-2024-001 was shipped on 2 May."),
    ("en", "zh", "You get a 20% discount until 31 December."),
    ("de", "es", "Das Paket kommt am Freitag zwischen 9:00 und 12:00 Uhr."),
    ("de", "es", "Der Betrag von 1.234,50 € wurde am 15. März erstattet."),
    ("de", "es", "Ihre Bestellung 4711-2024-88 wird in 3 Werktagen geliefert."),
    ("de", "es", "Die Rücksendung ist bis zum 30. April kostenlos."),
    ("en", "fr", "Your order will arrive on Thursday, 7 November."),
    ("en", "fr", "We refunded £89.99 to your card on 2 June."),
    ("en", "fr", "Please call us before 17:00 on Monday."),
    ("en", "fr", "Tracking number 1Z999AA10123456784 shows a delay of 2 days."),
    ("es", "en", "El pedido llegará el martes 14 de mayo."),
    ("es", "en", "Le devolvimos 59,90 € el 3 de junio."),
    ("es", "en", "La tienda abre a las 10:00 y cierra a las 21:00."),
    ("es", "en", "Su número de pedido es MX-558812 y llegará en 4 días."),
    ("ru", "en", "Посылка будет доставлена 12 марта с 9:00 до 11:00."),
    ("ru", "en", "Мы вернули 1 500 ₽ на вашу карту в пятницу."),
    ("ru", "en", "Заказ 77123456 будет у вас через 3 рабочих дня."),
    ("ru", "en", "Скидка 10% действует до 1 сентября."),
    ("en", "ru", "Your parcel arrives on Wednesday at 10:00."),
    ("en", "ru", "The refund of $250 was approved on 5 October."),
    ("en", "ru", "Order JD555000111 will be delivered in 2 weeks."),
    ("en", "ru", "Support is available from 9:00 to 21:00 every day."),
    ("fr", "en", "Votre colis sera livré le 12 mars entre 9 h et 12 h."),
    ("fr", "en", "Nous vous avons remboursé 49,99 € le lundi 4 mars."),
    ("fr", "en", "La commande FR-2024-7781 arrive dans 5 jours ouvrés."),
    ("fr", "en", "Une remise de 25 % s'applique jusqu'au 15 janvier."),
    ("en", "ko", "Your order will arrive on Saturday, 9 March."),
    ("en", "ko", "We refunded $30 on 11 April."),
    ("en", "ko", "The technician comes at 15:00 on Thursday."),
    ("en", "ko", "Order KR-100200300 ships within 3 days."),
    ("ja", "en", "ご注文は3月12日の午前9時にお届けします。"),
    ("ja", "en", "返金額は2,500円です。"),
    ("ja", "en", "金曜日までにご返送ください。"),
    ("ja", "en", "注文番号 JP-778899 は3日以内に発送されます。"),
    ("en", "es", "Your package will be delivered on Sunday, 20 October."),
    ("en", "es", "The total is $1,299.00 including tax."),
    ("en", "es", "Your appointment is on 8 February at 16:45."),
    ("en", "es", "Order US-4455667 has a 30% discount."),
    ("en", "de", "Your parcel arrives on Friday, 12 March."),
    ("en", "de", "We refunded $1,234.50 on 2 January."),
    ("en", "de", "The store closes at 20:00 on Saturday."),
    ("en", "de", "Order 880055512 will arrive in 3 business days."),
    ("en", "ar", "Your order will arrive on Monday, 5 May."),
    ("en", "ar", "The refund of $75 was sent on 9 June."),
    ("en", "ar", "Delivery is between 9:00 and 13:00."),
    ("en", "ar", "Order AE-2024-551 ships in 2 days."),
    ("en", "hi", "Your order will arrive on Tuesday, 10 September."),
    ("en", "hi", "We refunded ₹1,500 on 4 July."),
    ("en", "hi", "The courier comes at 11:00 on Wednesday."),
    ("en", "hi", "Order IN-99887766 ships within 5 days."),
    ("zh", "ja", "退款金额为 259 元。"),
    ("zh", "ja", "3 个工作日内到账。"),
    ("zh", "ja", "包裹将于 12月3日 星期四 送达。"),
    ("zh", "ja", "客服时间为上午9点到下午6点。"),
]
VALUE_KINDS = ("amount", "date", "time", "weekday", "duration", "percent", "number", "order")
CONFIGS: dict[str, str | None] = {  # name -> HYMT_MASK_KINDS (None: masking off)
    "plain": None,
    "amount": "amount",
    "amount,date": "amount,date",
    "all": "amount,date,time,percent,number",
}


async def run_config(settings: Settings, show_clean: bool) -> list[dict[str, object]]:
    """Every message through the real Translator with these settings; answers and findings.

    A recording segment translator (the Translator's own, plus a note of each call) keeps
    every model answer, so the first answer's findings are known as well as the final ones.
    """
    client = ModelClient(settings)
    translator = Translator(settings, client, Policy(window_max=4))
    gate = asyncio.Semaphore(4)
    rows: list[dict[str, object]] = []

    async def one(source: str, target: str, text: str) -> None:
        calls: list[str] = []

        async def recorded(job: SegmentJob) -> str:
            answer = await translator.translate_segment(job)
            calls.append(answer)
            return answer

        async with gate:
            started = time.monotonic()
            try:
                result = await translator.translate(text, target, source, user=text,
                                                    segment_translator=recorded)
            except ModelError as err:
                rows.append({"source": source, "target": target, "text": text,
                             "error": str(err)})
                return
        masked = (mask_values(text, source, target, settings.masked_kinds)
                  if settings.mask_values else None)
        first = (unmask(calls[0], masked).text if masked and masked.spans else calls[0]
                 ) if calls else result.text
        rows.append({
            "source": source, "target": target, "text": text,
            "first": first, "first_findings": [[f.kind, f.message] for f in
                                               check_translation(text, first, source, target)],
            "answer": result.text, "findings": [[f.kind, f.message] for f in result.warnings],
            "calls": len(calls), "seconds": round(time.monotonic() - started, 1),
        })
        if show_clean and not result.warnings:
            print(f"  clean {source}->{target}: {text}  =>  {result.text}", flush=True)

    await asyncio.gather(*(one(*m) for m in MESSAGES))
    await client.aclose()
    order = {m[2]: i for i, m in enumerate(MESSAGES)}
    rows.sort(key=lambda r: order[str(r["text"])])
    return rows


def _kinds(rows: list[dict[str, object]], field: str) -> Counter[str]:
    return Counter(kind for r in rows for kind, _ in r.get(field, []))  # type: ignore[union-attr]


def _value_defects(counts: Counter[str]) -> int:
    return sum(counts[k] for k in VALUE_KINDS)


def _messages_with(rows: list[dict[str, object]], field: str) -> int:
    return sum(1 for r in rows
               if any(kind in VALUE_KINDS for kind, _ in r.get(field, [])))  # type: ignore[union-attr]


def report(out: dict[str, list[dict[str, object]]]) -> str:
    """Findings per kind: the first answer and the final one of each configuration."""
    columns: list[tuple[str, list[dict[str, object]], str]] = []
    for name, rows in out.items():
        label = "no masking" if CONFIGS.get(name) is None else f"mask {name}"
        columns += [(f"{label}, first answer", rows, "first_findings"),
                    (f"{label} + repair", rows, "findings")]
    counts = [_kinds(rows, field) for _, rows, field in columns]
    kinds = sorted({k for c in counts for k in c})
    lines = ["| kind | " + " | ".join(name for name, _, _ in columns) + " |",
             "|---|" + "---:|" * len(columns)]
    for kind in kinds:
        lines.append(f"| {kind} | " + " | ".join(str(c[kind]) for c in counts) + " |")
    lines.append("| **value defects** | " + " | ".join(str(_value_defects(c)) for c in counts)
                 + " |")
    lines.append("| messages with one | " + " | ".join(
        f"{_messages_with(rows, field)}/{len(rows)}" for _, rows, field in columns) + " |")
    lines.append("| model calls | " + " | ".join(
        str(len(rows)) if field == "first_findings" else
        str(sum(int(r.get("calls", 0)) for r in rows))  # type: ignore[arg-type]
        for _, rows, field in columns) + " |")
    text = "\n".join(lines)
    if "plain" in out:
        before = _value_defects(_kinds(out["plain"], "first_findings"))
        for name, rows in out.items():
            after = _value_defects(_kinds(rows, "findings"))
            share = (before - after) / before if before else 0.0
            text += (f"\n\n{name}: value defects {before} before (no masking, first answer), "
                     f"{after} after — repaired or prevented {share:.0%}; every one left is "
                     "flagged.")
    print(text)
    head = (f"# Checks and repair on the demo model\n\n`{' '.join(['.venv/bin/python', *sys.argv])}`"
            f", {datetime.date.today().isoformat()} — {machine()}.\n\n")
    (RESULTS / "fidelity.md").write_text(head + text + "\n")
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=tuple(CONFIGS), action="append")
    parser.add_argument("--repeat", type=int, default=1, help="runs of every configuration")
    parser.add_argument("--show-clean", action="store_true")
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    out: dict[str, list[dict[str, object]]] = {}
    with model_server() as endpoint:
        base = {"base_url": endpoint.base_url, "api_key": endpoint.api_key,
                "model": endpoint.model}
        for _ in range(args.repeat):
            for name, kinds in CONFIGS.items():
                if args.only and name not in args.only:
                    continue
                settings = Settings(**base, mask_values=kinds is not None,  # type: ignore[arg-type]
                                    mask_kinds=kinds or "amount")
                started = time.monotonic()
                out.setdefault(name, []).extend(
                    asyncio.run(run_config(settings, args.show_clean)))
                print(f"{name}: {time.monotonic() - started:.0f} s", flush=True)
    (RESULTS / "fidelity.json").write_text(json.dumps(out, ensure_ascii=False, indent=1))
    report(out)


if __name__ == "__main__":
    main()
