"""The field walk (issue 32): every request field of OpenAI's chat and completions APIs, as
the installed `openai` client itself declares them, is either honoured -- sent through the
client, it changes the answer the way OpenAI documents -- or refused with a 400 whose `param`
names it. Nothing is accepted and dropped.

The field lists are read from the client's own request types
(`openai.types.chat.completion_create_params`), not typed here: when a newer `openai` release
adds a field, test_every_field_of_the_client_is_classified fails until the field is
implemented or refused and classified below."""

from __future__ import annotations

import json
from typing import Callable, Dict

import pytest

MODEL = "smollm2"
QUESTION = [{"role": "user", "content": "Write one sentence about the sea."}]
REPEAT = [{"role": "user", "content": "Repeat after me: hello hello hello hello hello hello"}]
TOKENS = 16


@pytest.fixture(scope="module")
def client(llm_server):
    import openai

    return openai.OpenAI(base_url=llm_server.url + "/v1", api_key="unused", max_retries=0)


def _client_fields(module) -> set:
    """The request fields the client accepts: the streaming and non-streaming variants'."""
    return (set(module.CompletionCreateParamsStreaming.__annotations__) |
            set(module.CompletionCreateParamsNonStreaming.__annotations__))


# ---- chat ----------------------------------------------------------------------------------

def chat(client, **fields):
    """A greedy chat request of TOKENS tokens with `fields` on top (they win)."""
    body = dict(model=MODEL, messages=QUESTION, max_tokens=TOKENS, temperature=0,
                extra_body={"cache_prompt": False})
    body.update(fields)
    return client.chat.completions.create(**body)


def text(reply) -> str:
    return reply.choices[0].message.content


def first_token(content: str) -> int:
    from llm_helpers import reference_llama

    return reference_llama().tokenize(content.encode(), add_bos=False, special=False)[0]


def _check_stop(client):
    greedy = text(chat(client))
    words = greedy.split()
    assert len(words) >= 3, greedy
    stop = " " + words[2]
    reply = chat(client, stop=[stop])
    assert text(reply) == greedy[:greedy.index(stop)], (greedy, stop, text(reply))
    assert reply.choices[0].finish_reason == "stop"


def _check_stream(client):
    chunks = list(chat(client, stream=True))
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert streamed == text(chat(client))


def _check_stream_options(client):
    chunks = list(chat(client, stream=True, stream_options={"include_usage": True}))
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
    plain = list(chat(client, stream=True))
    assert all(c.usage is None for c in plain)


def _check_logit_bias(client):
    greedy = text(chat(client))
    banned = first_token(greedy)
    reply = text(chat(client, logit_bias={str(banned): -100}))
    assert first_token(reply) != banned, (greedy, reply)


def _check_penalty(field: str) -> Callable:
    def check(client):
        plain = text(chat(client, messages=REPEAT))
        penalised = text(chat(client, messages=REPEAT, **{field: 2.0}))
        assert penalised != plain, (field, plain)
    return check


def _check_sampling_changes_greedy(client):
    sampled = text(chat(client, temperature=2.0, seed=1))
    assert sampled != text(chat(client)), sampled


def _check_top_p(client):
    # Only the likeliest token is left to draw from: what a temperature of 2 would scatter
    # is greedy again.
    assert text(chat(client, temperature=2.0, seed=1, top_p=1e-9)) == text(chat(client))


def _check_seed(client):
    one = text(chat(client, temperature=2.0, seed=1))
    assert text(chat(client, temperature=2.0, seed=1)) == one
    assert text(chat(client, temperature=2.0, seed=2)) != one


def _check_logprobs(client):
    reply = chat(client, logprobs=True)
    content = reply.choices[0].logprobs.content
    assert content and "".join(t.token for t in content) == text(reply)
    assert text(chat(client, logprobs=False)) == text(reply)


def _check_top_logprobs(client):
    content = chat(client, logprobs=True, top_logprobs=3).choices[0].logprobs.content
    assert content and all(len(t.top_logprobs) == 3 for t in content)


def _check_response_format(client):
    schema = {"type": "object", "properties": {"sea": {"type": "string", "maxLength": 20}},
              "required": ["sea"], "additionalProperties": False}
    reply = chat(client, max_tokens=64, response_format={
        "type": "json_schema", "json_schema": {"name": "sea", "schema": schema}})
    assert reply.choices[0].finish_reason == "stop"
    assert set(json.loads(text(reply))) == {"sea"}


def _check_max_tokens(field: str) -> Callable:
    def check(client):
        reply = chat(client, **{"max_tokens": None, field: 1})
        assert reply.usage.completion_tokens == 1
        assert reply.choices[0].finish_reason == "length"
    return check


def _check_messages(client):
    other = [{"role": "user", "content": "Name three colours."}]
    assert text(chat(client, messages=other)) != text(chat(client))


