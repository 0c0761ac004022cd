"""Anthropic's Messages API, POST /v1/messages (issue 32 item 7), with the real `anthropic`
client unchanged: replies, streams, system prompts, stop sequences, max_tokens, its error
shape and exceptions, and its x-api-key header."""

from __future__ import annotations

import secrets

import pytest
import yaml

from llm_helpers import add_llm

MODEL = "smollm2"
# Greedy, and each request processes its whole prompt (inferd's cache_prompt, as on the
# OpenAI paths), so equal requests give equal text (a reused prefix may shift the numerics).
# This SDK has no typed temperature (Anthropic's newest models take none): it goes in the
# body as any program would send it, and inferd reads it.
FRESH = {"extra_body": {"temperature": 0, "cache_prompt": False}}


@pytest.fixture(scope="module")
def server_and_key(tmp_path_factory):
    from inferd_harness import InferdServer

    base = tmp_path_factory.mktemp("llm_anthropic")
    key = secrets.token_hex(24)
    key_file = base / "keys.yaml"
    key_file.write_text(yaml.safe_dump(
        {"keys": [{"name": "app", "key": key, "roles": ["inference"]}]}))
    key_file.chmod(0o600)
    repo = base / "repo"
    add_llm(repo, MODEL, parallel=2)
    server = InferdServer(repo, base / "inferd.log", args=["--api-keys-file", str(key_file)],
                          name="llm_anthropic").start()
    yield server, key
    server.stop()


@pytest.fixture()
def client(server_and_key):
    import anthropic

    server, key = server_and_key
    # The SDK sends the key as x-api-key, as it does to Anthropic.
    return anthropic.Anthropic(base_url=server.url, api_key=key, max_retries=0)


HI = [{"role": "user", "content": "Name three colours."}]


def test_a_message(client):
    message = client.messages.create(model=MODEL, max_tokens=12, messages=HI,
                                     metadata={"user_id": "user-1"}, **FRESH)
    assert message.type == "message" and message.role == "assistant"
    assert message.id.startswith("msg_")
    assert message.model == MODEL
    assert len(message.content) == 1 and message.content[0].type == "text"
    assert message.content[0].text.strip()
    assert message.stop_reason in ("end_turn", "max_tokens")
    assert message.usage.input_tokens > 0 and 0 < message.usage.output_tokens <= 12


def test_a_streamed_message_equals_the_whole_one(client):
    whole = client.messages.create(model=MODEL, max_tokens=16, messages=HI, **FRESH)
    with client.messages.stream(model=MODEL, max_tokens=16, messages=HI, **FRESH) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    assert len(pieces) > 1
    assert "".join(pieces) == whole.content[0].text
    assert final.content[0].text == whole.content[0].text
    assert final.stop_reason == whole.stop_reason
    assert final.usage.output_tokens == whole.usage.output_tokens
    assert final.usage.input_tokens == whole.usage.input_tokens > 0


def test_the_system_prompt_reaches_the_model(client):
    def ask(system):
        return client.messages.create(model=MODEL, max_tokens=12, messages=HI,
                                      system=system, **FRESH)

    short = ask("Answer only in French.")
    longer = ask("Answer only in French, and be brief and polite to the user at all times.")
    # (SmolLM2's template adds a system prompt of its own when none is given: compare two.)
    assert longer.usage.input_tokens > short.usage.input_tokens
    as_blocks = ask([{"type": "text", "text": "Answer only in French."}])
    assert as_blocks.usage.input_tokens == short.usage.input_tokens
    assert as_blocks.content[0].text == short.content[0].text


def test_stop_sequences_and_max_tokens_say_why_it_stopped(client):
    counting = [{"role": "user", "content": "Count from 1 to 20, separated by commas."}]
    whole = client.messages.create(model=MODEL, max_tokens=40, messages=counting,
                                   **FRESH).content[0].text
    assert "5" in whole, whole
    stopped = client.messages.create(model=MODEL, max_tokens=40, messages=counting,
                                     stop_sequences=["5"], **FRESH)
    assert stopped.stop_reason == "stop_sequence"
    assert stopped.stop_sequence == "5"
    assert stopped.content[0].text == whole[:whole.index("5")]
    short = client.messages.create(model=MODEL, max_tokens=3, messages=counting, **FRESH)
    assert short.stop_reason == "max_tokens" and short.usage.output_tokens == 3
    with client.messages.stream(model=MODEL, max_tokens=40, messages=counting,
                                stop_sequences=["5"], **FRESH) as stream:
        final = stream.get_final_message()
    assert (final.stop_reason, final.stop_sequence) == ("stop_sequence", "5")


