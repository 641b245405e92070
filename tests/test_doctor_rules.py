"""Each log rule of `hymt-chat doctor` names the cause and the fix, on a realistic excerpt.

The excerpts follow what vLLM, PyTorch, NCCL, Docker and our app print (the vLLM 0.32 messages
are copied from its source; older wordings that operators still meet are kept too).
"""

from __future__ import annotations

import pytest

from hymt_chat.sidecar.doctor import RULES, diagnose_log, log_checks

W = "(EngineCore_DP0 pid=412) ERROR 11-30 10:02:11 [core.py:1512]"  # a vLLM log prefix
A = "(APIServer pid=388) ERROR 11-30 10:02:12 [api_server.py:1043]"

EXCERPTS: dict[str, list[tuple[str, str | None]]] = {
    # rule -> [(log excerpt, a phrase the fix must contain)]
    "cuda_oom": [(f"""{W} EngineCore failed to start.
{W} Traceback (most recent call last):
{W}   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_model_runner.py", line 3121, in _dummy_run
{W} torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU 0 has a total capacity of 22.06 GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process has 20.93 GiB memory in use.
{A} RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {{}}
""", "--profile a10")],
    "gpu_memory_taken": [(f"""{W} Traceback (most recent call last):
{W} ValueError: Free memory on device cuda:0 (9.81/22.06 GiB) on startup is less than desired GPU memory utilization (0.92, 20.30 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.
""", "--gpu-memory-utilization 0.43")],
    "bf16_unsupported": [(f"""{A} Traceback (most recent call last):
{A} ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute capability 7.5. You can use float16 instead by explicitly setting the `dtype` flag in CLI, for example: --dtype=half.
""", "--dtype half")],
    "shm_too_small": [
        (f"""{W} torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5
{W} ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.
{W} Last error:
{W} Error while creating shared memory segment /dev/shm/nccl-vzIpS6 (size 9637888)
""", "--shm-size 1g"),
        (f"{W} RuntimeError: Insufficient space in /dev/shm for the engine's message queue: "
         "288 MiB required, 63 MiB free. Increase /dev/shm (e.g. --shm-size or --ipc=host).\n",
         "shm_size: 1g"),
        ("RuntimeError: unable to write to file </torch_2291_3187329862_0>: No space left on "
         "device (28)\n", "medium Memory"),
        ("hymt-vllm-1  | Bus error (core dumped)\n", "--ipc=host"),
    ],
    "disk_full": [("""Downloading 'model-00003-of-00004.safetensors' to '/root/.cache/huggingface/hub/models--tencent--Hunyuan-MT-7B/blobs/5d1c.incomplete'
OSError: [Errno 28] No space left on device: '/root/.cache/huggingface/hub/models--tencent--Hunyuan-MT-7B/blobs/5d1c.incomplete'
""", "HF_HOME")],
    "max_model_len": [
        # vLLM 0.5-0.8 (V0 engine)
        ("ValueError: The model's max seq len (32768) is larger than the maximum number of "
         "tokens that can be stored in KV cache (22096). Try increasing `gpu_memory_utilization` "
         "or decreasing `max_model_len` when initializing the engine.\n",
         "--max-model-len 22016"),
        # vLLM 0.9+ (V1 engine), with its "models's" typo of some releases
        (f"{W} ValueError: To serve at least one request with the models's max seq len (8192), "
         "(1.00 GiB KV cache is needed, which is larger than the available KV cache memory "
         "(0.48 GiB). Based on the available memory, the estimated maximum model length is "
         "3968. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
         "initializing the engine.\n", "--max-model-len 3840"),
        (f"{W} ValueError: To serve at least one request with the model's max seq len (8192), "
         "(1.00 GiB KV cache is needed, which is larger than the available KV cache memory "
         "(0.01 GiB). Try increasing `gpu_memory_utilization` (which also controls CPU memory "
         "on the CPU backend) or decreasing `max_model_len` when initializing the engine.\n",
         "lower --max-model-len"),
    ],
    "kv_cache_blocks": [(f"""{W} Traceback (most recent call last):
{W} ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine (this flag also controls CPU memory reservation on the CPU backend, despite its name).
""", "--gpu-memory-utilization")],
    "old_driver": [("RuntimeError: The NVIDIA driver on your system is too old (found version "
                    "11040). Please update your GPU driver by downloading and installing a new "
                    "version from the URL: http://www.nvidia.com/Download/index.aspx\n",
                    "535.86.05")],
    "no_gpu_visible": [
        ("Error response from daemon: could not select device driver \"nvidia\" with "
         "capabilities: [[gpu]]\n", "nvidia-ctk"),
        (f"{A} RuntimeError: Failed to infer device type\n", "NVIDIA Container Toolkit"),
    ],
    "fd_limit": [(f"""{A} Exception in ASGI application
{A} OSError: [Errno 24] Too many open files
""", "ulimit -n 65535")],
    "fd_limit_low": [(
        "(APIServer pid=10891) WARNING 11-30 09:16:49 [system_utils.py:255] Found ulimit of "
        "20000 and failed to automatically increase with error current limit exceeds maximum "
        "limit. This can cause fd limit errors like `OSError: [Errno 24] Too many open files`. "
        "Consider increasing with ulimit -n\n", "65535")],
    "connection_refused": [
        ("""httpx.ConnectError: [Errno 111] Connection refused
The above exception was the direct cause of the following exception:
openai.APIConnectionError: Connection error.
""", "service_healthy"),
        ('{"time": "2026-11-30T10:00:01.002+00:00", "level": "WARNING", "logger": '
         '"hymt_chat.engine.policy", "message": "model call gave up", "request_id": "3f2a9c81d0e4", '
         '"error": "unavailable"}\n'
         "hymt-chat: The translation server is still not reachable after 30 s "
         "(http://vllm:8000/v1: connection refused).\n", "http://vllm:8000/v1"),
    ],
    "hub_download": [("huggingface_hub.errors.RepositoryNotFoundError: 401 Client Error. "
                      "(Request ID: Root=1-6744c2a1-1b2c) Repository Not Found for url: "
                      "https://huggingface.co/api/models/tencent/Hunyuan-MT-7b/revision/main.\n",
                      "HYMT_MODEL_PATH")],
    "port_in_use": [("ERROR:    [Errno 98] error while attempting to bind on address "
                     "('0.0.0.0', 8000): address already in use\n", "--port")],
    "torchvision_nms": [("  File \"/work/.venv-vllm/lib/python3.11/site-packages/torchvision/_meta_registrations.py\", line 163, in <module>\n"
                         "    @torch.library.register_fake(\"torchvision::nms\")\n"
                         "RuntimeError: operator torchvision::nms does not exist\n",
                         "pip uninstall -y torchvision torchaudio torchcodec")],
    "cpu_attention": [(
        "(Worker pid=11078) ERROR 11-30 09:26:44 [multiproc_executor.py:1063] RuntimeError: "
        "Unsupported CPU attention configuration: head_dim=16 isa=2 kv_cache_idx=0\n"
        "(EngineCore pid=11009) ERROR 11-30 09:26:44 [core.py:1512] RuntimeError: Worker failed "
        "with error 'Unsupported CPU attention configuration: head_dim=16 isa=2 kv_cache_idx=0', "
        "please check the stack trace above for the root cause\n", "head_dim 16")],
}
CASES = [(rule, text, fix) for rule, items in EXCERPTS.items() for text, fix in items]


