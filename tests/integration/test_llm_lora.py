"""LoRA adapters on a GGUF chat model (docs/llm.md, LoRA adapters): config.yaml `adapters:`,
"model": "base:adapter" on /v1/chat/completions, /v1/completions and /v1/messages, and
llama.cpp's server's `lora` field. The adapter is written at test time with PyPI `gguf`
(tools/demo_models/chat_lora.py, random weights that change the greedy output).

What is proven, with the real `openai` client and llama.cpp itself as the reference: greedy
output through the adapter differs from the base model's and equals llama-cpp-python's
`Llama(lora_path=...)` (and llama.cpp's own `llama-server --lora` when it is built);
concurrent streams with and without the adapter each get their solo output (a decode step
holds one adapter set); an unknown adapter is a 404, a bad scale a 400; /v1/models lists
`base:adapter`; the adapter's bytes count in the model's memory; a missing adapter file
leaves the base model serving; a tenant allowed the base model may use its adapters."""

from __future__ import annotations

import hashlib
import secrets
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
import yaml

from llama_server_process import llama_server, needs_llama_server
from llm_helpers import SETTINGS, add_llm, smollm2_gguf, sse_events

MODEL = "chat"   # with adapters tone (the test adapter) and gone (a missing file)
PLAIN = "plain"  # the same GGUF without adapters: the memory reference
PROMPTS = ["The capital of France is", "Once upon a time, a small robot"]


def write_adapter(path: Path) -> Path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tools.demo_models import chat_lora

    path.parent.mkdir(parents=True, exist_ok=True)
    return chat_lora.write(smollm2_gguf(), path)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    from inferd_harness import InferdServer

    base = tmp_path_factory.mktemp("lora")
    repo = base / "repo"
    chat = add_llm(repo, MODEL, parallel=4)
    adapter = write_adapter(chat / "1" / "adapters" / "tone.gguf")
    with open(chat / "config.yaml", "a") as config:
        config.write("adapters:\n"
                     "  - {name: tone, path: adapters/tone.gguf}\n"
                     "  - {name: gone, path: adapters/missing.gguf, scale: 0.5}\n")
    add_llm(repo, PLAIN, parallel=4)
    keys = {"carol": secrets.token_hex(24), "dave": secrets.token_hex(24),
            "ops": secrets.token_hex(24)}
    (base / "keys.yaml").write_text(yaml.safe_dump({
        "keys": [
            {"name": "ops", "key": keys["ops"], "roles": ["management", "monitoring"]},
            {"name": "carol-app", "sha256": hashlib.sha256(keys["carol"].encode()).hexdigest(),
             "roles": ["inference"], "tenant": "carol"},
            {"name": "dave-app", "sha256": hashlib.sha256(keys["dave"].encode()).hexdigest(),
             "roles": ["inference"], "tenant": "dave"},
        ],
        "tenants": {"carol": {"models": [MODEL]}, "dave": {"models": [PLAIN]}},
    }))
    (base / "keys.yaml").chmod(0o600)
    server = InferdServer(repo, base / "inferd.log", name="lora_server",
                          args=["--api-keys-file", str(base / "keys.yaml")]).start()
    yield server, adapter, keys
    server.stop()


def client(server, key):
    import openai

    return openai.OpenAI(base_url=server.url + "/v1", api_key=key, max_retries=0, timeout=300)


def complete(openai_client, model, prompt, max_tokens=24, **extra):
    out = openai_client.completions.create(model=model, prompt=prompt, max_tokens=max_tokens,
                                           temperature=0,
                                           extra_body={"cache_prompt": False, **extra})
    return out.choices[0].text


@pytest.fixture(scope="module")
def reference(setup):
    """llama-cpp-python (the same llama.cpp release inferd links) with the adapter."""
    from llama_cpp import Llama

    _, adapter, _ = setup
    return Llama(model_path=str(smollm2_gguf()), lora_path=str(adapter),
                 n_ctx=SETTINGS["context_length"], n_batch=SETTINGS["batch_size"],
                 n_ubatch=SETTINGS["batch_size"], n_threads=SETTINGS["threads"],
                 n_threads_batch=SETTINGS["threads"], flash_attn=False, verbose=False)


def reference_greedy(llm, prompt, max_tokens):
    llm.reset()
    out = llm.create_completion(prompt, max_tokens=max_tokens, temperature=0.0, top_k=1,
                                repeat_penalty=1.0)
    return out["choices"][0]["text"]


