"""Tool calling in a chat template's own format (src/backends/llama/chat_tool_format.h), with
the real `openai` client, against the demo chat model written again with Qwen2.5's template
(tools/demo_models/chat_tools.py: SmolLM2's weights, a template that lists the tools in its
system turn and reads `<tool_call>{"name", "arguments"}</tool_call>` back). The prompt shows
the template's own sections, not the generic format's; a forced or required call comes back
parsed, its arguments valid against the function's schema (llama.cpp's grammar holds them);
history with a call and its result is rendered as the template renders it; streaming gives
the same calls."""

from __future__ import annotations

import json

import jsonschema
import pytest
import requests
from inferd_harness import InferdServer
from llm_helpers import config_yaml, smollm2_gguf

from test_llm_tools import QUESTION, SCHEMAS, TOOLS, WEATHER

MODEL = "smollm2-tools"


@pytest.fixture(scope="module")
def tools_server(tmp_path_factory):
    from tools.demo_models import chat_tools

    repo = tmp_path_factory.mktemp("llm_tools_repo")
    folder = repo / MODEL
    (folder / "1").mkdir(parents=True)
    (folder / "config.yaml").write_text(config_yaml(parallel=4))
    chat_tools.write(smollm2_gguf(), folder / "1" / "model.gguf")
    server = InferdServer(repo, repo.parent / "inferd.log", name="tools_server").start()
    yield server
    server.stop()


@pytest.fixture()
def client(tools_server):
    import openai

    return openai.OpenAI(base_url=tools_server.url + "/v1", api_key="unused", max_retries=0)


def _check_calls(calls, names=None):
    assert calls, "no tool calls"
    for call in calls:
        assert call.type == "function"
        assert call.id
        assert call.function.name in (names or SCHEMAS)
        jsonschema.validate(json.loads(call.function.arguments), SCHEMAS[call.function.name])


def _chat(client, **extra):
    body = {"model": MODEL, "messages": QUESTION, "temperature": 0, "max_tokens": 96,
            "tools": TOOLS} | extra
    return client.chat.completions.create(**body)


def _rendered(server, body):
    reply = requests.post(f"{server.url}/v2/models/{MODEL}/chat_template", json=body, timeout=30)
    assert reply.status_code == 200, reply.text
    return reply.json()["prompt"]


def test_prompt_has_the_templates_own_tools_section(tools_server):
    prompt = _rendered(tools_server, {"messages": QUESTION, "tools": TOOLS})
    assert "<tools>" in prompt and "</tools>" in prompt
    assert '"name": "get_weather"' in prompt
    assert "<tool_call>" in prompt  # the template's instructions for a call
    assert "You can call these tools" not in prompt  # not the generic format
    assert prompt.rstrip().endswith("<|im_start|>assistant")


def test_forced_named_call_is_parsed_and_valid(client):
    reply = _chat(client, tool_choice={"type": "function", "function": {"name": "get_weather"}})
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    _check_calls(choice.message.tool_calls, ["get_weather"])
    assert "<tool_call>" not in (choice.message.content or "")


def test_required_gives_valid_calls(client):
    reply = _chat(client, tool_choice="required", parallel_tool_calls=False)
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    _check_calls(choice.message.tool_calls)


def test_auto_gives_text_or_valid_calls(client):
    for content in ["What is the weather in Paris?", "Say hello."]:
        reply = _chat(client, messages=[{"role": "user", "content": content}], tool_choice="auto")
        message = reply.choices[0].message
        if message.tool_calls:
            _check_calls(message.tool_calls)
            assert reply.choices[0].finish_reason == "tool_calls"
        else:
            assert message.content is not None
            assert "<tool_call>" not in message.content


def test_history_with_a_call_and_its_result(client, tools_server):
    history = QUESTION + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather",
                          "arguments": '{"city": "Paris", "unit": "celsius"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "18 degrees and sunny"},
    ]
    prompt = _rendered(tools_server, {"messages": history, "tools": TOOLS})
    # Qwen2.5's rendering: the call in <tool_call>, the result as a <tool_response>.
    assert "<tool_call>" in prompt and '"name": "get_weather"' in prompt
    assert "<tool_response>\n18 degrees and sunny\n</tool_response>" in prompt
    assert '"tool_response":' not in prompt  # not the generic format
    reply = _chat(client, messages=history, tool_choice="auto", max_tokens=32)
    message = reply.choices[0].message
    assert message.content or message.tool_calls


def test_streamed_calls_are_the_same(client):
    forced = {"type": "function", "function": {"name": "get_weather"}}
    whole = _chat(client, tool_choice=forced).choices[0].message.tool_calls
    calls = {}
    finish = None
    for chunk in _chat(client, tool_choice=forced, stream=True):
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        finish = choice.finish_reason or finish
        for delta in choice.delta.tool_calls or []:
            entry = calls.setdefault(delta.index, {"name": "", "arguments": ""})
            if delta.function.name:
                entry["name"] += delta.function.name
            if delta.function.arguments:
                entry["arguments"] += delta.function.arguments
    assert finish == "tool_calls"
    assert [(c["name"], json.loads(c["arguments"])) for c in calls.values()] == [
        (c.function.name, json.loads(c.function.arguments)) for c in whole]
    jsonschema.validate(json.loads(calls[0]["arguments"]), WEATHER)


def test_bad_tools_are_still_refused_naming_the_field(client):
    import openai

    with pytest.raises(openai.BadRequestError) as refused:
        _chat(client, tools=[{"type": "function", "function": {"name": "bad name!",
                                                               "parameters": WEATHER}}])
    assert "tools" in str(refused.value)
    _check_calls(_chat(client, tool_choice="required").choices[0].message.tool_calls)


def test_anthropic_tool_use_and_history_in_the_templates_format(tools_server):
    import anthropic

    from test_llm_tools import ANTHROPIC_TOOLS

    client = anthropic.Anthropic(base_url=tools_server.url, api_key="unused", max_retries=0)
    message = client.messages.create(
        model=MODEL, max_tokens=96, extra_body={"temperature": 0}, messages=QUESTION,
        tools=ANTHROPIC_TOOLS, tool_choice={"type": "tool", "name": "get_weather"})
    assert message.stop_reason == "tool_use", message
    uses = [block for block in message.content if block.type == "tool_use"]
    assert uses and uses[0].name == "get_weather" and uses[0].id.startswith("toolu_")
    jsonschema.validate(uses[0].input, WEATHER)
    with client.messages.stream(
            model=MODEL, max_tokens=96, extra_body={"temperature": 0}, messages=QUESTION,
            tools=ANTHROPIC_TOOLS, tool_choice={"type": "tool", "name": "get_weather"}) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "tool_use", final
    streamed = [block for block in final.content if block.type == "tool_use"]
    assert [(u.name, u.input) for u in streamed] == [(u.name, u.input) for u in uses]
    reply = client.messages.create(
        model=MODEL, max_tokens=32, extra_body={"temperature": 0}, tools=ANTHROPIC_TOOLS,
        messages=QUESTION + [
            {"role": "assistant", "content": [{"type": "tool_use", "id": uses[0].id,
                                               "name": uses[0].name, "input": uses[0].input}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": uses[0].id,
                                          "content": "18 degrees and sunny"}]}])
    assert reply.content
