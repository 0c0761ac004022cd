"""Traffic: labels and weighted splits between loaded versions, set in config.yaml and
changed at runtime; blue/green as an atomic label switch; per-version request counts."""

from __future__ import annotations

import requests

from inferd_harness import assert_error, sample_request
from lifecycle_helpers import copy_model, infer, lifecycle

CANARY_CONFIG = """version_policy: all
labels: {stable: 1, canary: 2}
traffic: {stable: 90, canary: 10}
"""


def _versions(server, n):
    counts = {}
    with requests.Session() as session:
        for _ in range(n):
            resp = infer(server, "m", "mlp_scorer", session=session)
            assert resp.status_code == 200, resp.text
            version = resp.json()["model_version"]
            counts[version] = counts.get(version, 0) + 1
    return counts


def test_canary_split_is_within_three_percent_over_2000_requests(start_server, tmp_path):
    copy_model(tmp_path / "repo", "m", "mlp_scorer", versions=(1, 2), extra_config=CANARY_CONFIG)
    server = start_server(tmp_path / "repo")
    counts = _versions(server, 2000)
    share = counts.get("2", 0) / 2000
    assert abs(share - 0.10) <= 0.03, counts
    per_version = {v["version"]: v["requests"] for v in lifecycle(server)["versions"]}
    assert per_version["1"] + per_version["2"] == 2000, per_version
    assert per_version["2"] == counts["2"], (per_version, counts)


def test_identical_versions_share_their_weights(start_server, tmp_path):
    copy_model(tmp_path / "repo", "m", "mlp_scorer", versions=(1, 2), extra_config=CANARY_CONFIG)
    server = start_server(tmp_path / "repo")
    report = lifecycle(server)
    assert all(v["shared_weights"] for v in report["versions"]), report["versions"]
    one = report["versions"][0]["memory_bytes"]
    assert report["devices"][0]["used_bytes"] == one, report


def test_blue_green_switch_and_runtime_weights(start_server, tmp_path):
    copy_model(tmp_path / "repo", "m", "mlp_scorer", versions=(1, 2), extra_config=CANARY_CONFIG)
    server = start_server(tmp_path / "repo")
    resp = server.post("/v2/repository/models/m/traffic",
                       {"labels": {"live": 1}, "traffic": {"live": 1}})
    assert resp.status_code == 200, resp.text
    assert _versions(server, 50) == {"1": 50}
    # Blue/green: one atomic label switch moves all traffic.
    resp = server.post("/v2/repository/models/m/traffic", {"labels": {"live": 2}})
    assert resp.status_code == 200, resp.text
    assert resp.json()["labels"] == {"live": 2}
    assert _versions(server, 50) == {"2": 50}
    assert server.get("/v2/repository/models/m/traffic").json() == \
        {"labels": {"live": 2}, "traffic": {"live": 1}}


def test_a_label_may_only_point_at_a_loaded_version(start_server, tmp_path):
    copy_model(tmp_path / "repo", "m", "mlp_scorer", versions=(1, 2), extra_config=CANARY_CONFIG)
    server = start_server(tmp_path / "repo")
    assert_error(server.post("/v2/repository/models/m/traffic", {"labels": {"next": 7}}),
                 400, "version 7", "not loaded")
    assert_error(server.post("/v2/repository/models/m/traffic", {"traffic": {"nightly": 5}}),
                 400, "neither a label nor a version")
    assert_error(server.post("/v2/repository/models/m/traffic", {"weights": {}}), 400,
                 "unknown field")
    assert_error(server.post("/v2/repository/models/nope/traffic", {}), 404, "nope")
    # The rules in force are unchanged.
    assert server.get("/v2/repository/models/m/traffic").json()["labels"] == \
        {"canary": 2, "stable": 1}


def test_tf_serving_labels_route_to_their_version(start_server, tmp_path):
    copy_model(tmp_path / "repo", "m", "mlp_scorer", versions=(1, 2), extra_config=CANARY_CONFIG)
    server = start_server(tmp_path / "repo")
    x = sample_request("mlp_scorer")["inputs"][0]["data"][:256]
    for _ in range(5):
        resp = server.post("/v1/models/m/labels/canary:predict", {"instances": [x]})
        assert resp.status_code == 200, resp.text
    per_version = {v["version"]: v["requests"] for v in lifecycle(server)["versions"]}
    assert per_version == {"1": 0, "2": 5}, per_version
    assert_error(server.post("/v1/models/m/labels/nightly:predict", {"instances": [x]}), 404,
                 "no label 'nightly'")
