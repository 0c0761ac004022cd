"""Language models through the llama backend: greedy output equal to llama.cpp's own,
the chat template rendered as llama.cpp renders it, streaming equal to non-streaming,
OpenAI and KServe generate shapes, errors, and the OpenAI Python client unchanged."""

from __future__ import annotations

import pytest
import requests

from llm_helpers import (LLM_MODEL, reference_greedy, reference_llama, smollm2_gguf,
                         sse_events)

MODEL = LLM_MODEL
PROMPTS = [
    "The three primary colors are",
    "def fibonacci(n):\n",
    "Paris is the capital of",
]


@pytest.fixture(scope="module")
def llama_ref():
    return reference_llama()


def completion(server, prompt, max_tokens=24, stream=False, **extra):
    body = {"model": MODEL, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
            "cache_prompt": False, "stream": stream, **extra}
    return server.post("/v1/completions", body, stream=stream)


def test_greedy_completions_equal_llama_cpp(llm_server, llama_ref):
    for prompt in PROMPTS:
        response = completion(llm_server, prompt, max_tokens=32)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["object"] == "text_completion"
        want = reference_greedy(llama_ref, prompt, 32)
        assert body["choices"][0]["text"] == want, prompt
        assert body["usage"]["prompt_tokens"] == len(llama_ref.tokenize(prompt.encode(),
                                                                         add_bos=True, special=True))


def test_chat_prompt_is_llama_cpps_jinja_rendering(llm_server, llama_ref):
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llama_ref.metadata["tokenizer.chat_template"]
    eos = llama_ref._model.token_get_text(llama_ref.token_eos())
    bos = llama_ref._model.token_get_text(llama_ref.token_bos())
    formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
    conversations = [
        [{"role": "user", "content": "What is the capital of France?"}],  # default system
        [{"role": "system", "content": "You answer in one word."},
         {"role": "user", "content": "Name a color."},
         {"role": "assistant", "content": "Blue."},
         {"role": "user", "content": "Another one?"}],
    ]
    for messages in conversations:
        want = formatter(messages=messages).prompt
        response = llm_server.post(f"/v2/models/{MODEL}/chat_template", {"messages": messages})
        assert response.status_code == 200, response.text
        assert response.json()["prompt"] == want
        # ... and the model is given exactly those tokens.
        chat = llm_server.post("/v1/chat/completions",
                               {"model": MODEL, "messages": messages, "max_tokens": 1})
        assert chat.status_code == 200, chat.text
        tokens = llama_ref.tokenize(want.encode(), add_bos=True, special=True)
        assert chat.json()["usage"]["prompt_tokens"] == len(tokens)
    assert "You are a helpful AI assistant" in formatter(messages=conversations[0]).prompt


def test_greedy_chat_equals_llama_cpp(llm_server, llama_ref):
    messages = [{"role": "user", "content": "Give me a short tip for learning to code."}]
    prompt = llm_server.post(f"/v2/models/{MODEL}/chat_template",
                             {"messages": messages}).json()["prompt"]
    response = llm_server.post("/v1/chat/completions",
                               {"model": MODEL, "messages": messages, "max_tokens": 40,
                                "temperature": 0, "cache_prompt": False})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["message"]["role"] == "assistant"
    assert body["choices"][0]["message"]["content"] == reference_greedy(llama_ref, prompt, 40)


def test_streaming_gives_the_non_streaming_text(llm_server):
    messages = [{"role": "user", "content": "List three fruits."}]
    body = {"model": MODEL, "messages": messages, "max_tokens": 30, "temperature": 0,
            "cache_prompt": False}
    whole = llm_server.post("/v1/chat/completions", body).json()
    response = llm_server.post("/v1/chat/completions",
                               dict(body, stream=True, stream_options={"include_usage": True}),
                               stream=True)
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/event-stream")
    events = list(sse_events(response))
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert text == whole["choices"][0]["message"]["content"]
    finish = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
    assert finish[-1] == whole["choices"][0]["finish_reason"]
    assert chunks[-1]["usage"] == whole["usage"]


def test_stop_strings_and_max_tokens(llm_server):
    plain = completion(llm_server, "1, 2, 3, 4,", max_tokens=20).json()
    text = plain["choices"][0]["text"]
    assert plain["choices"][0]["finish_reason"] == "length"
    assert plain["usage"]["completion_tokens"] == 20
    assert " 7" in text, text
    stopped = completion(llm_server, "1, 2, 3, 4,", max_tokens=20, stop=[" 7"]).json()
    assert stopped["choices"][0]["finish_reason"] == "stop"
    assert stopped["choices"][0]["text"] == text[:text.index(" 7")]


