"""Profiles per model size, and `serve-model --model tencent/Hy-MT2-7B` picking family and sampling."""

from __future__ import annotations

import json

import pytest

from hymt_chat.errors import SidecarError
from hymt_chat.sidecar.profiles import PROFILES, build_launch, model_size, parse_flags
from tests.test_serve_model_cli import parse_line, run


def _flags(profile: str, model: str) -> dict[str, str | None]:
    spec = build_launch(PROFILES[profile], python="python3", model=model, served_name="hymt",
                        host="127.0.0.1", port=8000, api_key=None)
    return dict(parse_flags(spec.argv[3:]))


@pytest.mark.parametrize(("model", "size"), [
    ("tencent/HY-MT1.5-1.8B-FP8", "1.8b"), ("/m/Hy-MT2-30B-A3B/", "30b-a3b"),
    ("tencent/Hunyuan-MT-7B", "7b"), ("/models/qwen2.5-coder-0.5b-instruct", None),
])
def test_the_size_is_read_from_the_models_name(model, size):
    assert model_size(model) == size


def test_a_7b_keeps_every_profile_as_it_is():
    for name, profile in PROFILES.items():
        if profile.device == "gpu":
            flags = _flags(name, "tencent/Hy-MT2-7B")
            assert all(flags[f] == v for f, v in profile.flags), name


def test_the_18b_gets_more_sequences_the_full_context_and_cuda_graphs_on_the_a10():
    flags = _flags("a10", "tencent/HY-MT1.5-1.8B")
    assert (flags["--max-num-seqs"], flags["--max-model-len"]) == ("16", "8192")
    assert "--enforce-eager" not in flags
    assert _flags("h100", "tencent/Hy-MT2-1.8B")["--max-num-seqs"] == "64"  # as the 7B


def test_the_30b_a3b_runs_only_on_80_gb_cards_fp8_with_more_sequences():
    assert _flags("h100", "tencent/Hy-MT2-30B-A3B")["--max-num-seqs"] == "8"
    fp8 = _flags("h100", "tencent/Hy-MT2-30B-A3B-FP8")
    assert (fp8["--max-num-seqs"], fp8["--kv-cache-dtype"]) == ("32", "fp8")
    assert _flags("h200", "tencent/Hy-MT2-30B-A3B")["--max-num-seqs"] == "64"
    for small in ("a10", "a100-40g", "cpu"):
        with pytest.raises(SidecarError, match="30B-A3B"):
            _flags(small, "tencent/Hy-MT2-30B-A3B")


def test_gguf_files_are_refused_with_the_way_to_serve_them():
    with pytest.raises(SidecarError, match="llama-server and point HYMT_BASE_URL"):
        _flags("a10", "tencent/Hy-MT2-1.8B-GGUF")


def test_serve_model_picks_the_family_and_passes_its_sampling_to_vllm():
    result = run("serve-model", "--profile", "h100", "--model", "tencent/Hy-MT2-30B-A3B",
                 "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "Hy-MT2 30B-A3B: its official prompts" in result.stderr
    _env, flags = parse_line(result.stdout.strip())
    assert json.loads(flags["--override-generation-config"] or "") == {
        "temperature": 0.7, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0,
        "max_new_tokens": 4096}
    seven = run("serve-model", "--profile", "a10", "--model", "tencent/Hy-MT2-7B", "--dry-run")
    _env, flags = parse_line(seven.stdout.strip())
    assert json.loads(flags["--override-generation-config"] or "")["top_k"] == 20


def test_serve_model_refuses_a_model_too_big_for_the_profile():
    result = run("serve-model", "--profile", "a10", "--model", "tencent/Hy-MT2-30B-A3B",
                 "--dry-run")
    assert result.returncode == 4 and "does not fit a 24 GB card" in result.stderr


def test_the_demo_model_gets_no_generation_config():
    result = run("serve-model", "--profile", "cpu", "--model", "/m/qwen2.5-coder-0.5b-instruct",
                 "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "--override-generation-config" not in result.stdout
