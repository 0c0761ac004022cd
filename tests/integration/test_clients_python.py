"""The Python client package (python/inferd_client), its example and inferd-cli against the
real server."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from inferd_harness import ATOL, DEMO_MODELS, REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "python"))
from inferd_client import Client, InferdError, Tensor  # noqa: E402

CLI = REPO_ROOT / "tools" / "bin" / "inferd-cli"


@pytest.fixture
def client(demo_server):
    with Client(f"127.0.0.1:{demo_server.port}") as c:
        yield c


def test_health_metadata_index_stats(client):
    assert client.is_live() and client.is_ready()
    assert client.is_model_ready("mlp_scorer")
    assert not client.is_model_ready("no_such_model")
    assert client.server_metadata()["name"] == "inferd"
    assert client.model_metadata("mlp_scorer")["inputs"][0]["name"] == "features"
    assert {m["name"] for m in client.repository_index()} >= {"mlp_scorer", "digits"}
    assert client.statistics("mlp_scorer")["model_stats"][0]["name"] == "mlp_scorer"


@pytest.mark.parametrize("binary", [True, False])
def test_infer_numpy(client, torch_ref, binary):
    x = np.random.default_rng(31).standard_normal((3, 256)).astype(np.float32)
    result = client.infer("mlp_scorer", {"features": x}, binary=binary, request_id="py-1")
    assert result.id == "py-1" and result.model_version == "1"
    np.testing.assert_allclose(result.as_numpy("score"), torch_ref.run("mlp_scorer", x), atol=ATOL)


@pytest.mark.parametrize("binary", [True, False])
def test_infer_plain_lists_int64(client, torch_ref, binary):
    tokens = [[(i * 7) % 500 for i in range(128)]]
    result = client.infer("text_classifier", {"token_ids": tokens}, outputs=["logits"],
                          binary=binary, datatypes={"token_ids": "INT64"})
    logits = result.outputs["logits"]
    assert logits.shape == [1, 2] and logits.datatype == "FP32"
    np.testing.assert_allclose(np.array(logits.nested()),
                               torch_ref.run("text_classifier", np.array(tokens)), atol=ATOL)


def test_errors_raise_with_status_and_message(client):
    with pytest.raises(InferdError) as error:
        client.infer("mlp_scorer", {"features": np.zeros((1, 3), np.float32)})
    assert error.value.status == 400 and "shape [1,3]" in error.value.message
    with pytest.raises(InferdError) as error:
        client.model_metadata("no_such_model")
    assert error.value.status == 404
    assert client.is_ready()  # the connection survives error answers


def test_bytes_tensor_binary_round_trip():
    t = Tensor.from_value("t", [["ab", ""], ["\u00e9", "xyz"]], "BYTES")
    assert t.shape == [2, 2]
    back = Tensor.from_binary("t", "BYTES", t.shape, t.to_binary())
    assert back.data == [b"ab", b"", "\u00e9".encode(), b"xyz"]


def run_cli(demo_server, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(CLI), "--url", f"127.0.0.1:{demo_server.port}", *args],
                          capture_output=True, text=True, timeout=120)


def test_cli_health_list_metadata(demo_server):
    out = run_cli(demo_server, "health")
    assert out.returncode == 0 and json.loads(out.stdout) == {"live": True, "ready": True}
    out = run_cli(demo_server, "list")
    assert out.returncode == 0 and "mlp_scorer" in {m["name"] for m in json.loads(out.stdout)}
    out = run_cli(demo_server, "metadata", "digits")
    assert out.returncode == 0 and json.loads(out.stdout)["inputs"][0]["name"] == "pixels"


def test_cli_infer_from_json_sample(demo_server):
    sample = DEMO_MODELS / "digits" / "sample.json"
    out = run_cli(demo_server, "infer", "digits", "--json", str(sample))
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)["outputs"][0]
    expected = json.loads(sample.read_text())["expected_outputs"][0]
    assert answer["name"] == expected["name"] and answer["shape"] == expected["shape"]
    np.testing.assert_allclose(answer["data"], expected["data"], atol=ATOL)


def test_cli_infer_from_npy(demo_server, torch_ref, tmp_path):
    x = np.random.default_rng(32).standard_normal((2, 256)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = run_cli(demo_server, "infer", "mlp_scorer", "--npy", f"features={tmp_path / 'x.npy'}",
                  "--out", str(tmp_path / "y.npy"))
    assert out.returncode == 0, out.stderr
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), torch_ref.run("mlp_scorer", x),
                               atol=ATOL)


def test_cli_reports_errors_with_exit_code(demo_server):
    out = run_cli(demo_server, "metadata", "no_such_model")
    assert out.returncode == 2 and "404" in out.stderr
    out = run_cli(demo_server, "unload", "no_such_model")
    assert out.returncode == 2 and "404" in out.stderr


def test_cli_unload_and_load(start_server, small_repository):
    server = start_server(small_repository)  # its own server: the demo one keeps its models
    assert run_cli(server, "unload", "mlp_scorer").returncode == 0
    assert server.get("/v2/models/mlp_scorer/ready").status_code == 503
    out = run_cli(server, "load", "mlp_scorer")
    assert out.returncode == 0, out.stderr
    assert server.get("/v2/models/mlp_scorer/ready").status_code == 200


def test_example_runs(demo_server):
    out = subprocess.run([sys.executable, str(REPO_ROOT / "python" / "examples" / "infer_mlp.py"),
                          "--url", f"127.0.0.1:{demo_server.port}"],
                         capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(REPO_ROOT / "python")})
    assert out.returncode == 0, out.stderr
    assert "score (numpy)" in out.stdout
