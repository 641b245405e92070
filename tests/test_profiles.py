import pytest

from hymt_chat.errors import SidecarError
from hymt_chat.sidecar.launch import auto_profile
from hymt_chat.sidecar.profiles import (
    PROFILES,
    build_launch,
    cpu_dtype,
    get_profile,
    is_fp8_checkpoint,
    merge_flags,
    parse_flags,
)

A10_REQUIRED = {
    "--dtype": "bfloat16",
    "--max-model-len": "4096",
    "--gpu-memory-utilization": "0.92",
    "--max-num-seqs": "16",
    "--max-num-batched-tokens": "2048",
}


def _launch(profile: str, **kw):
    defaults = dict(python="/py", model="/models/m", served_name="hymt", host="127.0.0.1",
                    port=8021, api_key="k", cpu_flags={"avx2"})
    return build_launch(get_profile(profile), **{**defaults, **kw})


def test_a10_has_the_safe_flags_and_an_admission_cap():
    flags = dict(PROFILES["a10"].flags)
    for name, value in A10_REQUIRED.items():
        assert flags[name] == value, name
    assert int(flags["--max-num-queued-reqs"]) > int(flags["--max-num-seqs"])


def test_l4_is_the_a10_profile():
    assert get_profile("L4") is PROFILES["a10"]


@pytest.mark.parametrize("name", ["a100-40g", "a100-80g", "h100", "h200"])
def test_large_gpus_batch_more_cache_prefixes_and_use_cuda_graphs(name):
    flags = dict(PROFILES[name].flags)
    assert int(flags["--max-num-seqs"]) > 2
    assert "--enable-prefix-caching" in flags
    assert "--enforce-eager" not in flags
    assert "--max-num-queued-reqs" in flags
    assert PROFILES[name].why  # the reasoning is written next to the values


def test_larger_cards_never_get_smaller_batches():
    seqs = [int(dict(PROFILES[n].flags)["--max-num-seqs"]) for n in
            ("a10", "a100-40g", "a100-80g", "h100", "h200")]
    assert seqs == sorted(seqs)


@pytest.mark.parametrize(("flags", "dtype"), [
    ({"avx2", "fma"}, "float32"),
    ({"avx512f", "avx512_bf16"}, "bfloat16"),
    ({"amx_bf16", "amx_tile"}, "bfloat16"),
    (set(), "float32"),
])
def test_cpu_dtype_follows_cpu_flags(flags, dtype):
    assert cpu_dtype(flags) == dtype
    argv = _launch("cpu", cpu_flags=flags).argv
    assert argv[argv.index("--dtype") + 1] == dtype


def test_cpu_profile_sets_kv_cache_space_and_eager_mode():
    spec = _launch("cpu")
    assert spec.env["VLLM_CPU_KVCACHE_SPACE"] == "2"
    assert "--enforce-eager" in spec.argv
    assert spec.shell_line().startswith("VLLM_CPU_KVCACHE_SPACE=2 /py -m vllm.entrypoints.openai.api_server ")



def test_an_operators_kv_cache_size_is_not_undone_by_the_profiles_variable():
    # vLLM's CPU platform sets kv_cache_memory_bytes from VLLM_CPU_KVCACHE_SPACE after parsing
    # the flags (vllm/platforms/cpu.py, "Legacy setting"): with both, the variable would win.
    spec = _launch("cpu", overrides="--kv-cache-memory-bytes 512M")
    assert "VLLM_CPU_KVCACHE_SPACE" not in spec.env
    assert spec.argv[spec.argv.index("--kv-cache-memory-bytes") + 1] == "512M"


def test_fp8_checkpoint_gets_fp8_kv_cache():
    assert is_fp8_checkpoint("tencent/Hunyuan-MT-7B-fp8")
    argv = _launch("a10", model="tencent/Hunyuan-MT-7B-fp8").argv
    assert argv[argv.index("--kv-cache-dtype") + 1] == "fp8"
    assert "--kv-cache-dtype" not in _launch("a10", model="tencent/Hunyuan-MT-7B").argv


def test_overrides_replace_in_place_append_and_negate():
    argv = _launch("a10", overrides="--max-num-seqs 4 --seed=7 --no-enforce-eager").argv
    assert argv[argv.index("--max-num-seqs") + 1] == "4"
    assert argv.count("--max-num-seqs") == 1
    assert argv[argv.index("--seed") + 1] == "7"
    assert "--enforce-eager" not in argv


def test_parse_and_merge_flags():
    assert parse_flags("--a 1 --b --c=2") == (("--a", "1"), ("--b", None), ("--c", "2"))
    assert merge_flags((("--a", "1"),), (("--a", "2"), ("--x", None))) == (
        ("--a", "2"), ("--x", None))
    with pytest.raises(SidecarError):
        parse_flags("stray --a 1")


def test_unknown_profile_lists_the_valid_ones():
    with pytest.raises(SidecarError, match="a10.*cpu"):
        get_profile("rtx9090")


@pytest.mark.parametrize(("gib", "name"), [
    (None, "cpu"), (22.5, "a10"), (24, "a10"), (40, "a100-40g"), (80, "h100"), (141, "h200"),
])
def test_auto_profile_picks_by_gpu_memory(gib, name):
    assert auto_profile(gib) == name