def test_the_adapter_changes_greedy_output_exactly_as_llama_cpp_does(setup, reference):
    server, _, keys = setup
    openai_client = client(server, keys["carol"])
    for prompt in PROMPTS:
        base = complete(openai_client, MODEL, prompt)
        adapted = complete(openai_client, f"{MODEL}:tone", prompt)
        assert adapted != base, prompt
        assert adapted == reference_greedy(reference, prompt, 24), prompt
        # The `lora` field (llama.cpp's server's), by name and by id, is the same adapter.
        assert complete(openai_client, MODEL, prompt, lora=[{"name": "tone", "scale": 1.0}]) == \
            adapted
        assert complete(openai_client, MODEL, prompt, lora=[{"id": 0, "scale": 1.0}]) == adapted
        # Scale 0 is the base model.
        assert complete(openai_client, MODEL, prompt, lora=[{"id": 0, "scale": 0}]) == base


def test_chat_and_messages_take_the_adapter(setup):
    import anthropic

    server, _, keys = setup
    messages = [{"role": "user", "content": "Name a colour."}]
    openai_client = client(server, keys["carol"])
    chats = {}
    for model in (MODEL, f"{MODEL}:tone"):
        reply = openai_client.chat.completions.create(model=model, messages=messages,
                                                      max_tokens=16, temperature=0)
        assert reply.model == model
        chats[model] = reply.choices[0].message.content
    assert chats[MODEL] != chats[f"{MODEL}:tone"]
    claude = anthropic.Anthropic(base_url=server.url, api_key=keys["carol"], max_retries=0)
    answer = claude.messages.create(model=f"{MODEL}:tone", max_tokens=16,
                                    messages=messages, extra_body={"temperature": 0})
    assert answer.content[0].text == chats[f"{MODEL}:tone"]


def solo_and_together(server, key, prompts_models):
    def stream(prompt_model):
        prompt, model = prompt_model
        body = {"model": model, "prompt": prompt, "max_tokens": 32, "temperature": 0,
                "stream": True, "cache_prompt": False}
        with requests.post(server.url + "/v1/completions", json=body, stream=True, timeout=300,
                           headers={"Authorization": f"Bearer {key}"}) as response:
            assert response.status_code == 200, response.text
            events = list(sse_events(response))
        return "".join(e["choices"][0]["text"] for e in events[:-1] if e["choices"])

    solo = [stream(pm) for pm in prompts_models]
    with ThreadPoolExecutor(max_workers=len(prompts_models)) as pool:
        together = list(pool.map(stream, prompts_models))
    return solo, together


def test_streams_with_and_without_the_adapter_each_get_their_own_output(setup):
    server, _, keys = setup
    prompt = PROMPTS[1]
    work = [(prompt, MODEL), (prompt, f"{MODEL}:tone"), (prompt, MODEL), (prompt, f"{MODEL}:tone")]
    solo, together = solo_and_together(server, keys["carol"], work)
    assert solo[0] != solo[1]
    assert together == solo


def test_an_unknown_adapter_is_a_404_naming_it(setup):
    import openai

    server, _, keys = setup
    with pytest.raises(openai.NotFoundError) as error:
        complete(client(server, keys["carol"]), f"{MODEL}:nosuch", "Hi", max_tokens=1)
    assert error.value.status_code == 404
    assert f"'{MODEL}:nosuch'" in str(error.value)
    assert "no adapter 'nosuch'" in str(error.value)
    assert error.value.code == "model_not_found"
    response = server.post("/v1/chat/completions",
                           {"model": f"{MODEL}:nosuch", "max_tokens": 1,
                            "messages": [{"role": "user", "content": "Hi"}]},
                           headers={"Authorization": f"Bearer {keys['carol']}"})
    assert response.status_code == 404, response.text
    # An adapter named in `lora` that the model does not have: the field is wrong (400).
    response = server.post("/v1/completions",
                           {"model": MODEL, "prompt": "Hi", "max_tokens": 1,
                            "lora": [{"name": "nosuch", "scale": 1}]},
                           headers={"Authorization": f"Bearer {keys['carol']}"})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == "lora"