def test_sampling_with_a_seed_repeats(llm_server):
    body = {"model": MODEL, "prompt": "Once upon a time", "max_tokens": 16, "temperature": 0.9,
            "top_p": 0.9, "top_k": 40, "seed": 1234, "cache_prompt": False}
    first = llm_server.post("/v1/completions", body).json()["choices"][0]["text"]
    second = llm_server.post("/v1/completions", body).json()["choices"][0]["text"]
    assert first == second and first


def test_n_choices_sample_with_seeds_one_apart(llm_server):
    """OpenAI's n: choice i samples with seed + i, so a request with n = 3 gives the three
    texts that n = 1 requests with seeds s, s + 1 and s + 2 give, and its usage counts the
    prompt once and the completions together. Streamed, each chunk names its choice."""
    body = {"model": MODEL, "prompt": "Once upon a time", "max_tokens": 12, "temperature": 0.9,
            "top_p": 0.9, "top_k": 40, "seed": 77, "cache_prompt": False}
    three = llm_server.post("/v1/completions", dict(body, n=3))
    assert three.status_code == 200, three.text
    reply = three.json()
    assert [c["index"] for c in reply["choices"]] == [0, 1, 2]
    singles = [llm_server.post("/v1/completions", dict(body, seed=77 + i)).json()
               for i in range(3)]
    assert [c["text"] for c in reply["choices"]] == [s["choices"][0]["text"] for s in singles]
    assert reply["usage"]["prompt_tokens"] == singles[0]["usage"]["prompt_tokens"]
    assert reply["usage"]["completion_tokens"] == sum(s["usage"]["completion_tokens"]
                                                      for s in singles)

    response = llm_server.post("/v1/completions",
                               dict(body, n=3, stream=True,
                                    stream_options={"include_usage": True}), stream=True)
    assert response.status_code == 200
    events = list(sse_events(response))
    assert events[-1] == "[DONE]"
    streamed = {0: "", 1: "", 2: ""}
    finished = set()
    for chunk in events[:-1]:
        for choice in chunk["choices"]:
            streamed[choice["index"]] += choice["text"]
            if choice["finish_reason"]:
                finished.add(choice["index"])
    assert finished == {0, 1, 2}
    assert [streamed[i] for i in range(3)] == [c["text"] for c in reply["choices"]]
    assert events[-2]["usage"] == reply["usage"]


def test_kserve_generate_and_generate_stream(llm_server):
    body = {"text_input": "The three primary colors are",
            "parameters": {"max_tokens": 12, "temperature": 0, "cache_prompt": False}}
    response = llm_server.post(f"/v2/models/{MODEL}/generate", body)
    assert response.status_code == 200, response.text
    whole = response.json()
    assert whole["model_name"] == MODEL and whole["model_version"] == "1"
    assert whole["usage"]["completion_tokens"] <= 12
    stream = llm_server.post(f"/v2/models/{MODEL}/generate_stream", body, stream=True)
    events = list(sse_events(stream))
    assert "".join(e["text_output"] for e in events) == whole["text_output"]
    assert events[-1]["finish_reason"] == whole["finish_reason"]


def test_v1_models_lists_the_language_model(llm_server):
    listing = llm_server.get("/v1/models").json()
    assert [m["id"] for m in listing["data"]] == [MODEL]
    assert llm_server.get(f"/v1/models/{MODEL}").json()["id"] == MODEL
    assert llm_server.get("/v1/models/nope").status_code == 404


def test_clear_errors_and_the_server_keeps_serving(llm_server):
    long_prompt = "word " * 700
    response = completion(llm_server, long_prompt)
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert "tokens" in message and "512" in message, message
    assert response.json()["error"]["type"] == "invalid_request_error"

    unknown = llm_server.post("/v1/chat/completions",
                              {"model": "nope", "messages": [{"role": "user", "content": "hi"}]})
    assert unknown.status_code == 404, unknown.text
    for bad, fragment in [({"temperature": 5}, "temperature"), ({"max_tokens": 0}, "max_tokens"),
                          ({"top_p": 0}, "top_p"), ({"n": 9}, "'n'"),
                          ({"stop": ["a", "b", "c", "d", "e"]}, "stop"),
                          ({"max_tokens": 100000}, "max_tokens")]:
        response = completion(llm_server, "hi", **bad)
        assert response.status_code == 400, (bad, response.text)
        assert fragment in response.json()["error"]["message"], response.text
    missing = llm_server.post("/v1/chat/completions", {"model": MODEL})
    assert missing.status_code == 400 and "messages" in missing.text
    assert completion(llm_server, "Hello", max_tokens=4).status_code == 200
    assert llm_server.get("/v2/health/ready").status_code == 200


