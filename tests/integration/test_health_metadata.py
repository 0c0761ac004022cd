"""KServe v2 health, server and model metadata, repository index, and routing errors."""

import http.client

import pytest

from inferd_harness import DEMO_METADATA, DEMO_MODEL_NAMES, assert_error, sample_request


def test_live_answers_200_live_true(demo_server):
    resp = demo_server.get("/v2/health/live")
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"live": True}


def test_ready_answers_200_ready_true(demo_server):
    resp = demo_server.get("/v2/health/ready")
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"ready": True}


def test_server_metadata_has_name_version_and_extensions(demo_server):
    resp = demo_server.get("/v2")
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["name"] == "inferd"
    assert isinstance(body["version"], str) and body["version"]
    assert isinstance(body["extensions"], list)
    assert all(isinstance(e, str) for e in body["extensions"])
    # POST /v2/repository/index is served, so the extension is advertised.
    assert "model_repository" in body["extensions"]


@pytest.mark.parametrize("model", DEMO_MODEL_NAMES)
@pytest.mark.parametrize("suffix", ["", "/versions/1"])
def test_model_metadata_matches_config(demo_server, model, suffix):
    resp = demo_server.get(f"/v2/models/{model}{suffix}")
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["name"] == model
    assert body["versions"] == ["1"]
    assert body["platform"] == "pytorch_libtorch"
    assert body["inputs"] == DEMO_METADATA[model]["inputs"]
    assert body["outputs"] == DEMO_METADATA[model]["outputs"]


@pytest.mark.parametrize("model", DEMO_MODEL_NAMES)
@pytest.mark.parametrize("suffix", ["", "/versions/1"])
def test_model_ready_answers_200_ready_true(demo_server, model, suffix):
    resp = demo_server.get(f"/v2/models/{model}{suffix}/ready")
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["name"] == model
    assert body["ready"] is True


def test_repository_index_lists_all_four_ready(demo_server):
    resp = demo_server.post("/v2/repository/index", raw="")
    assert resp.status_code == 200, resp.text
    index = resp.json()
    assert isinstance(index, list)
    by_name = {entry["name"]: entry for entry in index}
    assert sorted(by_name) == sorted(DEMO_MODEL_NAMES), index
    assert len(index) == len(DEMO_MODEL_NAMES), f"duplicate entries: {index}"
    for name, entry in by_name.items():
        assert entry["state"] == "READY", entry
        assert entry["version"] == "1", entry
        assert entry.get("reason", "") == "", entry


def test_repository_index_accepts_an_empty_json_object(demo_server):
    resp = demo_server.post("/v2/repository/index", {})
    assert resp.status_code == 200, resp.text
    assert sorted(e["name"] for e in resp.json()) == sorted(DEMO_MODEL_NAMES)


# --- 404 -----------------------------------------------------------------------------------

@pytest.mark.parametrize("method,path", [
    ("GET", "/v2/models/no_such_model"),
    ("GET", "/v2/models/no_such_model/versions/1"),
    ("GET", "/v2/models/no_such_model/ready"),
    ("POST", "/v2/models/no_such_model/infer"),
])
def test_unknown_model_is_404(demo_server, method, path):
    if method == "GET":
        resp = demo_server.get(path)
    else:
        resp = demo_server.post(path, sample_request("mlp_scorer"))
    assert_error(resp, 404, "no_such_model")


@pytest.mark.parametrize("method,path", [
    ("GET", "/v2/models/mlp_scorer/versions/2"),
    ("GET", "/v2/models/mlp_scorer/versions/2/ready"),
    ("POST", "/v2/models/mlp_scorer/versions/2/infer"),
    ("POST", "/v1/models/mlp_scorer/versions/2:predict"),
])
def test_unknown_version_is_404(demo_server, method, path):
    if method == "GET":
        resp = demo_server.get(path)
    elif path.startswith("/v1"):
        resp = demo_server.post(path, {"instances": [[0.0] * 256]})
    else:
        resp = demo_server.post(path, sample_request("mlp_scorer"))
    assert_error(resp, 404, "2")


@pytest.mark.parametrize("method,path", [
    ("GET", "/"),
    ("GET", "/nope"),
    ("GET", "/v2/nope"),
    ("GET", "/v2/health/nope"),
    ("GET", "/v2/models/mlp_scorer/nope"),
    ("GET", "/v2/models/mlp_scorer/versions/1/nope"),
    ("POST", "/v2/models/mlp_scorer/infer/extra"),
    ("POST", "/v1/models/mlp_scorer"),
    ("POST", "/v3/models/mlp_scorer/infer"),
])
def test_unknown_path_is_404(demo_server, method, path):
    resp = demo_server.get(path) if method == "GET" else demo_server.post(path, {})
    if path.startswith("/v1/"):
        # OpenAI's paths (TF-Serving's ':predict' aside) answer OpenAI's error object.
        assert resp.status_code == 404, resp.text[:500]
        error = resp.json()["error"]
        assert error["type"] == "not_found_error" and "unknown path" in error["message"], error
    else:
        assert_error(resp, 404)


# --- 405 -----------------------------------------------------------------------------------

@pytest.mark.parametrize("method,path,allowed", [
    ("POST", "/v2", "GET"),
    ("POST", "/v2/health/live", "GET"),
    ("POST", "/v2/health/ready", "GET"),
    ("POST", "/v2/models/mlp_scorer", "GET"),
    ("POST", "/v2/models/mlp_scorer/versions/1", "GET"),
    ("POST", "/v2/models/mlp_scorer/ready", "GET"),
    ("GET", "/v2/models/mlp_scorer/infer", "POST"),
    ("GET", "/v2/models/mlp_scorer/versions/1/infer", "POST"),
    ("GET", "/v2/repository/index", "POST"),
    ("GET", "/predict", "POST"),
    ("GET", "/v1/models/digits:predict", "POST"),
    ("PUT", "/v2/models/mlp_scorer/infer", "POST"),
    ("DELETE", "/v2/models/mlp_scorer", "GET"),
])
def test_wrong_method_is_405_with_allow_header(demo_server, method, path, allowed):
    import requests
    resp = requests.request(method, demo_server.url + path, timeout=30)
    assert_error(resp, 405)
    assert resp.headers.get("Allow") == allowed, resp.headers


# --- 400 for versions that are not numbers ---------------------------------------------------

@pytest.mark.parametrize("version", ["007", "abc", "1a", "-1", "01"])
@pytest.mark.parametrize("suffix", ["", "/ready", "/infer"])
def test_non_numeric_version_is_400(demo_server, version, suffix):
    path = f"/v2/models/mlp_scorer/versions/{version}{suffix}"
    if suffix == "/infer":
        resp = demo_server.post(path, sample_request("mlp_scorer"))
    else:
        resp = demo_server.get(path)
    assert_error(resp, 400, version)


def test_head_reply_has_no_body_and_the_connection_stays_usable(demo_server):
    """A reply to HEAD announces its length but sends no body (RFC 9110 9.3.2); bytes after
    the head would be read as the start of the next reply on the same connection."""
    conn = http.client.HTTPConnection("127.0.0.1", demo_server.port, timeout=10)
    try:
        conn.request("HEAD", "/v2/health/live")
        head = conn.getresponse()
        assert head.status == 405
        assert int(head.getheader("Content-Length")) > 0
        assert head.read() == b""
        conn.request("GET", "/v2/health/live")
        live = conn.getresponse()
        assert live.status == 200
        assert live.read() == b'{"live":true}'
    finally:
        conn.close()