@pytest.mark.parametrize("lora", [
    [{"id": 0, "scale": 4.5}], [{"id": 0, "scale": -100}], [{"id": 0, "scale": "1"}],
    [{"id": 0}], [{"id": 0, "name": "tone", "scale": 1}], [{"id": 64, "scale": 1}],
    [{"id": 1, "scale": 1}], [{"id": 0, "scale": 1, "alpha": 2}], {"id": 0},
    [{"id": 0, "scale": 1}, {"name": "tone", "scale": 1}], [{"id": 0, "scale": 1e300}],
])
def test_a_bad_lora_field_is_a_400_naming_it(setup, lora):
    server, _, keys = setup
    response = server.post("/v1/completions",
                           {"model": MODEL, "prompt": "Hi", "max_tokens": 1, "lora": lora},
                           headers={"Authorization": f"Bearer {keys['carol']}"})
    if lora == [{"id": 1, "scale": 1}]:
        # id 1 is `gone`, whose file is missing: unavailable, not malformed.
        assert response.status_code == 503, response.text
        return
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == "lora"


def test_an_adapter_in_the_model_and_in_lora_at_once_is_a_400(setup):
    server, _, keys = setup
    both = server.post("/v1/completions",
                       {"model": f"{MODEL}:tone", "prompt": "Hi", "max_tokens": 1,
                        "lora": [{"id": 0, "scale": 1}]},
                       headers={"Authorization": f"Bearer {keys['carol']}"})
    assert both.status_code == 400 and both.json()["error"]["param"] == "lora", both.text


def test_models_lists_base_colon_adapter(setup):
    server, _, keys = setup
    ids = [m.id for m in client(server, keys["carol"]).models.list()]
    assert {MODEL, f"{MODEL}:tone", f"{MODEL}:gone", PLAIN} <= set(ids)
    assert f"{PLAIN}:tone" not in ids


def test_the_adapter_bytes_count_in_the_models_memory(setup):
    server, adapter, keys = setup
    stats = server.get("/v2/repository/stats", headers={"Authorization": f"Bearer {keys['ops']}"})
    assert stats.status_code == 200, stats.text
    rows = {row["name"]: row for row in stats.json()["versions"]}
    assert rows[MODEL]["memory_bytes"] - rows[PLAIN]["memory_bytes"] == adapter.stat().st_size


def test_a_missing_adapter_file_leaves_the_base_model_serving(setup):
    server, _, keys = setup
    response = server.post("/v1/completions",
                           {"model": f"{MODEL}:gone", "prompt": "Hi", "max_tokens": 1},
                           headers={"Authorization": f"Bearer {keys['carol']}"})
    assert response.status_code == 503, response.text
    message = response.json()["error"]["message"]
    assert "adapters/missing.gguf" in message and "'gone'" in message
    assert complete(client(server, keys["carol"]), MODEL, "Hi", max_tokens=2)
    assert "adapters/missing.gguf" in server.log()


def test_a_tenant_allowed_the_base_model_may_use_its_adapters(setup):
    import openai

    server, _, keys = setup
    assert complete(client(server, keys["carol"]), f"{MODEL}:tone", "Hi", max_tokens=2)
    with pytest.raises(openai.PermissionDeniedError) as error:
        complete(client(server, keys["dave"]), f"{MODEL}:tone", "Hi", max_tokens=2)
    assert f"may not use model '{MODEL}'" in str(error.value)
    assert complete(client(server, keys["dave"]), PLAIN, "Hi", max_tokens=2)


@needs_llama_server
def test_greedy_output_equals_llama_servers_with_lora(setup, tmp_path):
    server, adapter, keys = setup
    args = ["-m", str(smollm2_gguf()), "--lora", str(adapter),
            "-c", str(SETTINGS["context_length"]), "-np", "1",
            "-t", str(SETTINGS["threads"]), "-tb", str(SETTINGS["threads"]),
            "-b", str(SETTINGS["batch_size"]), "-ub", str(SETTINGS["batch_size"]), "-fa", "off"]
    with llama_server(args, tmp_path / "llama-server.log") as url:
        openai_client = client(server, keys["carol"])
        for prompt in PROMPTS:
            theirs = requests.post(url + "/completion",
                                   json={"prompt": prompt, "n_predict": 24, "temperature": 0,
                                         "cache_prompt": False}, timeout=300).json()["content"]
            assert complete(openai_client, f"{MODEL}:tone", prompt) == theirs, prompt

