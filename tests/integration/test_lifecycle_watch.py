"""--model-control watch: a version folder renamed into place loads at once; a folder being
copied loads only after its files stop changing for the settle interval (never half
copied); a new model folder loads; a removed one unloads; a broken config.yaml edit keeps
the loaded config serving."""

from __future__ import annotations

import os
import shutil
import time

from inferd_harness import DEMO_MODELS
from lifecycle_helpers import assert_sample_output, copy_model, infer, state, wait_for

SETTLE_MS = 1500


def _watching(start_server, repo):
    return start_server(repo, "--model-control", "watch", "--watch-interval-ms", "50",
                        "--settle-ms", str(SETTLE_MS))


def test_version_renamed_into_place_is_loaded_at_once(start_server, tmp_path):
    model_dir = copy_model(tmp_path / "repo", "m", "digits")
    server = _watching(start_server, tmp_path / "repo")
    staging = tmp_path / "staging"
    staging.mkdir()
    shutil.copy(DEMO_MODELS / "digits" / "1" / "model.pt", staging / "model.pt")
    start = time.monotonic()
    os.rename(staging, model_dir / "2")
    wait_for(lambda: infer(server, "m", "digits").json().get("model_version") == "2",
             timeout_s=10, what="version 2 to serve")
    # Well before the settle interval: the rename was recognised as a complete publish.
    assert time.monotonic() - start < SETTLE_MS / 1000, "renamed folder waited for the settle"
    assert server.get("/v2/models/m").json()["versions"] == ["2"]


def test_half_copied_file_is_never_loaded(start_server, tmp_path):
    model_dir = copy_model(tmp_path / "repo", "m", "digits")
    server = _watching(start_server, tmp_path / "repo")
    data = (DEMO_MODELS / "digits" / "1" / "model.pt").read_bytes()
    (model_dir / "2").mkdir()
    with open(model_dir / "2" / "model.pt", "wb") as f:
        # A slow copy: a chunk, then pauses shorter than the settle interval.
        for i in range(4):
            f.write(data[i * len(data) // 4:(i + 1) * len(data) // 4])
            f.flush()
            time.sleep(SETTLE_MS / 1000 / 3)
            row = state(server, "m", 2)
            assert row is None or row["state"] != "UNAVAILABLE", f"loaded half a file: {row}"
            assert infer(server, "m", "digits").json()["model_version"] == "1"
    wait_for(lambda: (state(server, "m", 2) or {}).get("state") == "READY", timeout_s=15,
             what="version 2 after the copy settled")
    assert "UNAVAILABLE" not in server.log()
    assert_sample_output(infer(server, "m", "digits"), "digits")


def test_new_model_folder_loads_and_a_removed_one_unloads(start_server, tmp_path):
    repo = tmp_path / "repo"
    copy_model(repo, "m", "digits")
    server = _watching(start_server, repo)
    copy_model(tmp_path / "staging", "n", "digits")
    os.rename(tmp_path / "staging" / "n", repo / "n")
    wait_for(lambda: infer(server, "n", "digits").status_code == 200, timeout_s=10,
             what="the new model")
    shutil.rmtree(repo / "n")
    wait_for(lambda: infer(server, "n", "digits").status_code != 200, timeout_s=10,
             what="the removed model to stop serving")
    assert_sample_output(infer(server, "m", "digits"), "digits")


def test_broken_config_edit_keeps_the_loaded_config_serving(start_server, tmp_path):
    model_dir = copy_model(tmp_path / "repo", "m", "digits")
    server = _watching(start_server, tmp_path / "repo")
    with open(model_dir / "config.yaml", "a") as f:
        f.write("max_batchsize: 3\n")
    wait_for(lambda: "config.yaml not applied" in server.log(), timeout_s=10,
             what="the rejected config")
    assert "max_batchsize" in server.log()
    assert_sample_output(infer(server, "m", "digits"), "digits")