def _check_model(client):
    import openai

    assert chat(client).model == MODEL
    with pytest.raises(openai.NotFoundError):
        chat(client, model="no-such-model")


def _check_n(client):
    reply = chat(client, n=2, temperature=1.0, seed=3)
    assert [c.index for c in reply.choices] == [0, 1]


WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 20}},
                   "required": ["city"], "additionalProperties": False}}}
TIME = {"type": "function", "function": {
    "name": "get_time", "description": "The time in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 20}},
                   "required": ["city"], "additionalProperties": False}}}
WEATHER_QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]


def _calls(reply) -> list:
    assert reply.choices[0].finish_reason == "tool_calls", reply
    calls = reply.choices[0].message.tool_calls
    for call in calls:
        assert set(json.loads(call.function.arguments)) == {"city"}, call
    return calls


def _check_tools(client):
    reply = chat(client, messages=WEATHER_QUESTION, max_tokens=64, tools=[WEATHER],
                 tool_choice="required")
    assert {c.function.name for c in _calls(reply)} == {"get_weather"}
    assert chat(client, tools=[]).choices[0].message.content == text(chat(client))


def _check_tool_choice(client):
    named = chat(client, messages=WEATHER_QUESTION, max_tokens=64, tools=[WEATHER, TIME],
                 tool_choice={"type": "function", "function": {"name": "get_time"}})
    assert {c.function.name for c in _calls(named)} == {"get_time"}
    none = chat(client, messages=WEATHER_QUESTION, tools=[WEATHER], tool_choice="none")
    assert none.choices[0].message.tool_calls is None and none.choices[0].message.content


def _check_parallel_tool_calls(client):
    single = chat(client, messages=WEATHER_QUESTION, max_tokens=64, tools=[WEATHER],
                  tool_choice="required", parallel_tool_calls=False)
    assert len(_calls(single)) == 1
    # Without tools it asks for nothing.
    assert text(chat(client, parallel_tool_calls=False)) == text(chat(client))


# Field -> a check that sends it through the client and sees its effect.
CHAT_HONOURED: Dict[str, Callable] = {
    "model": _check_model,
    "messages": _check_messages,
    "max_tokens": _check_max_tokens("max_tokens"),
    "max_completion_tokens": _check_max_tokens("max_completion_tokens"),
    "temperature": _check_sampling_changes_greedy,
    "top_p": _check_top_p,
    "seed": _check_seed,
    "stop": _check_stop,
    "n": _check_n,
    "stream": _check_stream,
    "stream_options": _check_stream_options,
    "logprobs": _check_logprobs,
    "top_logprobs": _check_top_logprobs,
    "presence_penalty": _check_penalty("presence_penalty"),
    "frequency_penalty": _check_penalty("frequency_penalty"),
    "logit_bias": _check_logit_bias,
    "response_format": _check_response_format,
    "tools": _check_tools,
    "tool_choice": _check_tool_choice,
    "parallel_tool_calls": _check_parallel_tool_calls,
}

# Fields accepted only at the value that asks for nothing (client libraries send their
# defaults), refused at any other: (accepted value, refused value).
CHAT_NEUTRAL_ONLY = {
    "store": (False, True),
}

# Fields inferd does not implement: a value a client would send, refused by name.
CHAT_REFUSED = {
    "audio": {"voice": "alloy", "format": "wav"},
    "function_call": "auto",
    "functions": [{"name": "f", "parameters": {"type": "object"}}],
    "metadata": {"session": "s1"},
    "modalities": ["text", "audio"],
    "moderation": {"model": "omni-moderation-latest"},
    "prediction": {"type": "content", "content": "The sea"},
    "prompt_cache_key": "k1",
    "prompt_cache_options": {"ttl": "1h"},
    "prompt_cache_retention": "24h",
    "reasoning_effort": "high",
    "safety_identifier": "user-1",
    "service_tier": "flex",
    "user": "user-1",
    "verbosity": "low",
    "web_search_options": {},
}


def test_every_field_of_the_client_is_classified():
    from openai.types.chat import completion_create_params

    classified = set(CHAT_HONOURED) | set(CHAT_NEUTRAL_ONLY) | set(CHAT_REFUSED)
    assert classified == _client_fields(completion_create_params)
    from openai.types import completion_create_params as completions

    classified = set(COMPLETIONS_HONOURED) | set(COMPLETIONS_NEUTRAL_ONLY) | set(
        COMPLETIONS_REFUSED)
    assert classified == _client_fields(completions)


@pytest.mark.parametrize("field", sorted(CHAT_HONOURED))
def test_chat_field_is_honoured(client, field):
    CHAT_HONOURED[field](client)


def _assert_refused(call, field: str):
    import openai

    with pytest.raises(openai.BadRequestError) as refused:
        call()
    error = refused.value.body
    assert error["param"] == field, error
    assert f"'{field}'" in error["message"], error


