"""Sampling controls and "nothing silently ignored" (issue 32), with the real `openai` client:
penalties, min_p and logit_bias change what a greedy model writes; every OpenAI field inferd
does not implement is refused with a 400 naming it (they were accepted and ignored: JSON mode
answered with prose, logprobs with null; both are served now)."""

from __future__ import annotations

import pytest

from llm_helpers import reference_llama

MODEL = "smollm2"
REPEAT = "Repeat after me: hello hello hello hello hello hello"


@pytest.fixture()
def client(llm_server):
    import openai

    return openai.OpenAI(base_url=llm_server.url + "/v1", api_key="unused", max_retries=0)


def _complete(client, prompt: str, **extra) -> str:
    out = client.completions.create(model=MODEL, prompt=prompt, max_tokens=8, temperature=0,
                                    extra_body={"cache_prompt": False}, **extra)
    return out.choices[0].text


def test_penalties_change_a_greedy_continuation(client):
    plain = _complete(client, REPEAT)
    assert plain.count("hello") >= 6, plain  # greedy repeats the word
    # Penalised for each use over the tokens generated so far: the word stops coming back.
    penalised = _complete(client, REPEAT, frequency_penalty=2.0)
    assert penalised.count("hello") < plain.count("hello"), (plain, penalised)
    repeated = client.completions.create(
        model=MODEL, prompt=REPEAT, max_tokens=8, temperature=0,
        extra_body={"cache_prompt": False, "repetition_penalty": 1.8}).choices[0].text
    assert repeated.count("hello") < plain.count("hello"), (plain, repeated)


def test_logit_bias_bans_the_greedy_token(client):
    plain = _complete(client, "1, 2, 3, 4,")
    llm = reference_llama()
    first = llm.tokenize(plain.encode(), add_bos=False, special=False)[0]
    piece = llm.detokenize([first]).decode()
    assert piece and plain.startswith(piece), (plain, piece)
    banned = _complete(client, "1, 2, 3, 4,", logit_bias={str(first): -100})
    assert banned != plain
    assert llm.tokenize(banned.encode(), add_bos=False, special=False)[0] != first, banned


def test_a_logit_bias_token_outside_the_vocabulary_is_refused(client):
    import openai

    with pytest.raises(openai.BadRequestError) as refused:
        _complete(client, "Hi", logit_bias={"99999999": 5})
    assert "vocabulary has tokens 0 to" in str(refused.value)


@pytest.mark.parametrize("field", [
    {"store": True},
    {"user": "end-user-1"},
])
def test_chat_fields_it_does_not_implement_are_refused_by_name(client, field):
    import openai

    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model=MODEL, max_tokens=2,
                                       messages=[{"role": "user", "content": "Hi"}], **field)
    assert any(f"'{named}' is not supported by this server" in str(refused.value)
               for named in field), refused.value


def test_the_clients_neutral_defaults_are_accepted(client):
    reply = client.chat.completions.create(
        model=MODEL, max_tokens=2, messages=[{"role": "user", "content": "Hi"}], logprobs=False,
        response_format={"type": "text"}, tool_choice="none",
        extra_body={"min_p": 0.05, "top_k": 40})
    assert reply.choices[0].message.content is not None
