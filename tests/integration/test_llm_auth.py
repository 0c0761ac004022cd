"""Access control on the generation endpoints: the inference role is needed for
/v1/chat/completions, /v1/completions and /v2/models/M/generate; a tenant's model list
applies to the model a request names in its body; a tenant's streamed reply holds and then
frees its in-flight slot as a success."""

from __future__ import annotations

import pytest

from auth_helpers import write_keys
from llm_helpers import add_llm, sse_events

MODEL = "smollm2"
CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2,
        "temperature": 0}


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    from inferd_harness import InferdServer

    base = tmp_path_factory.mktemp("llm_auth")
    keys = write_keys(base)
    repo = base / "repo"
    add_llm(repo, MODEL, parallel=2)
    server = InferdServer(repo, base / "inferd.log", args=["--api-keys-file", str(keys.path)],
                          name="llm_auth").start()
    yield server, keys
    server.stop()


def test_generation_needs_the_inference_role(keyed):
    server, keys = keyed
    assert server.post("/v1/chat/completions", CHAT).status_code == 401
    for key in (keys.watcher, keys.ops):  # monitoring, management: no inference role
        refused = server.post("/v1/chat/completions", CHAT, headers=keys.header(key))
        assert refused.status_code == 403, refused.text
        assert "inference role" in refused.text
        refused = server.post(f"/v2/models/{MODEL}/generate", {"text_input": "Hi"},
                              headers=keys.header(key))
        assert refused.status_code == 403, refused.text
    allowed = server.post("/v1/chat/completions", CHAT, headers=keys.header(keys.app))
    assert allowed.status_code == 200, allowed.text
    assert allowed.json()["usage"]["completion_tokens"] >= 1


def test_a_tenants_model_list_applies_to_the_model_named_in_the_body(keyed):
    server, keys = keyed
    # alice may use only mlp_scorer: the chat model in the body is refused.
    refused = server.post("/v1/chat/completions", CHAT, headers=keys.header(keys.alice))
    assert refused.status_code == 403, refused.text
    assert "tenant 'alice' may not use model 'smollm2'" in refused.json()["error"]["message"]
    refused = server.post(f"/v2/models/{MODEL}/generate_stream", {"text_input": "Hi"},
                          headers=keys.header(keys.alice))
    assert refused.status_code == 403, refused.text


def test_a_tenants_streams_free_their_slot(keyed):
    server, keys = keyed
    for _ in range(3):
        response = server.post("/v1/chat/completions", dict(CHAT, stream=True),
                               headers=keys.header(keys.bob), stream=True)
        assert response.status_code == 200, response.text
        assert list(sse_events(response))[-1] == "[DONE]"
    text = server.get("/metrics", headers=keys.header(keys.ops)).text
    # Each stream's slot was finished as a success when its last event went out (a slot
    # dropped without that would count as cancelled).
    successes = [line for line in text.splitlines()
                 if line.startswith("inferd_tenant_requests_total") and 'tenant="bob"' in line
                 and 'outcome="success"' in line]
    assert successes and float(successes[0].rsplit(" ", 1)[1]) >= 3, successes