def test_every_rule_has_an_excerpt():
    assert set(EXCERPTS) == {rule.name for rule in RULES}


@pytest.mark.parametrize(("rule", "text", "fix"), CASES,
                         ids=[f"{r}-{i}" for r, items in EXCERPTS.items() for i in range(len(items))])
def test_rule_names_cause_and_fix(rule, text, fix):
    findings = diagnose_log(text)
    assert [f.rule for f in findings] == [rule]
    finding = findings[0]
    assert finding.cause and finding.fix
    if fix:
        assert fix in finding.fix
    line = finding.check().line()
    assert line.startswith("✗ " if finding.status == "fail" else "! ")
    assert " — fix: " in line and finding.title in line


def test_findings_come_in_log_order_once_each():
    log = (EXCERPTS["connection_refused"][0][0] + EXCERPTS["cuda_oom"][0][0]
           + EXCERPTS["connection_refused"][0][0])
    findings = diagnose_log(log)
    assert [f.rule for f in findings] == ["connection_refused", "cuda_oom"]
    assert findings[0].line_no == 1


def test_a_real_startup_log_without_failures_is_clean():
    log = """(APIServer pid=10891) INFO 11-30 09:16:49 [api_utils.py:286] non-default args: {'host': '0.0.0.0', 'port': 8000, 'model': 'tencent/Hunyuan-MT-7B', 'max_model_len': 4096}
(APIServer pid=10891) INFO 11-30 09:16:49 [model.py:733] Resolved architecture: HunYuanDenseV1ForCausalLM
(EngineCore_DP0 pid=11009) INFO 11-30 09:18:02 [gpu_worker.py:298] Available KV cache memory: 5.12 GiB
(APIServer pid=10891) INFO:     Application startup complete.
"""
    assert diagnose_log(log) == []
    (check,) = log_checks(log, "vllm.log")
    assert check.status == "ok"


def test_an_unknown_error_is_shown_rather_than_guessed():
    log = f"{W} Traceback (most recent call last):\n{W} KeyError: 'lm_head.weight'\n"
    (check,) = log_checks(log, "vllm.log")
    assert check.status == "warn" and "KeyError: 'lm_head.weight'" in check.detail
