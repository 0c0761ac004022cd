"""Bad requests get the documented status and an actionable {"error": ...}, and the server
keeps serving afterwards."""

import json

import numpy as np
import pytest
import requests

from inferd_harness import (assert_close, assert_error, output_array, sample_request)

MLP = "/v2/models/mlp_scorer/infer"
TEXT = "/v2/models/text_classifier/infer"


def _mlp_input(**changes):
    item = sample_request("mlp_scorer")["inputs"][0]
    item.update(changes)
    return item


def _mlp_without(field):
    item = _mlp_input()
    del item[field]
    return {"inputs": [item]}


def _text_with_first_token(value):
    item = sample_request("text_classifier")["inputs"][0]
    item["data"] = [value] + item["data"][1:]
    return {"inputs": [item]}


# (id, path, body: dict/list or raw str, status, fragments the message must mention)
BAD_REQUESTS = [
    ("malformed_json", MLP, '{"inputs": [', 400, ["JSON"]),
    ("empty_body", MLP, "", 400, ["empty"]),
    ("body_is_an_array", MLP, "[1, 2, 3]", 400, ["object"]),
    ("body_is_a_string", MLP, '"hello"', 400, ["object"]),
    ("missing_inputs", MLP, {"id": "x"}, 400, ["inputs"]),
    ("inputs_not_a_list", MLP, {"inputs": _mlp_input()}, 400, ["inputs"]),
    ("zero_inputs", MLP, {"inputs": []}, 400, ["inputs"]),
    ("unknown_input_name", MLP, {"inputs": [_mlp_input(name="no_such_input")]}, 400,
     ["no_such_input", "features"]),
    ("duplicate_input", MLP, {"inputs": [_mlp_input(), _mlp_input()]}, 400, ["features"]),
    ("input_without_name", MLP, _mlp_without("name"), 400, ["name"]),
    ("input_without_datatype", MLP, _mlp_without("datatype"), 400, ["datatype"]),
    ("input_without_shape", MLP, _mlp_without("shape"), 400, ["shape"]),
    ("input_without_data", MLP, _mlp_without("data"), 400, ["data"]),
    ("wrong_datatype_fp64_for_fp32", MLP, {"inputs": [_mlp_input(datatype="FP64")]}, 400,
     ["FP64", "FP32"]),
    ("wrong_datatype_fp32_for_int64", TEXT,
     {"inputs": [dict(sample_request("text_classifier")["inputs"][0], datatype="FP32")]}, 400,
     ["FP32", "INT64"]),
    ("unknown_datatype", MLP, {"inputs": [_mlp_input(datatype="FLOAT")]}, 400, ["FLOAT"]),
    ("too_few_elements_for_shape", MLP,
     {"inputs": [_mlp_input(data=sample_request("mlp_scorer")["inputs"][0]["data"][:-1])]}, 400,
     ["512", "511"]),
    ("too_many_elements_for_shape", MLP,
     {"inputs": [_mlp_input(data=sample_request("mlp_scorer")["inputs"][0]["data"] + [0.5])]},
     400, ["512", "513"]),
    ("shape_not_accepted", MLP, {"inputs": [_mlp_input(shape=[1, 255], data=[0.5] * 255)]}, 400,
     ["255", "256"]),
    ("shape_without_batch_dimension", MLP, {"inputs": [_mlp_input(shape=[512])]}, 400,
     ["512"]),
    ("negative_shape", MLP, {"inputs": [_mlp_input(shape=[-2, -256])]}, 400, ["shape"]),
    ("zero_batch", MLP, {"inputs": [_mlp_input(shape=[0, 256], data=[])]}, 400, ["batch"]),
    ("batch_over_max_batch_size", MLP,
     {"inputs": [_mlp_input(shape=[33, 256], data=[0.5] * (33 * 256))]}, 400, ["33", "32"]),
    ("non_numeric_data", MLP,
     {"inputs": [_mlp_input(data=["abc"] + [0.5] * 511)]}, 400, ["abc"]),
    ("null_in_data", MLP, {"inputs": [_mlp_input(data=[None] + [0.5] * 511)]}, 400, ["null"]),
    ("bool_in_fp32_data", MLP, {"inputs": [_mlp_input(data=[True] + [0.5] * 511)]}, 400,
     ["true"]),
    ("float_in_int64_data", TEXT, _text_with_first_token(1.5), 400, ["INT64", "integer"]),
    ("int64_above_range", TEXT, _text_with_first_token(2**63), 400, ["range"]),
    # The next two are JSON integers outside INT64 as well; the message must say so (and not
    # claim the body is not JSON, which it is).
    ("int64_far_above_range", TEXT, _text_with_first_token(2**64), 400, ["range"]),
    ("int64_below_range", TEXT, _text_with_first_token(-(2**63) - 1), 400, ["range"]),
    ("unknown_requested_output", MLP,
     dict(sample_request("mlp_scorer"), outputs=[{"name": "no_such_output"}]), 400,
     ["no_such_output"]),
    ("outputs_not_a_list", MLP, dict(sample_request("mlp_scorer"), outputs="score"), 400,
     ["outputs"]),
    ("id_not_a_string", MLP, dict(sample_request("mlp_scorer"), id=5), 400, ["id"]),
    ("unknown_model", "/v2/models/no_such_model/infer", sample_request("mlp_scorer"), 404,
     ["no_such_model"]),
]


