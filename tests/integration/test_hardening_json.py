"""Every JSON body on every endpoint goes through one parser with a depth and a size limit.

Regression (issue 13, defect 1): POST /v2/logging parsed its body with RapidJSON's recursive
parser, and a few million '[' crashed the process (SIGSEGV)."""

from __future__ import annotations

import pytest

from inferd_harness import assert_error

UNBALANCED = "[" * 3_000_000
DEEP = "[" * 1_000_000 + "]" * 1_000_000

ENDPOINTS = [
    "/v2/logging",
    "/v2/models/mlp_scorer/infer",
    "/v1/models/mlp_scorer:predict",
    "/predict?model=mlp_scorer",
    "/v2/repository/models/mlp_scorer/traffic",
]


@pytest.fixture
def server(start_server, small_repository):
    return start_server(small_repository)


@pytest.mark.parametrize("path", ENDPOINTS)
def test_deeply_nested_body_is_a_400_and_the_server_lives(server, path):
    assert_error(server.post(path, raw=UNBALANCED), 400)
    resp = server.post(path, raw=DEEP)
    assert_error(resp, 400, "deeper than 64 levels")
    assert server.get("/v2/health/live").status_code == 200
    assert server.proc.poll() is None


@pytest.mark.parametrize("path", ENDPOINTS)
def test_nesting_just_inside_the_limit_is_judged_on_its_content(server, path):
    resp = server.post(path, raw="[" * 60 + "]" * 60)
    assert resp.status_code == 400, resp.text
    assert "deeper than" not in resp.text


def test_json_body_over_the_json_limit_names_the_binary_extension(start_server,
                                                                   small_repository):
    # A request limit above the JSON one (64 MiB), so that the JSON limit is what answers.
    server = start_server(small_repository, "--max-request-bytes", str(96 << 20))
    body = '{"inputs": [{"name": "features", "datatype": "FP32", "shape": [1, 256], "data": [' + \
        " " * (65 << 20) + "]}]}"
    resp = server.post("/v2/models/mlp_scorer/infer", raw=body)
    assert_error(resp, 400, "over the limit of 67108864 bytes for JSON",
                 "binary tensor extension", "Inference-Header-Content-Length")


def test_body_over_the_request_limit_is_a_413_naming_it(server):
    body = '{"inputs": [' + " " * (65 << 20) + "]}"
    resp = server.post("/v2/models/mlp_scorer/infer", raw=body)
    assert resp.status_code == 413, resp.text[:300]
    assert "max-request-bytes" in resp.text, resp.text[:300]
