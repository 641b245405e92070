"""What the translator adds to a model call: translator vs a raw HTTP call, same server.

Each sentence is sent both ways, interleaved (raw, translator, raw, ...) so that machine noise
hits both alike; greedy decoding makes both produce the same tokens. Reports the median of the
per-pair ratios translator/raw, and the absolute overhead in milliseconds.

    .venv/bin/python benchmarks/overhead.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import httpx
from _server import model_server

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.prompts import build_prompt, chat_messages
from hymt_chat.engine.translator import Translator
from hymt_chat.settings import Settings
from hymt_chat.text.cleanup import clean_text
from hymt_chat.text.segments import max_tokens_for

SENTENCES = [
    ("fr", "Bonjour, je voudrais réserver une table pour deux personnes ce soir."),
    ("zh", "您好，我的订单号是JD123456789，想查询物流状态。"),
    ("de", "Die Lieferung ist leider zwei Tage zu spät angekommen."),
    ("es", "¿Podría enviarme la factura por correo electrónico, por favor?"),
    ("ru", "Спасибо за быстрый ответ, проблема решена."),
    ("ja", "明日の会議は午後三時からに変更になりました。"),
]


async def main(rounds: int) -> None:
    with model_server() as endpoint:
        settings = Settings(base_url=endpoint.base_url, api_key=endpoint.api_key,
                            model=endpoint.model, temperature=0.0)
        translator = Translator(settings, ModelClient(settings), Policy())
        sampling = translator.client.sampling()
        async with httpx.AsyncClient(timeout=120) as http:
            async def raw(src: str, text: str) -> float:
                prompt = build_prompt(text, src, "en")
                body = {"model": endpoint.model, "messages": chat_messages(prompt),
                        "max_tokens": max_tokens_for(clean_text(text), settings.max_model_len),
                        "temperature": 0.0, "top_p": sampling.top_p, "top_k": sampling.top_k,
                        "repetition_penalty": sampling.repetition_penalty}
                t = time.perf_counter()
                r = await http.post(f"{endpoint.base_url}/chat/completions", json=body,
                                    headers={"Authorization": f"Bearer {endpoint.api_key}"})
                r.raise_for_status()
                return time.perf_counter() - t

            async def ours(text: str) -> float:
                t = time.perf_counter()
                await translator.translate(text, "en")  # auto-detect included
                return time.perf_counter() - t

            for src, text in SENTENCES[:2]:  # warm both paths (connections, caches)
                await raw(src, text)
                await ours(text)
            ratios, diffs = [], []
            for r in range(rounds):
                for i, (src, text) in enumerate(SENTENCES):
                    if (r + i) % 2:
                        a = await raw(src, text)
                        b = await ours(text)
                    else:
                        b = await ours(text)
                        a = await raw(src, text)
                    ratios.append(b / a)
                    diffs.append((b - a) * 1000)
        median = statistics.median(ratios)
        print(f"pairs: {len(ratios)}")
        print(f"median translator/raw ratio: {median:.4f} ({(median - 1) * 100:+.2f}%)")
        print(f"median overhead: {statistics.median(diffs):+.1f} ms per call")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(main(parser.parse_args().rounds))
