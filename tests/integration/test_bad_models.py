"""A repository with broken models: each one is UNAVAILABLE with a reason that names the file
and the field at fault, and every good model beside them is READY and serves correctly."""

import shutil

import numpy as np
import pytest

from inferd_harness import (DEMO_MODELS, InferdServer, assert_close, assert_error, edit_config,
                            output_array, sample_request)

GOOD = ["mlp_scorer", "digits", "odd_version_dirs", "one_thread"]
BROKEN = ["config_typo", "garbage_weights", "wrong_output_dims", "no_version_folder",
          "invalid_yaml", "missing_config", "bad_thread_count"]


def _copy(demo, root, name):
    shutil.copytree(DEMO_MODELS / demo, root / name)
    return root / name


@pytest.fixture(scope="module")
def bad_repo_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad_repo")
    _copy("mlp_scorer", root, "mlp_scorer")
    _copy("digits", root, "digits")

    typo = _copy("mlp_scorer", root, "config_typo")
    edit_config(typo, lambda c: c.update(max_batchsize=4) or c.pop("max_batch_size"))

    garbage = _copy("digits", root, "garbage_weights")
    (garbage / "1" / "model.pt").write_bytes(bytes(range(256)) * 40)

    wrong_dims = _copy("digits", root, "wrong_output_dims")
    edit_config(wrong_dims, lambda c: c["outputs"][0].update(dims=[7]))

    no_version = root / "no_version_folder"
    no_version.mkdir()
    shutil.copy(DEMO_MODELS / "digits" / "config.yaml", no_version / "config.yaml")

    invalid_yaml = _copy("digits", root, "invalid_yaml")
    (invalid_yaml / "config.yaml").write_text("backend: torch\ninputs: [\n  - {name: x\n")

    missing_config = _copy("digits", root, "missing_config")
    (missing_config / "config.yaml").unlink()

    # Folders that are not version numbers are ignored, even with a model.pt inside.
    odd = _copy("mlp_scorer", root, "odd_version_dirs")
    for name in ["007", "1a", "-1"]:
        (odd / name).mkdir()
        (odd / name / "model.pt").write_bytes(b"not a model")

    # A model's own intra-op thread count (torch backend parameter), valid and not.
    one_thread = _copy("mlp_scorer", root, "one_thread")
    edit_config(one_thread, lambda c: c.update(parameters={"intra_op_threads": 1}))
    bad_threads = _copy("mlp_scorer", root, "bad_thread_count")
    edit_config(bad_threads, lambda c: c.update(parameters={"intra_op_threads": 0}))

    server = InferdServer(root, root / "inferd.log", name="bad_repo_server").start()
    yield server
    server.stop()


def _index(server):
    resp = server.post("/v2/repository/index", raw="")
    assert resp.status_code == 200, resp.text
    return {entry["name"]: entry for entry in resp.json()}


def test_index_lists_every_model(bad_repo_server):
    assert sorted(_index(bad_repo_server)) == sorted(GOOD + BROKEN)


@pytest.mark.parametrize("model", GOOD)
def test_good_models_are_ready(bad_repo_server, model):
    entry = _index(bad_repo_server)[model]
    assert entry["state"] == "READY", entry
    assert entry["version"] == "1", entry
    resp = bad_repo_server.get(f"/v2/models/{model}/ready")
    assert resp.status_code == 200, resp.text
    assert resp.json()["ready"] is True


@pytest.mark.parametrize("model,fragments", [
    ("config_typo", ["config.yaml", "max_batchsize"]),
    ("garbage_weights", ["model.pt"]),
    ("wrong_output_dims", ["config.yaml", "outputs"]),
    ("no_version_folder", ["no_version_folder", "version"]),
    ("invalid_yaml", ["config.yaml"]),
    ("missing_config", ["config.yaml"]),
    ("bad_thread_count", ["config.yaml", "parameters.intra_op_threads",
                          "must be a thread count in 1..1024, got '0'"]),
])
def test_broken_model_is_unavailable_with_reason(bad_repo_server, model, fragments):
    entry = _index(bad_repo_server)[model]
    assert entry["state"] == "UNAVAILABLE", entry
    reason = entry["reason"]
    assert isinstance(reason, str) and reason, entry
    for fragment in fragments:
        assert fragment in reason, f"reason does not mention {fragment!r}: {reason!r}"


