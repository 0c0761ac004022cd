"""Every error on the OpenAI paths in OpenAI's shape, {"error": {"message", "type", "param",
"code"}}, whichever layer refused the request (the access check, the session, the router, the
codec, the model), so the real `openai` client raises the right exception and a program can
branch on `code` and `param`. The other protocols keep their {"error": "..."}."""

from __future__ import annotations

import secrets

import pytest
import yaml

from llm_helpers import add_llm

MODEL = "smollm2"
MAX_REQUEST_BYTES = 65536


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    from inferd_harness import InferdServer

    base = tmp_path_factory.mktemp("llm_openai_errors")
    keys = {name: secrets.token_hex(24) for name in ("app", "watcher", "carol")}
    document = {
        "keys": [
            {"name": "app", "key": keys["app"], "roles": ["inference"]},
            {"name": "watcher", "key": keys["watcher"], "roles": ["monitoring"]},
            {"name": "carol-app", "key": keys["carol"], "roles": ["inference"],
             "tenant": "carol"},
        ],
        # One request per 100 s after the first: the second within the test is always over.
        "tenants": {"carol": {"requests_per_second": 0.01, "burst": 1}},
    }
    key_file = base / "keys.yaml"
    key_file.write_text(yaml.safe_dump(document))
    key_file.chmod(0o600)
    repo = base / "repo"
    add_llm(repo, MODEL, parallel=2, extra={"embeddings": "true"})
    server = InferdServer(repo, base / "inferd.log",
                          args=["--api-keys-file", str(key_file),
                                "--max-request-bytes", str(MAX_REQUEST_BYTES)],
                          name="llm_openai_errors").start()
    yield server, keys
    server.stop()


def _client(server, key: str):
    import openai

    return openai.OpenAI(base_url=server.url + "/v1", api_key=key, max_retries=0)


def _chat(client, **extra):
    fields = {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2,
              "temperature": 0}
    fields.update(extra)
    return client.chat.completions.create(**fields)


def test_a_bad_key_is_an_authentication_error(keyed):
    import openai

    server, _ = keyed
    with pytest.raises(openai.AuthenticationError) as refused:
        _chat(_client(server, "not-a-key"))
    error = refused.value
    assert (error.status_code, error.type, error.code, error.param) == (
        401, "authentication_error", "invalid_api_key", None)
    assert "not valid" in error.message
    # Refused from the header alone (before the body is read): the same shape.
    response = server.post("/v1/embeddings", {"model": MODEL, "input": "Hi"})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_api_key"
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_a_key_without_the_role_is_a_permission_error(keyed):
    import openai

    server, keys = keyed
    with pytest.raises(openai.PermissionDeniedError) as refused:
        _chat(_client(server, keys["watcher"]))
    assert (refused.value.type, refused.value.code) == ("permission_error", None)
    assert "inference role" in refused.value.message


def test_an_unknown_model_is_model_not_found(keyed):
    import openai

    server, keys = keyed
    client = _client(server, keys["app"])
    with pytest.raises(openai.NotFoundError) as refused:
        _chat(client, model="no-such-model")
    assert (refused.value.type, refused.value.code) == ("not_found_error", "model_not_found")
    assert "no-such-model" in refused.value.message
    with pytest.raises(openai.NotFoundError) as refused:
        client.models.retrieve("no-such-model")
    assert refused.value.code == "model_not_found"
    with pytest.raises(openai.NotFoundError) as refused:
        client.embeddings.create(model="no-such-model", input="Hi")
    assert refused.value.code == "model_not_found"


@pytest.mark.parametrize("extra, param", [
    ({"temperature": 7}, "temperature"),
    ({"top_p": 0}, "top_p"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"response_format": {"type": "xml"}}, "response_format"),
    ({"messages": [{"role": "user", "content": "Hi", "name": "bob"}]}, "messages[0].name"),
])
def test_an_invalid_field_is_named_in_param(keyed, extra, param):
    import openai

    server, keys = keyed
    with pytest.raises(openai.BadRequestError) as refused:
        _chat(_client(server, keys["app"]), **extra)
    assert (refused.value.type, refused.value.code, refused.value.param) == (
        "invalid_request_error", None, param)


def test_a_max_tokens_over_the_models_cap_names_max_tokens(keyed):
    import openai

    server, keys = keyed
    with pytest.raises(openai.BadRequestError) as refused:
        _chat(_client(server, keys["app"]), max_tokens=1 << 20)
    assert refused.value.param == "max_tokens", refused.value.message


def test_a_prompt_longer_than_the_context_is_context_length_exceeded(keyed):
    import openai

    server, keys = keyed
    client = _client(server, keys["app"])
    long_prompt = "hello " * 700  # 700 tokens; a sequence holds 512 (llm_helpers.SETTINGS)
    with pytest.raises(openai.BadRequestError) as refused:
        _chat(client, messages=[{"role": "user", "content": long_prompt}])
    assert (refused.value.code, refused.value.param) == ("context_length_exceeded", "messages")
    with pytest.raises(openai.BadRequestError) as refused:
        client.completions.create(model=MODEL, prompt=long_prompt, max_tokens=2)
    assert (refused.value.code, refused.value.param) == ("context_length_exceeded", "prompt")


def test_a_tenant_over_its_rate_is_rate_limit_exceeded(keyed):
    import openai

    server, keys = keyed
    client = _client(server, keys["carol"])
    with pytest.raises(openai.RateLimitError) as refused:
        for _ in range(3):  # the first is within the burst
            _chat(client)
    assert (refused.value.type, refused.value.code) == ("requests", "rate_limit_exceeded")
    assert int(refused.value.response.headers["Retry-After"]) >= 1


def test_refusals_before_the_handler_are_openai_shaped_too(keyed):
    server, keys = keyed
    auth = {"Authorization": f"Bearer {keys['app']}"}
    unknown = server.post("/v1/no-such-endpoint", {}, headers=auth)
    assert unknown.status_code == 404
    assert unknown.json()["error"]["type"] == "not_found_error"
    wrong_method = server.get("/v1/chat/completions", headers=auth)
    assert wrong_method.status_code == 405
    assert wrong_method.json()["error"]["type"] == "invalid_request_error"
    too_large = server.post("/v1/chat/completions", raw="x" * (2 * MAX_REQUEST_BYTES),
                            headers=auth)
    assert too_large.status_code == 413
    error = too_large.json()["error"]
    assert error["type"] == "invalid_request_error" and "--max-request-bytes" in error["message"]


def test_the_other_protocols_keep_their_shape(keyed):
    server, keys = keyed
    auth = {"Authorization": f"Bearer {keys['app']}"}
    for response in (
            server.post(f"/v2/models/{MODEL}/generate", {"text_input": "Hi"}),
            server.post(f"/v2/models/{MODEL}/generate", {"text_input": "Hi", "temperature": 7},
                        headers=auth),
            server.post(f"/v2/models/{MODEL}/generate", raw="x" * (2 * MAX_REQUEST_BYTES),
                        headers=auth),
            server.post("/v1/models/no_such_model:predict", {"instances": [1]}, headers=auth)):
        assert response.status_code >= 400
        assert isinstance(response.json()["error"], str), response.text
