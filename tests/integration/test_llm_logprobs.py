"""OpenAI's logprobs (issue 32), with the real `openai` client on the demo chat model: each
generated token's log-probability and its likeliest alternatives, in the chat and the
completions shapes, streamed too; the values are llama.cpp's own (llama-cpp-python's
`logprobs` on the same file)."""

from __future__ import annotations

import math

import pytest

from llm_helpers import SETTINGS, smollm2_gguf

MODEL = "smollm2"
PROMPT = "The capital of France is"


@pytest.fixture()
def client(llm_server):
    import openai

    return openai.OpenAI(base_url=llm_server.url + "/v1", api_key="unused", max_retries=0)


def test_chat_logprobs_cover_every_token_and_greedy_picks_the_likeliest(client):
    reply = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "Name three colours."}],
        max_tokens=12, temperature=0, logprobs=True, top_logprobs=3)
    choice = reply.choices[0]
    assert choice.finish_reason == "length"
    content = choice.logprobs.content
    assert len(content) == reply.usage.completion_tokens == 12
    assert "".join(t.token for t in content) == choice.message.content
    for token in content:
        assert token.bytes == list(token.token.encode())
        assert token.logprob <= 0
        alternatives = token.top_logprobs
        assert len(alternatives) == 3
        assert [a.logprob for a in alternatives] == sorted((a.logprob for a in alternatives),
                                                           reverse=True)
        assert sum(math.exp(a.logprob) for a in alternatives) <= 1 + 1e-6
        # Greedy: the sampled token is the likeliest one.
        assert alternatives[0].token == token.token
        assert alternatives[0].logprob == pytest.approx(token.logprob, abs=1e-6)


def test_completion_logprobs_are_llama_cpps_own(client):
    reply = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=6, temperature=0,
                                      logprobs=2, extra_body={"cache_prompt": False})
    got = reply.choices[0].logprobs
    from llama_cpp import Llama

    # As llm_helpers.reference_llama, keeping every position's logits (what its logprobs need).
    llm = Llama(model_path=str(smollm2_gguf()), n_ctx=SETTINGS["context_length"],
                n_batch=SETTINGS["batch_size"], n_ubatch=SETTINGS["batch_size"],
                n_threads=SETTINGS["threads"], n_threads_batch=SETTINGS["threads"],
                flash_attn=False, verbose=False, logits_all=True)
    want = llm.create_completion(PROMPT, max_tokens=6, temperature=0.0, top_k=1,
                                 repeat_penalty=1.0, logprobs=2)["choices"][0]
    assert reply.choices[0].text == want["text"]
    assert got.tokens == want["logprobs"]["tokens"]
    for mine, theirs in zip(got.token_logprobs, want["logprobs"]["token_logprobs"]):
        assert mine == pytest.approx(theirs, abs=2e-3), (got.token_logprobs,
                                                          want["logprobs"]["token_logprobs"])
    for mine, theirs in zip(got.top_logprobs, want["logprobs"]["top_logprobs"]):
        assert set(mine) == set(theirs), (mine, theirs)
        for token, logprob in theirs.items():
            assert mine[token] == pytest.approx(logprob, abs=2e-3), (mine, theirs)
    offsets = got.text_offset
    assert offsets[0] == 0
    assert all(b - a == len(t.encode()) for a, b, t in zip(offsets, offsets[1:], got.tokens))


def test_streamed_logprobs_arrive_with_the_text_they_belong_to(client):
    stream = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "Count to five."}], max_tokens=10,
        temperature=0, logprobs=True, top_logprobs=1, stream=True,
        stream_options={"include_usage": True})
    text, tokens, usage = "", [], None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            if choice.logprobs is not None and choice.logprobs.content:
                tokens.extend(choice.logprobs.content)
    assert usage is not None and len(tokens) == usage.completion_tokens == 10
    assert "".join(t.token for t in tokens) == text
    assert all(len(t.top_logprobs) == 1 for t in tokens)


def test_without_logprobs_the_field_is_null(client):
    reply = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "Hi"}], max_tokens=2)
    assert reply.choices[0].logprobs is None


@pytest.mark.parametrize("fields, message", [
    ({"top_logprobs": 2}, "'top_logprobs' needs 'logprobs': true"),
    ({"logprobs": True, "top_logprobs": 21}, "'top_logprobs' must be in 0..20"),
])
def test_bad_logprobs_fields_are_refused_naming_them(client, fields, message):
    import openai

    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model=MODEL, max_tokens=2,
                                       messages=[{"role": "user", "content": "Hi"}], **fields)
    assert message in str(refused.value)