def test_a_missing_max_tokens_is_a_bad_request(client):
    import anthropic

    with pytest.raises(anthropic.BadRequestError) as refused:
        # The SDK requires max_tokens: send the body as a program without the SDK's types would.
        client.post("/v1/messages", body={"model": MODEL, "messages": HI},
                    cast_to=anthropic.types.Message)
    assert refused.value.body["error"]["type"] == "invalid_request_error"
    assert "max_tokens" in refused.value.body["error"]["message"]


def test_an_unknown_model_is_not_found(client):
    import anthropic

    with pytest.raises(anthropic.NotFoundError) as refused:
        client.messages.create(model="no-such-model", max_tokens=4, messages=HI)
    assert refused.value.body["type"] == "error"
    assert refused.value.body["error"]["type"] == "not_found_error"


def test_a_bad_key_is_an_authentication_error(server_and_key):
    import anthropic

    server, _ = server_and_key
    bad = anthropic.Anthropic(base_url=server.url, api_key="not-a-key", max_retries=0)
    with pytest.raises(anthropic.AuthenticationError) as refused:
        bad.messages.create(model=MODEL, max_tokens=4, messages=HI)
    assert refused.value.body["error"]["type"] == "authentication_error"
    # Authorization: Bearer works too.
    response = server.post("/v1/messages", {"model": MODEL, "max_tokens": 2, "messages": HI},
                           headers={"Authorization": f"Bearer {server_and_key[1]}"})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("extra, named", [
    # Custom tools are served (test_llm_tools.py); Anthropic's server tools are not.
    ({"tools": [{"type": "web_search_20250305", "name": "web_search"}]}, "tools[0].type"),
    ({"tools": [{"name": "f", "input_schema": {"type": "object"}, "cache_control": {
        "type": "ephemeral"}}]}, "tools[0].cache_control"),
    ({"thinking": {"type": "enabled", "budget_tokens": 1024}}, "thinking"),
    ({"messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": "AAAA"}}]}]}, "messages[0].content[0].type"),
    ({"output_config": {"effort": "low"}}, "output_config"),
    ({"extra_body": {"temperature": 1.5}}, "temperature"),
])
def test_an_unimplemented_field_is_refused_by_name(client, extra, named):
    import anthropic

    fields = {"model": MODEL, "max_tokens": 4, "messages": HI}
    fields.update(extra)
    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.create(**fields)
    assert refused.value.body["error"]["type"] == "invalid_request_error"
    assert named in refused.value.body["error"]["message"]


def test_the_openai_paths_keep_openais_shape(server_and_key):
    server, key = server_and_key
    refused = server.post("/v1/chat/completions", {"model": "no-such-model", "messages": HI},
                          headers={"Authorization": f"Bearer {key}"})
    assert refused.status_code == 404
    assert refused.json()["error"]["code"] == "model_not_found"


@pytest.mark.parametrize("hostile, named", [
    # Text blocks whose joined prompt is past the server's 1 MiB prompt limit.
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": "x" * 300_000}] * 4}]},
     "prompt"),
    ({"messages": [{"role": "user", "content": "Hi"}] * 5000}, "messages"),
    ({"messages": HI, "metadata": {"user_id": "u" * 300}}, "metadata.user_id"),
    ({"messages": HI, "stop_sequences": ["s"] * 1000}, "stop"),
])
def test_hostile_messages_are_refused_and_the_server_keeps_serving(client, hostile, named):
    import anthropic

    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.create(model=MODEL, max_tokens=4, **hostile)
    assert refused.value.body["type"] == "error"
    assert named in refused.value.body["error"]["message"]
    after = client.messages.create(model=MODEL, max_tokens=4, messages=HI, **FRESH)
    assert after.content[0].text
