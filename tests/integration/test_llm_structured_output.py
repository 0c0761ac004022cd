"""Structured output (issue 32 item 3), with the real `openai` client against the demo chat
model: response_format json_object and json_schema, and llama.cpp server's GBNF `grammar`,
hold what the model writes to the format (llama.cpp's grammar sampler); what cannot be
enforced is refused with a 400 naming the field, and the server goes on serving."""

from __future__ import annotations

import json

import jsonschema
import pytest

MODEL = "smollm2"

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 24},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "pet": {"enum": ["cat", "dog", "none"]},
    },
    "required": ["name", "age", "pet"],
    "additionalProperties": False,
}


@pytest.fixture()
def client(llm_server):
    import openai

    return openai.OpenAI(base_url=llm_server.url + "/v1", api_key="unused", max_retries=0)


def _chat(client, content: str, **extra):
    return client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": content}], temperature=0,
        max_tokens=120, **extra)


def test_json_object_output_parses(client):
    reply = _chat(client, "Describe a cat as JSON with keys name and color.",
                  response_format={"type": "json_object"})
    choice = reply.choices[0]
    assert choice.finish_reason == "stop", choice.message.content
    assert isinstance(json.loads(choice.message.content), dict), choice.message.content


def test_json_schema_output_validates(client):
    reply = _chat(client, "Invent a person: their name, age and pet.",
                  response_format={"type": "json_schema", "json_schema": {
                      "name": "person", "schema": PERSON, "strict": True}})
    choice = reply.choices[0]
    assert choice.finish_reason == "stop", choice.message.content
    jsonschema.validate(json.loads(choice.message.content), PERSON)


def test_json_schema_holds_every_choice_and_a_stream(client):
    # Each choice samples under its own copy of the grammar (its own parse state).
    reply = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "Invent a person."}], n=3, seed=7,
        temperature=1.0, max_tokens=120,
        response_format={"type": "json_schema", "json_schema": {"name": "p", "schema": PERSON}})
    assert len(reply.choices) == 3
    for choice in reply.choices:
        assert choice.finish_reason == "stop", choice.message.content
        jsonschema.validate(json.loads(choice.message.content), PERSON)
    stream = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "Invent a person."}], temperature=0,
        max_tokens=120, stream=True,
        response_format={"type": "json_schema", "json_schema": {"name": "p", "schema": PERSON}})
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    jsonschema.validate(json.loads(text), PERSON)


def test_completions_take_a_schema_and_a_grammar(client):
    answer = {"type": "object", "properties": {"answer": {"enum": ["yes", "no"]}},
              "required": ["answer"], "additionalProperties": False}
    out = client.completions.create(
        model=MODEL, prompt="Is the sky blue? Answer in JSON:", temperature=0, max_tokens=40,
        extra_body={"response_format": {"type": "json_schema",
                                        "json_schema": {"name": "a", "schema": answer}}})
    assert out.choices[0].finish_reason == "stop", out.choices[0].text
    jsonschema.validate(json.loads(out.choices[0].text), answer)
    out = client.completions.create(
        model=MODEL, prompt="Is the sky blue?", temperature=0, max_tokens=40,
        extra_body={"grammar": 'root ::= " " ("yes" | "no") "."'})
    assert out.choices[0].text in (" yes.", " no."), out.choices[0].text
    assert out.choices[0].finish_reason == "stop"


@pytest.mark.parametrize("extra, named", [
    # Bounded before llama.cpp sees it.
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "big", "schema": {
        "type": "object", "description": "x" * (70 << 10)}}}}, "'response_format' is"),
    ({"grammar": "root ::= " + "(" * 200 + '"x"' + ")" * 200}, "'grammar' nests"),
    # llama.cpp's grammar parser and schema converter refuse it.
    ({"grammar": "root ::= (\"unclosed\""}, "'grammar': llama.cpp could not compile"),
    ({"grammar": "root ::= root \"x\""}, "'grammar': llama.cpp could not compile"),
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "t", "schema": {
        "type": "strnig"}}}}, "unrecognized type strnig"),
    # A feature the converter would silently skip.
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": {
        "type": "object", "properties": {"a": {"type": "string", "not": {"const": "b"}}}}}}},
     "the keyword 'not' is not supported"),
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": {
        "type": "number", "minimum": 3}}}}, "'minimum' is supported on type integer only"),
    ({"response_format": {"type": "xml"}}, "'response_format' type 'xml' is not supported"),
])
def test_what_cannot_be_enforced_is_refused_and_the_server_goes_on(client, extra, named):
    import openai

    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "Hi"}],
                                       max_tokens=4, extra_body=extra)
    assert named in str(refused.value), refused.value
    # Streamed: a 400, or (once the stream has begun) an error event; never a crash.
    with pytest.raises(openai.APIError) as refused:
        for _ in client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": "Hi"}], max_tokens=4,
                stream=True, extra_body=extra):
            pass
    assert named in str(refused.value), refused.value
    reply = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "Hi"}], max_tokens=4, temperature=0)
    assert reply.choices[0].message.content