def _send(server, path, body, session=None):
    if isinstance(body, str):
        return server.post(path, raw=body, session=session)
    return server.post(path, body, session=session)


def assert_serves_mlp_correctly(server, torch_ref, session=None):
    request = sample_request("mlp_scorer")
    resp = server.post(MLP, request, session=session)
    assert resp.status_code == 200, f"valid request after bad ones: {resp.status_code} {resp.text}"
    rows = np.asarray(request["inputs"][0]["data"], dtype=np.float32).reshape(2, 256)
    assert_close(output_array(resp.json(), "score"), torch_ref.run("mlp_scorer", rows))


@pytest.mark.parametrize("path,body,status,fragments",
                         [case[1:] for case in BAD_REQUESTS], ids=[c[0] for c in BAD_REQUESTS])
def test_bad_request_is_rejected_with_a_message(demo_server, torch_ref, path, body, status,
                                               fragments):
    assert_error(_send(demo_server, path, body), status, *fragments)
    assert_serves_mlp_correctly(demo_server, torch_ref)


def test_integer_literal_beyond_64_bits_is_a_clear_400(demo_server, torch_ref):
    # docs/http-api.md: an integer literal must fit in 64 bits, even for a float input; the
    # error says so and how to write such a number instead.
    request = sample_request("mlp_scorer")
    request["inputs"][0]["data"][0] = 123456789012345678901234
    assert_error(demo_server.post(MLP, request), 400, "64 bits", "exponent")
    assert_serves_mlp_correctly(demo_server, torch_ref)
    request["inputs"][0]["data"][0] = 1.2345678901234568e23
    assert demo_server.post(MLP, request).status_code == 200


def test_engine_failure_is_500_and_the_server_keeps_serving(demo_server, torch_ref):
    # Token id -1 passes validation (a valid INT64) but the embedding lookup fails in LibTorch.
    resp = demo_server.post(TEXT, _text_with_first_token(-1))
    assert_error(resp, 500, "text_classifier")
    assert_serves_mlp_correctly(demo_server, torch_ref)
    good = demo_server.post(TEXT, sample_request("text_classifier"))
    assert good.status_code == 200, good.text


def test_all_bad_requests_on_one_connection_then_a_good_one(demo_server, torch_ref):
    with requests.Session() as session:
        for name, path, body, status, _ in BAD_REQUESTS:
            resp = _send(demo_server, path, body, session=session)
            assert resp.status_code == status, f"{name}: {resp.status_code} {resp.text[:300]}"
        assert_serves_mlp_correctly(demo_server, torch_ref, session=session)
    assert demo_server.get("/v2/health/ready").status_code == 200
    assert demo_server.proc.poll() is None, "the server exited"


# --- body size limit (its own server) --------------------------------------------------------

LIMIT = 1 << 20


def _padded_request(total_bytes):
    request = sample_request("mlp_scorer")
    request["id"] = ""
    base = len(json.dumps(request))
    request["id"] = "x" * (total_bytes - base)
    raw = json.dumps(request)
    assert len(raw) == total_bytes
    return raw


def test_body_over_the_limit_is_413_and_the_server_keeps_serving(start_server, small_repository,
                                                                 torch_ref):
    server = start_server(small_repository, "--max-request-bytes", str(LIMIT))
    resp = server.post(MLP, raw=_padded_request(2 * LIMIT))
    assert_error(resp, 413, str(LIMIT))

    # Without Content-Length (chunked), the limit still holds.
    raw = _padded_request(2 * LIMIT).encode()
    chunks = (raw[i:i + 65536] for i in range(0, len(raw), 65536))
    resp = server.post(MLP, raw=chunks)
    assert_error(resp, 413, str(LIMIT))

    # A body just under the limit is served.
    resp = server.post(MLP, raw=_padded_request(LIMIT - 1024))
    assert resp.status_code == 200, resp.text[:300]
    assert_serves_mlp_correctly(server, torch_ref)
