"""Build a tiny, randomly initialised ``HunYuanDenseV1ForCausalLM`` for serving tests.

Run with the SIDECAR's interpreter (it needs torch + transformers)::

    python tests/support/tiny_hunyuan.py OUT_DIR TOKENIZER_DIR

It has the production architecture (so vLLM loads it through the same code path as
Hunyuan-MT-7B), served with the production flags; its output is noise. The tokenizer (and its
chat template) is copied from ``TOKENIZER_DIR`` -- the converted Qwen demo model folder.

Idempotent: a ``.complete`` marker holds a fingerprint of the parameters; a folder whose
marker matches is left alone (a build takes a few seconds anyway).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

MARKER_NAME = ".complete"
SEED = 1234
HEAD_DIM = 64
SAVE_DTYPE = "bfloat16"


def _config_kwargs(vocab_size: int, head_dim: int, bos: int | None, eos: int | list[int],
                   pad: int | None) -> dict:
    return {
        "vocab_size": vocab_size,
        "hidden_size": 256,
        "intermediate_size": 512,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": head_dim,
        "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-5,
        "tie_word_embeddings": True,
        "bos_token_id": bos,
        "eos_token_id": eos,
        "pad_token_id": pad,
        "eod_token_id": eos if isinstance(eos, int) else eos[0],
    }


_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja",
                    "special_tokens_map.json", "vocab.json", "merges.txt")


def _fingerprint(tokenizer_dir: Path, head_dim: int) -> str:
    """Parameters + identity of the tokenizer files; computed without importing torch."""
    files = {}
    for name in _TOKENIZER_FILES:
        path = tokenizer_dir / name
        if path.is_file():
            st = path.stat()
            files[name] = [st.st_size, st.st_mtime_ns]
    blob = json.dumps({"config": _config_kwargs(0, head_dim, None, 0, None), "seed": SEED,
                       "dtype": SAVE_DTYPE,
                       "tokenizer": str(tokenizer_dir.resolve()), "files": files},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def build_tiny_hunyuan(out_dir: Path, tokenizer_dir: Path) -> Path:
    """Build (or reuse) the tiny model in ``out_dir``; return ``out_dir``."""
    out_dir = Path(out_dir)
    tokenizer_dir = Path(tokenizer_dir)
    head_dim = HEAD_DIM
    fingerprint = _fingerprint(tokenizer_dir, head_dim)
    marker = out_dir / MARKER_NAME
    if marker.is_file() and marker.read_text(encoding="utf-8").strip() == fingerprint:
        print(f"[tiny-hunyuan] already built: {out_dir}", flush=True)
        return out_dir

    import torch
    from transformers import (
        AutoTokenizer,
        GenerationConfig,
        HunYuanDenseV1Config,
        HunYuanDenseV1ForCausalLM,
    )

    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    if not getattr(tokenizer, "chat_template", None):
        raise SystemExit(f"The tokenizer in {tokenizer_dir} has no chat template.")

    eos_ids: list[int] = []
    for tok in (tokenizer.eos_token, "<|im_end|>", "<|endoftext|>"):
        tid = tokenizer.convert_tokens_to_ids(tok) if tok else None
        if isinstance(tid, int) and tid != tokenizer.unk_token_id and tid not in eos_ids:
            eos_ids.append(tid)
    kwargs = _config_kwargs(
        vocab_size=len(tokenizer),
        head_dim=head_dim,
        bos=tokenizer.bos_token_id,
        eos=eos_ids[0] if len(eos_ids) == 1 else eos_ids,
        pad=tokenizer.pad_token_id,
    )

    torch.manual_seed(SEED)
    config = HunYuanDenseV1Config(**kwargs)
    model = HunYuanDenseV1ForCausalLM(config).eval()
    n_params = sum(p.numel() for p in model.parameters())
    model = model.to(getattr(torch, SAVE_DTYPE))  # half the disk; the server casts (float32)
    gen = GenerationConfig(
        bos_token_id=kwargs["bos_token_id"], eos_token_id=kwargs["eos_token_id"],
        pad_token_id=kwargs["pad_token_id"],
    )

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_dir.with_name(f".{out_dir.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        model.save_pretrained(tmp, safe_serialization=True)
        gen.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        for path in tmp.rglob("*"):
            path.chmod(0o644 if path.is_file() else 0o755)
        (tmp / MARKER_NAME).write_text(fingerprint + "\n", encoding="utf-8")
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(tmp, out_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"[tiny-hunyuan] built {out_dir} ({n_params / 1e6:.1f} M parameters, "
          f"head_dim {kwargs['head_dim']})", flush=True)
    return out_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("tokenizer_dir", type=Path,
                        help="folder with the Qwen tokenizer (the converted demo model)")
    args = parser.parse_args(argv)
    build_tiny_hunyuan(args.out_dir, args.tokenizer_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