@pytest.mark.parametrize("field", sorted(CHAT_REFUSED))
def test_chat_field_is_refused_by_name(client, field):
    _assert_refused(lambda: chat(client, **{field: CHAT_REFUSED[field]}), field)


@pytest.mark.parametrize("field", sorted(CHAT_NEUTRAL_ONLY))
def test_chat_field_is_accepted_only_when_it_asks_for_nothing(client, field):
    accepted, refused = CHAT_NEUTRAL_ONLY[field]
    assert text(chat(client, **{field: accepted})) == text(chat(client))
    _assert_refused(lambda: chat(client, **{field: refused}), field)


# ---- completions ---------------------------------------------------------------------------

PROMPT = "The sea is"


def complete(client, **fields):
    body = dict(model=MODEL, prompt=PROMPT, max_tokens=TOKENS, temperature=0,
                extra_body={"cache_prompt": False})
    body.update(fields)
    return client.completions.create(**body)


def ctext(reply) -> str:
    return reply.choices[0].text


def _c_sampling(client):
    assert ctext(complete(client, temperature=2.0, seed=1)) != ctext(complete(client))


def _c_top_p(client):
    assert ctext(complete(client, temperature=2.0, seed=1, top_p=1e-9)) == ctext(
        complete(client))


def _c_seed(client):
    one = ctext(complete(client, temperature=2.0, seed=1))
    assert ctext(complete(client, temperature=2.0, seed=1)) == one
    assert ctext(complete(client, temperature=2.0, seed=2)) != one


def _c_max_tokens(client):
    reply = complete(client, max_tokens=1)
    assert reply.usage.completion_tokens == 1 and reply.choices[0].finish_reason == "length"


def _c_stop(client):
    greedy = ctext(complete(client))
    words = greedy.split()
    assert len(words) >= 3, greedy
    stop = " " + words[2]
    reply = complete(client, stop=stop)
    assert ctext(reply) == greedy[:greedy.index(stop)]
    assert reply.choices[0].finish_reason == "stop"


def _c_n(client):
    reply = complete(client, n=2, temperature=1.0, seed=3)
    assert [c.index for c in reply.choices] == [0, 1]


def _c_stream(client):
    streamed = "".join(c.choices[0].text for c in complete(client, stream=True) if c.choices)
    assert streamed == ctext(complete(client))


def _c_stream_options(client):
    chunks = list(complete(client, stream=True, stream_options={"include_usage": True}))
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0


def _c_logprobs(client):
    logprobs = complete(client, logprobs=2).choices[0].logprobs
    assert logprobs.tokens and all(len(top) == 2 for top in logprobs.top_logprobs)


def _c_penalty(field: str) -> Callable:
    # The penalties look at the generated tokens only: a repeated word in the prompt is not
    # penalised, a word the continuation already used is ("boundaries" comes back).
    def check(client):
        plain = ctext(complete(client))
        assert ctext(complete(client, **{field: 2.0})) != plain, plain
    return check


def _c_logit_bias(client):
    greedy = ctext(complete(client))
    banned = first_token(greedy)
    assert first_token(ctext(complete(client, logit_bias={str(banned): -100}))) != banned


def _c_prompt(client):
    assert ctext(complete(client, prompt="Paris is")) != ctext(complete(client))


def _c_model(client):
    assert complete(client).model == MODEL


COMPLETIONS_HONOURED: Dict[str, Callable] = {
    "model": _c_model,
    "prompt": _c_prompt,
    "max_tokens": _c_max_tokens,
    "temperature": _c_sampling,
    "top_p": _c_top_p,
    "seed": _c_seed,
    "stop": _c_stop,
    "n": _c_n,
    "stream": _c_stream,
    "stream_options": _c_stream_options,
    "logprobs": _c_logprobs,
    "presence_penalty": _c_penalty("presence_penalty"),
    "frequency_penalty": _c_penalty("frequency_penalty"),
    "logit_bias": _c_logit_bias,
}
COMPLETIONS_NEUTRAL_ONLY = {"best_of": (1, 2), "echo": (False, True), "suffix": ("", "!")}
COMPLETIONS_REFUSED = {"user": "user-1"}


@pytest.mark.parametrize("field", sorted(COMPLETIONS_HONOURED))
def test_completions_field_is_honoured(client, field):
    COMPLETIONS_HONOURED[field](client)


@pytest.mark.parametrize("field", sorted(COMPLETIONS_NEUTRAL_ONLY))
def test_completions_field_is_accepted_only_when_it_asks_for_nothing(client, field):
    accepted, refused = COMPLETIONS_NEUTRAL_ONLY[field]
    assert ctext(complete(client, **{field: accepted})) == ctext(complete(client))
    _assert_refused(lambda: complete(client, **{field: refused}), field)


@pytest.mark.parametrize("field", sorted(COMPLETIONS_REFUSED))
def test_completions_field_is_refused_by_name(client, field):
    _assert_refused(lambda: complete(client, **{field: COMPLETIONS_REFUSED[field]}), field)
