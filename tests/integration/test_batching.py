"""Dynamic batching against the real binary: requests merged into batches still get exactly
their own answers, the statistics extension counts rows and batches, auto-tuning reports its
table, and BATCH_SIZE / MAX_WORKERS fill configs that leave the fields out."""

import http.client
import json
import os
import re
import subprocess
import threading
from pathlib import Path

import numpy as np

import pytest

from inferd_harness import (INFERD_BINARY, assert_close, assert_error, clean_env, edit_config,
                            make_repository, output_array)


def _model_stats(server, model):
    resp = server.get(f"/v2/models/{model}/stats")
    assert resp.status_code == 200, resp.text
    stats = resp.json()["model_stats"]
    assert len(stats) == 1, stats
    return stats[0]


N_CLIENTS = 200
REQUESTS_PER_CLIENT = 2


def test_concurrent_clients_get_their_own_rows_from_merged_batches(start_server, tmp_path,
                                                                     torch_ref):
    repo = make_repository(tmp_path / "repo", {"mlp_scorer": "mlp_scorer"})
    config = repo / "mlp_scorer" / "config.yaml"
    assert "max_batch_size: 32" in config.read_text()
    config.write_text(config.read_text() + "dynamic_batching: {max_queue_delay_us: 2000}\n")
    server = start_server(repo)

    n = N_CLIENTS * REQUESTS_PER_CLIENT
    # Request k carries 1, 2 or 3 rows of its own, all different: an answer holding another
    # request's rows has the wrong numbers (and most likely the wrong shape).
    sizes = [1 + (k * 7) % 3 for k in range(n)]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
    rows = np.random.RandomState(99).uniform(-3, 3, size=(sum(sizes), 256)).astype(np.float32)
    want = torch_ref.run("mlp_scorer", rows)[:, 0]
    got = np.full(len(rows), np.nan)

    all_open = threading.Barrier(N_CLIENTS, timeout=60)
    errors = []

    def infer(conn, k):
        mine = rows[starts[k]:starts[k] + sizes[k]]
        body = json.dumps({"id": f"r{k}", "inputs": [
            {"name": "features", "datatype": "FP32", "shape": [sizes[k], 256],
             "data": mine.ravel().tolist()}]})
        conn.request("POST", "/v2/models/mlp_scorer/infer", body=body,
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        text = resp.read().decode()
        assert resp.status == 200, f"request {k}: {resp.status} {text[:300]}"
        answer = json.loads(text)
        assert answer["id"] == f"r{k}", f"request {k} got the answer for {answer['id']}"
        assert answer["outputs"][0]["shape"] == [sizes[k], 1], answer["outputs"][0]["shape"]
        got[starts[k]:starts[k] + sizes[k]] = answer["outputs"][0]["data"]

    def client(c):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
        try:
            conn.connect()
            all_open.wait()  # every client connected before the first request
            for r in range(REQUESTS_PER_CLIENT):
                infer(conn, c * REQUESTS_PER_CLIENT + r)  # keep-alive: same connection
        except BaseException as e:
            errors.append(f"client {c}: {e!r}")
            all_open.abort()
        finally:
            conn.close()

    threads = [threading.Thread(target=client, args=(c,), daemon=True) for c in range(N_CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    assert not any(t.is_alive() for t in threads), "clients still running after 180 s"
    real_errors = [e for e in errors if "BrokenBarrierError" not in e] or errors
    assert not real_errors, f"{len(errors)} client(s) failed, e.g. {real_errors[:5]}"
    assert not np.isnan(got).any(), f"{int(np.isnan(got).sum())} rows unanswered"
    assert_close(got, want, what="scores")

    stats = _model_stats(server, "mlp_scorer")
    assert stats["inference_count"] == len(rows), stats
    assert stats["inference_stats"]["success"]["count"] == n, stats
    assert stats["inference_stats"]["fail"]["count"] == 0, stats
    # Batches formed: fewer engine calls than requests, none over max_batch_size.
    assert stats["execution_count"] < n, stats
    batch_sizes = {b["batch_size"]: b["compute_infer"]["count"] for b in stats["batch_stats"]}
    assert max(batch_sizes) <= 32, batch_sizes
    assert max(batch_sizes) > 3, f"no batch merged several requests: {batch_sizes}"
    assert sum(batch_sizes.values()) == stats["execution_count"], stats
    assert sum(size * count for size, count in batch_sizes.items()) == len(rows), batch_sizes
    assert stats["batching"] == {"dynamic": True, "source": "config", "max_batch_size": 32,
                                 "preferred_batch_sizes": [], "max_queue_delay_us": 2000}


def test_stats_of_all_models_and_one_version(start_server, small_repository, torch_ref):
    server = start_server(small_repository)
    x = np.random.RandomState(3).uniform(0, 16, size=(3, 64)).astype(np.float32)
    resp = server.post("/v2/models/digits/infer", {"inputs": [
        {"name": "pixels", "datatype": "FP32", "shape": [3, 64], "data": x.ravel().tolist()}]})
    assert resp.status_code == 200, resp.text
    assert_close(output_array(resp.json(), "probabilities"), torch_ref.run("digits", x))

    everything = server.get("/v2/models/stats")
    assert everything.status_code == 200, everything.text
    by_name = {s["name"]: s for s in everything.json()["model_stats"]}
    assert sorted(by_name) == ["digits", "mlp_scorer"]
    digits = by_name["digits"]
    assert digits["version"] == "1"
    assert digits["inference_count"] == 3
    assert digits["execution_count"] == 1
    assert digits["last_inference"] > 0
    assert digits["inference_stats"]["success"]["count"] == 1
    assert digits["inference_stats"]["compute_infer"]["ns"] > 0
    assert [b["batch_size"] for b in digits["batch_stats"]] == [3]
    assert digits["batching"]["dynamic"] is True  # max_batch_size 64 and no section
    assert digits["batching"]["source"] == "default"
    assert by_name["mlp_scorer"]["inference_count"] == 0
    assert by_name["mlp_scorer"]["batch_stats"] == []

    versioned = server.get("/v2/models/digits/versions/1/stats")
    assert versioned.status_code == 200, versioned.text
    assert versioned.json()["model_stats"][0]["inference_count"] == 3
    assert_error(server.get("/v2/models/digits/versions/7/stats"), 404)
    assert_error(server.get("/v2/models/nope/stats"), 404, "nope")


def test_auto_tune_reports_its_table_and_uses_the_chosen_size(start_server, tmp_path, torch_ref):
    repo = make_repository(tmp_path / "repo", {"mlp_scorer": "mlp_scorer"})
    config = repo / "mlp_scorer" / "config.yaml"
    config.write_text(config.read_text() +
                      "dynamic_batching: {auto_tune: true, latency_slo_ms: 100}\n")
    server = start_server(repo)

    batching = _model_stats(server, "mlp_scorer")["batching"]
    tuning = batching["auto_tune"]
    assert tuning["latency_slo_ms"] == 100
    table = tuning["table"]
    assert table, tuning
    sizes = [row["batch_size"] for row in table]
    assert sizes == sorted(sizes) and sizes[0] == 1, sizes
    assert set(sizes) <= {1, 2, 4, 8, 16, 32}, sizes
    for row in table:
        assert row["latency_ms"] > 0, row
        assert row["items_per_s"] > 0, row
        assert row["within_slo"] == (2 * row["latency_ms"] <= 100), row
    chosen = tuning["chosen_batch_size"]
    assert 1 <= chosen <= 32, tuning
    assert chosen in sizes, tuning
    chosen_row = table[sizes.index(chosen)]
    assert chosen_row["within_slo"] or chosen == 1, tuning
    # With more than one core the chosen size is also timed on one intra-op thread (unless a
    # larger backlog size exists), and the faster count is kept.
    cores = len(os.sched_getaffinity(0))
    trials = tuning["thread_trials"]
    if cores > 1 and tuning["backlog_batch_size"] == chosen:
        assert [t["intra_op_threads"] for t in trials] == [1], tuning
        assert trials[0]["batch_size"] == chosen and trials[0]["items_per_s"] > 0, tuning
        assert tuning["intra_op_threads"] in (1, cores), tuning
        assert "intra-op threads kept" in server.log()
    else:
        assert trials == [] and tuning["intra_op_threads"] == 0, tuning
    # The served policy is the tuned one.
    assert batching["dynamic"] is True
    assert batching["max_batch_size"] == chosen
    assert batching["preferred_batch_sizes"] == [chosen]
    assert "batch sizes measured" in server.log()

    # Requests of up to the config's max_batch_size are still accepted and correct.
    x = np.random.RandomState(5).uniform(-1, 1, size=(32, 256)).astype(np.float32)
    resp = server.post("/v2/models/mlp_scorer/infer", {"inputs": [
        {"name": "features", "datatype": "FP32", "shape": [32, 256], "data": x.ravel().tolist()}]})
    assert resp.status_code == 200, resp.text
    assert_close(output_array(resp.json(), "score"), torch_ref.run("mlp_scorer", x))


def test_batch_size_env_fills_a_config_without_max_batch_size(start_server, tmp_path, torch_ref):
    repo = make_repository(tmp_path / "repo", {"digits": "digits", "mlp_scorer": "mlp_scorer"})
    edit_config(repo / "digits", lambda c: c.pop("max_batch_size"))
    server = start_server(repo, env={"BATCH_SIZE": "16"})

    meta = server.get("/v2/models/digits").json()
    assert meta["inputs"] == [{"name": "pixels", "datatype": "FP32", "shape": [-1, 64]}], meta
    x = np.random.RandomState(4).uniform(0, 16, size=(17, 64)).astype(np.float32)
    too_many = server.post("/v2/models/digits/infer", {"inputs": [
        {"name": "pixels", "datatype": "FP32", "shape": [17, 64], "data": x.ravel().tolist()}]})
    assert_error(too_many, 400, "batch size 17", "max_batch_size 16")
    ok = server.post("/v2/models/digits/infer", {"inputs": [
        {"name": "pixels", "datatype": "FP32", "shape": [16, 64],
         "data": x[:16].ravel().tolist()}]})
    assert ok.status_code == 200, ok.text
    assert_close(output_array(ok.json(), "probabilities"), torch_ref.run("digits", x[:16]))
    # A config's own max_batch_size wins over the environment.
    assert _model_stats(server, "digits")["batching"]["max_batch_size"] == 16
    assert _model_stats(server, "mlp_scorer")["batching"]["max_batch_size"] == 32


def _instance_thread_names(pid):
    """The names of a process's execution-instance threads (Linux): "model:v#i", i a number
    (each model also has a deadline watcher, "model:v#t")."""
    names = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            names.append((task / "comm").read_text().strip())
        except OSError:
            pass  # the thread ended meanwhile
    return [n for n in names if re.fullmatch(r".+:\d+#\d+", n)]


def test_max_workers_env_sets_instances_of_configs_without_them(start_server, tmp_path):
    repo = make_repository(tmp_path / "repo", {"digits": "digits", "mlp_scorer": "mlp_scorer"})
    edit_config(repo / "digits", lambda c: c.pop("instances"))
    server = start_server(repo, env={"MAX_WORKERS": "3"})

    names = _instance_thread_names(server.proc.pid)
    assert sorted(n for n in names if n.startswith("digits:1#")) == \
        ["digits:1#0", "digits:1#1", "digits:1#2"], names
    # mlp_scorer's config says one instance.
    assert [n for n in names if n.startswith("mlp_scorer:1#")] == ["mlp_scorer:1#0"], names


@pytest.mark.parametrize("env,fragment", [
    ({"MAX_WORKERS": "0"}, 'environment variable MAX_WORKERS="0"'),
    ({"BATCH_SIZE": "-1"}, 'environment variable BATCH_SIZE="-1"'),
    ({"BATCH_SIZE": "lots"}, 'environment variable BATCH_SIZE="lots"'),
])
def test_bad_batch_size_or_max_workers_env_exits_nonzero(small_repository, env, fragment):
    result = subprocess.run(
        [str(INFERD_BINARY), "--model-repository", str(small_repository), "--http-port",
         "0", "--host", "127.0.0.1"], capture_output=True, text=True, timeout=30,
        env=clean_env(env), stdin=subprocess.DEVNULL)
    assert result.returncode != 0
    assert fragment in result.stdout + result.stderr, result.stdout + result.stderr