def test_openai_client_talks_to_inferd_unchanged(llm_server):
    import openai

    client = openai.OpenAI(base_url=llm_server.url + "/v1", api_key="unused", max_retries=0)
    assert [m.id for m in client.models.list()] == [MODEL]
    messages = [{"role": "user", "content": "Say hello."}]
    reply = client.chat.completions.create(model=MODEL, messages=messages, max_tokens=16,
                                           temperature=0, extra_body={"cache_prompt": False})
    text = reply.choices[0].message.content
    assert text and reply.usage.completion_tokens >= 1
    stream = client.chat.completions.create(model=MODEL, messages=messages, max_tokens=16,
                                            temperature=0, stream=True,
                                            extra_body={"cache_prompt": False})
    streamed = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert streamed == text
    completion_reply = client.completions.create(model=MODEL, prompt="Hello", max_tokens=4)
    assert completion_reply.choices[0].finish_reason in ("stop", "length")
    with pytest.raises(openai.BadRequestError) as error:
        client.chat.completions.create(model=MODEL, messages=messages, temperature=9)
    assert "temperature" in str(error.value)


def test_inferd_cli_chats_with_streaming(llm_server):
    import subprocess

    from inferd_harness import REPO_ROOT

    cli = REPO_ROOT / "tools" / "bin" / "inferd-cli"
    done = subprocess.run([str(cli), "--url", f"127.0.0.1:{llm_server.port}", "chat", MODEL,
                           "--max-tokens", "12", "--temperature", "0"],
                          input="Name a planet.\nAnd another one?\n", capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    replies = done.stdout.strip().splitlines()
    assert len(replies) >= 2 and all(r.strip() for r in replies[:2]), done.stdout
    missing = subprocess.run([str(cli), "--url", f"127.0.0.1:{llm_server.port}", "chat", "nope",
                              "--message", "hi"], capture_output=True, text=True, timeout=60,
                             check=False)
    assert missing.returncode == 2 and "404" in missing.stderr, missing.stderr


def test_python_client_generates_and_chats(llm_server):
    import sys

    from inferd_harness import REPO_ROOT

    sys.path.insert(0, str(REPO_ROOT / "python"))
    from inferd_client import Client, InferdError

    # The client leaves prefix reuse on, and a reused prefix changes greedy output (as it does
    # in llama.cpp itself): the references are made the same way, after a first request that
    # leaves the prompt in a sequence's cache.
    body = {"text_input": "Paris is the capital of", "parameters": {"max_tokens": 8,
                                                                    "temperature": 0}}
    llm_server.post(f"/v2/models/{MODEL}/generate", body)
    want = llm_server.post(f"/v2/models/{MODEL}/generate", body).json()
    messages = [{"role": "user", "content": "Name a color."}]
    chat = {"model": MODEL, "messages": messages, "max_tokens": 8, "temperature": 0}
    llm_server.post("/v1/chat/completions", chat)
    whole = llm_server.post("/v1/chat/completions", chat).json()
    assert whole["usage"]["prompt_tokens_details"]["cached_tokens"] > 0
    with Client(f"127.0.0.1:{llm_server.port}") as client:
        got = client.generate(MODEL, "Paris is the capital of", max_tokens=8, temperature=0)
        assert got["text_output"] == want["text_output"] and got["text_output"]
        assert got["usage"]["completion_tokens"] == want["usage"]["completion_tokens"]
        pieces = list(client.chat(MODEL, messages, max_tokens=8, temperature=0))
        assert len(pieces) >= 2  # streamed piece by piece
        assert "".join(pieces) == whole["choices"][0]["message"]["content"]
        with pytest.raises(InferdError) as error:
            client.generate("nope", "hi")
        assert error.value.status == 404


def test_the_seeds_predict_request_with_text_generates(llm_server):
    # The seed's first request, POST /predict {"input": "..."}, with text: a language model
    # answers with its text (it was refused: "shape [] is not accepted").
    answer = llm_server.post(f"/predict?model={MODEL}", {"input": "Hello, my name is"},
                             timeout=120)
    assert answer.status_code == 200, answer.text
    assert isinstance(answer.json()["output"], str)
    # A list of one prompt is answered as a list of one text.
    answer = llm_server.post(f"/predict?model={MODEL}", {"input": ["Hi"]}, timeout=120)
    assert answer.status_code == 200, answer.text
    assert isinstance(answer.json()["output"], list) and len(answer.json()["output"]) == 1
