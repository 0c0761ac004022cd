"""Tool calling, with the real `openai` and `anthropic` clients against the demo chat model
(SmolLM2-135M, whose template knows no tools: the generic format of
src/frontends/http/codecs/generation_codec_tools.h). A forced or required call always comes back
parsed, with arguments valid against the function's schema (the grammar holds them); history
with calls and results is accepted; what is bad or unsupported is refused with a 400 naming
the field, and the server goes on serving."""

from __future__ import annotations

import json

import jsonschema
import pytest
import requests

MODEL = "smollm2"

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "maxLength": 24},
        "unit": {"enum": ["celsius", "fahrenheit"]},
    },
    "required": ["city", "unit"],
    "additionalProperties": False,
}
TIME = {
    "type": "object",
    "properties": {"zone": {"type": "string", "maxLength": 16}},
    "required": ["zone"],
    "additionalProperties": False,
}
SCHEMAS = {"get_weather": WEATHER, "get_time": TIME}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "The weather in a city",
                                      "parameters": WEATHER}},
    {"type": "function", "function": {"name": "get_time", "description": "The time in a zone",
                                      "parameters": TIME}},
]
ANTHROPIC_TOOLS = [{"name": f["function"]["name"], "description": f["function"]["description"],
                    "input_schema": f["function"]["parameters"]} for f in TOOLS]
QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]


@pytest.fixture()
def client(llm_server):
    import openai

    return openai.OpenAI(base_url=llm_server.url + "/v1", api_key="unused", max_retries=0)


@pytest.fixture()
def anthropic_client(llm_server):
    import anthropic

    return anthropic.Anthropic(base_url=llm_server.url, api_key="unused", max_retries=0)


def _check_calls(calls, names=None):
    assert calls, "no tool calls"
    for call in calls:
        assert call.type == "function"
        assert call.id.startswith("call_")
        assert call.function.name in (names or SCHEMAS)
        jsonschema.validate(json.loads(call.function.arguments), SCHEMAS[call.function.name])


def _chat(client, **extra):
    body = {"model": MODEL, "messages": QUESTION, "temperature": 0, "max_tokens": 96,
            "tools": TOOLS} | extra
    return client.chat.completions.create(**body)


def test_forced_named_tool_gives_valid_arguments(client):
    for name in SCHEMAS:
        reply = _chat(client, tool_choice={"type": "function", "function": {"name": name}})
        choice = reply.choices[0]
        assert choice.finish_reason == "tool_calls", choice.message
        assert choice.message.content is None
        _check_calls(choice.message.tool_calls, [name])


def test_required_gives_valid_calls_one_or_parallel(client):
    for parallel in (True, False):
        reply = _chat(client, tool_choice="required", parallel_tool_calls=parallel, n=2, seed=3,
                      temperature=0.8)
        for choice in reply.choices:
            assert choice.finish_reason == "tool_calls", choice.message
            _check_calls(choice.message.tool_calls)
            if not parallel:
                assert len(choice.message.tool_calls) == 1


def test_streamed_calls_accumulate_to_the_same(client):
    forced = {"type": "function", "function": {"name": "get_weather"}}
    whole = _chat(client, tool_choice=forced).choices[0].message.tool_calls
    calls: dict[int, dict] = {}
    finish = None
    stream = _chat(client, tool_choice=forced, stream=True)
    for chunk in stream:
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            for delta in choice.delta.tool_calls or []:
                entry = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
                entry["id"] += delta.id or ""
                entry["name"] += delta.function.name or ""
                entry["arguments"] += delta.function.arguments or ""
    assert finish == "tool_calls"
    assert [(c["name"], json.loads(c["arguments"])) for c in calls.values()] == [
        (c.function.name, json.loads(c.function.arguments)) for c in whole]
    jsonschema.validate(json.loads(calls[0]["arguments"]), WEATHER)


def test_history_with_calls_and_results_is_accepted_and_rendered(client, llm_server):
    history = QUESTION + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Paris", "unit": "celsius"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "18 degrees and sunny"},
    ]
    reply = _chat(client, messages=history, tool_choice="auto")
    message = reply.choices[0].message
    assert message.content or message.tool_calls
    # The history as the model sees it: the call and its result in the turns.
    rendered = requests.post(f"{llm_server.url}/v2/models/{MODEL}/chat_template",
                             json={"messages": history, "tools": TOOLS}, timeout=30)
    assert rendered.status_code == 200, rendered.text
    prompt = rendered.json()["prompt"]
    assert '"tool_calls":[{"name":"get_weather","arguments":{"city":"Paris","unit":"celsius"}}]' in prompt
    assert '"tool_response":{"tool":"get_weather","tool_call_id":"call_1"' in prompt
    assert "18 degrees and sunny" in prompt
    assert "You can call these tools" in prompt


def test_auto_gives_text_or_valid_calls(client):
    for content in ("What is the weather in Paris?", "Say hello."):
        reply = _chat(client, messages=[{"role": "user", "content": content}], tool_choice="auto")
        choice = reply.choices[0]
        if choice.message.tool_calls:
            assert choice.finish_reason == "tool_calls"
            _check_calls(choice.message.tool_calls)
        else:
            assert choice.finish_reason in ("stop", "length")
            assert isinstance(choice.message.content, str)
            assert '"response"' not in choice.message.content or choice.finish_reason == "length"


