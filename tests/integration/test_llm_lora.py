"""LoRA adapters are not implemented yet (docs/llm.md, section LoRA adapters): every way a
client or a config could ask for one is refused, never half-accepted. A request's `lora`
field (llama.cpp's server's) is a 400 naming it, `"model": "base:adapter"` names no model
(404), and a config's `adapters` is an unknown field, so such a model does not load."""

from __future__ import annotations

import pytest

from llm_helpers import add_llm

MODEL = "chat_only"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from inferd_harness import InferdServer

    repo = tmp_path_factory.mktemp("lora_repo")
    add_llm(repo, MODEL, parallel=1, lazy=True)
    adapted = add_llm(repo, "adapted", parallel=1, lazy=True)
    with open(adapted / "config.yaml", "a") as config:
        config.write("adapters:\n  tone: {file: adapters/tone.gguf, scale: 1.0}\n")
    server = InferdServer(repo, repo.parent / "inferd.log", name="lora_server").start()
    yield server
    server.stop()


def chat(server, **body):
    return server.post("/v1/chat/completions",
                       {"model": MODEL, "messages": [{"role": "user", "content": "hi"}],
                        "max_tokens": 1, **body})


def test_the_lora_field_is_refused_naming_it(server):
    for path in ("/v1/chat/completions", "/v1/completions"):
        body = {"model": MODEL, "lora": [{"id": 0, "scale": 1.0}], "max_tokens": 1}
        body.update({"messages": [{"role": "user", "content": "hi"}]} if "chat" in path
                    else {"prompt": "hi"})
        response = server.post(path, body)
        assert response.status_code == 400, response.text
        assert response.json()["error"]["param"] == "lora"
    # Refused before anything was loaded.
    assert server.get(f"/v2/models/{MODEL}/ready").status_code != 200


def test_base_colon_adapter_names_no_model(server):
    response = chat(server, model=f"{MODEL}:tone")
    assert response.status_code == 404, response.text
    assert f"{MODEL}:tone" in response.json()["error"]["message"]


def test_a_config_with_adapters_is_refused(server):
    response = chat(server, model="adapted")
    assert response.status_code in (404, 503), response.text
    assert "adapters" in response.text