def test_garbage_weights_reason_names_the_version_folder_file(bad_repo_server):
    reason = _index(bad_repo_server)["garbage_weights"]["reason"]
    assert "garbage_weights/1/model.pt" in reason, reason


def test_wrong_output_dims_reason_names_the_dims(bad_repo_server):
    reason = _index(bad_repo_server)["wrong_output_dims"]["reason"]
    assert "outputs[0].dims" in reason, reason
    assert "7" in reason and "10" in reason, reason


@pytest.mark.parametrize("model", BROKEN)
def test_infer_on_a_broken_model_is_503_with_the_reason(bad_repo_server, model):
    reason = _index(bad_repo_server)[model]["reason"]
    resp = bad_repo_server.post(f"/v2/models/{model}/infer", sample_request("digits"))
    message = assert_error(resp, 503, model)
    assert reason in message, f"503 message {message!r} lacks the load reason {reason!r}"


@pytest.mark.parametrize("model", BROKEN)
def test_ready_on_a_broken_model_is_503_ready_false(bad_repo_server, model):
    resp = bad_repo_server.get(f"/v2/models/{model}/ready")
    assert resp.status_code == 503, resp.text
    body = resp.json()
    assert body["ready"] is False, body
    assert body.get("name") == model, body
    assert isinstance(body.get("reason"), str) and body["reason"], body


@pytest.mark.parametrize("path,body", [
    ("/predict?model=garbage_weights", {"input": [0.0] * 64}),
    ("/v1/models/garbage_weights:predict", {"instances": [[0.0] * 64]}),
])
def test_other_dialects_on_a_broken_model_are_503(bad_repo_server, path, body):
    assert_error(bad_repo_server.post(path, body), 503, "model.pt")


def test_server_is_ready_with_broken_models_present(bad_repo_server):
    resp = bad_repo_server.get("/v2/health/ready")
    assert resp.status_code == 200, resp.text


def test_odd_version_folders_are_ignored(bad_repo_server, torch_ref):
    resp = bad_repo_server.get("/v2/models/odd_version_dirs")
    assert resp.status_code == 200, resp.text
    assert resp.json()["versions"] == ["1"]
    request = sample_request("mlp_scorer")
    resp = bad_repo_server.post("/v2/models/odd_version_dirs/infer", request)
    assert resp.status_code == 200, resp.text
    assert resp.json()["model_version"] == "1"
    rows = np.asarray(request["inputs"][0]["data"], dtype=np.float32).reshape(2, 256)
    assert_close(output_array(resp.json(), "score"), torch_ref.run("mlp_scorer", rows))
    # The ignored folders are not versions.
    assert bad_repo_server.get("/v2/models/odd_version_dirs/versions/7").status_code == 404
    assert bad_repo_server.get("/v2/models/odd_version_dirs/versions/007").status_code == 400


def test_good_models_serve_correctly_beside_broken_ones(bad_repo_server, torch_ref):
    request = sample_request("mlp_scorer")
    rows = np.asarray(request["inputs"][0]["data"], dtype=np.float32).reshape(2, 256)
    for model in ("mlp_scorer", "one_thread"):
        resp = bad_repo_server.post(f"/v2/models/{model}/infer", request)
        assert resp.status_code == 200, resp.text
        assert_close(output_array(resp.json(), "score"), torch_ref.run("mlp_scorer", rows))

    request = sample_request("digits")
    resp = bad_repo_server.post("/v2/models/digits/infer", request)
    assert resp.status_code == 200, resp.text
    rows = np.asarray(request["inputs"][0]["data"], dtype=np.float32).reshape(2, 64)
    assert_close(output_array(resp.json(), "probabilities"), torch_ref.run("digits", rows))


def test_log_names_each_unavailable_model(bad_repo_server):
    log = bad_repo_server.log()
    lines = log.splitlines()
    for model in BROKEN:
        assert any(model in line and "UNAVAILABLE" in line for line in lines), (
            f"no log line says {model} is UNAVAILABLE")