def test_none_never_calls(client):
    reply = _chat(client, tool_choice="none", max_tokens=24)
    choice = reply.choices[0]
    assert choice.message.tool_calls is None
    assert choice.finish_reason in ("stop", "length")
    assert isinstance(choice.message.content, str)


def test_bad_tools_are_refused_naming_the_field(client):
    import openai

    bad_name = [{"type": "function", "function": {"name": "get weather!", "parameters": WEATHER}}]

    def refused(param, **body):
        with pytest.raises(openai.BadRequestError) as error:
            client.chat.completions.create(**({"model": MODEL, "messages": QUESTION,
                                               "max_tokens": 8} | body))
        assert error.value.body["param"] == param, error.value.body
        return error.value.body["message"]

    assert "^[a-zA-Z0-9_-]{1,64}$" in refused("tools[0].function.name", tools=bad_name)
    many = [{"type": "function", "function": {"name": f"f{i}"}} for i in range(129)]
    assert "at most 128" in refused("tools", tools=many)
    huge = {"type": "object", "properties": {f"p{i}": {"type": "string", "description": "x" * 64}
                                             for i in range(1200)}}
    refused("tools[0].function.parameters",
            tools=[{"type": "function", "function": {"name": "huge", "parameters": huge}}])
    assert "not among 'tools'" in refused(
        "tool_choice", tools=TOOLS, tool_choice={"type": "function", "function": {"name": "nope"}})
    refused("tool_choice", tools=TOOLS, tool_choice="sometimes")
    refused("tools[0].type", tools=[{"type": "code_interpreter"}])
    refused("tools", tools=TOOLS, tool_choice="required", response_format={"type": "json_object"})
    refused("logprobs", tools=TOOLS, tool_choice="required", logprobs=True)
    # A keyword the grammar would not enforce, found when the schema is compiled.
    message = refused("tools", tools=[{"type": "function", "function": {
        "name": "f", "parameters": {"type": "object", "not": {}}}}], tool_choice="required")
    assert "'not'" in message
    refused("messages[1].tool_calls[0]", messages=QUESTION + [
        {"role": "assistant", "tool_calls": [{"id": "x", "type": "function"}]}])
    refused("messages[1].tool_call_id", messages=QUESTION + [{"role": "tool", "content": "x"}])
    # The server goes on serving.
    _check_calls(_chat(client, tool_choice="required").choices[0].message.tool_calls)


def test_anthropic_forced_tool_gives_a_valid_tool_use(anthropic_client):
    message = anthropic_client.messages.create(
        model=MODEL, max_tokens=96, extra_body={"temperature": 0}, messages=QUESTION, tools=ANTHROPIC_TOOLS,
        tool_choice={"type": "tool", "name": "get_weather"})
    assert message.stop_reason == "tool_use", message
    uses = [block for block in message.content if block.type == "tool_use"]
    assert len(uses) >= 1
    assert uses[0].name == "get_weather" and uses[0].id.startswith("toolu_")
    jsonschema.validate(uses[0].input, WEATHER)


def test_anthropic_stream_helper_and_history(anthropic_client):
    with anthropic_client.messages.stream(
            model=MODEL, max_tokens=96, extra_body={"temperature": 0}, messages=QUESTION, tools=ANTHROPIC_TOOLS,
            tool_choice={"type": "any", "disable_parallel_tool_use": True}) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "tool_use", final
    uses = [block for block in final.content if block.type == "tool_use"]
    assert len(uses) == 1
    jsonschema.validate(uses[0].input, SCHEMAS[uses[0].name])
    # The call and its result go back as history.
    reply = anthropic_client.messages.create(
        model=MODEL, max_tokens=32, extra_body={"temperature": 0}, tools=ANTHROPIC_TOOLS,
        messages=QUESTION + [
            {"role": "assistant", "content": [{"type": "tool_use", "id": uses[0].id,
                                               "name": uses[0].name, "input": uses[0].input}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": uses[0].id,
                                          "content": "18 degrees and sunny"}]}])
    assert reply.content


def test_anthropic_bad_tools_are_refused(anthropic_client):
    import anthropic

    for body, field in [
        ({"tools": [{"name": "bad name", "input_schema": WEATHER}]}, "tools[0].name"),
        ({"tools": [{"type": "bash_20250124", "name": "bash"}]}, "tools[0].type"),
        ({"tools": ANTHROPIC_TOOLS, "tool_choice": {"type": "tool", "name": "nope"}},
         "tool_choice.name"),
        ({"tools": ANTHROPIC_TOOLS, "tool_choice": {"type": "sometimes"}}, "tool_choice.type"),
    ]:
        with pytest.raises(anthropic.BadRequestError) as error:
            anthropic_client.messages.create(model=MODEL, max_tokens=8, messages=QUESTION, **body)
        assert field in str(error.value), (field, error.value)
