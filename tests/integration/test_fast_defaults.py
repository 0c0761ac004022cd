"""The defaults a plain config gets (issue 16): a model with max_batch_size and no
dynamic_batching section batches with no queue delay (a lone client's requests run alone,
concurrent ones are merged), its intra-op thread count is chosen at load and explained in
the statistics, and whatever config.yaml says wins over both."""

import http.client
import json
import os
import threading

import numpy as np

from inferd_harness import assert_close, edit_config, make_repository

CLIENTS = 8
REQUESTS_PER_CLIENT = 6
SMALL_RUN_MS = 1.0  # core/scheduling/intra_op_probe.h: kSmallRunMs
FEW_CORES = 4       # kFewCores


def _stats(server, model):
    resp = server.get(f"/v2/models/{model}/stats")
    assert resp.status_code == 200, resp.text
    return resp.json()["model_stats"][0]


def _token_rows(seed):
    return np.random.RandomState(seed).randint(0, 1000, size=(1, 128)).astype(np.int64)


def _infer(conn, rows):
    body = json.dumps({"inputs": [{"name": "token_ids", "datatype": "INT64",
                                   "shape": list(rows.shape), "data": rows.ravel().tolist()}]})
    conn.request("POST", "/v2/models/text_classifier/infer", body=body,
                 headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    text = resp.read().decode()
    assert resp.status == 200, f"{resp.status} {text[:300]}"
    out = json.loads(text)["outputs"][0]
    return np.reshape(out["data"], out["shape"])


def _run_clients(port, clients, torch_ref):
    """`clients` keep-alive connections, each sending REQUESTS_PER_CLIENT one-row requests at
    once after all have connected; every answer is checked against PyTorch's."""
    rows = [_token_rows(k) for k in range(clients * REQUESTS_PER_CLIENT)]
    got = [None] * len(rows)
    errors = []
    all_open = threading.Barrier(clients, timeout=60)

    def client(c):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        try:
            conn.connect()
            all_open.wait()
            for r in range(REQUESTS_PER_CLIENT):
                k = c * REQUESTS_PER_CLIENT + r
                got[k] = _infer(conn, rows[k])
        except BaseException as e:  # reported below
            errors.append(f"client {c}: {e!r}")
            all_open.abort()
        finally:
            conn.close()

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    assert not errors, errors[:5]
    want = torch_ref.run("text_classifier", np.concatenate(rows))
    for k, answer in enumerate(got):
        assert_close(answer, want[k:k + 1], what=f"request {k}")
    return len(rows)


def test_a_plain_config_batches_concurrent_requests_and_runs_a_lone_client_alone(
        start_server, tmp_path, torch_ref):
    repo = make_repository(tmp_path / "repo", {"text_classifier": "text_classifier"})
    config = (repo / "text_classifier" / "config.yaml").read_text()
    assert "max_batch_size: 16" in config and "dynamic_batching" not in config, config
    server = start_server(repo)

    batching = _stats(server, "text_classifier")["batching"]
    assert batching["dynamic"] is True and batching["source"] == "default", batching
    assert batching["max_queue_delay_us"] == 0 and batching["max_batch_size"] == 16, batching
    assert "dynamic batching up to 16 rows, no queue delay (the default" in server.log()

    # One client, one request at a time: nothing to merge, and no delay waiting for company.
    _run_clients(server.port, 1, torch_ref)
    alone = _stats(server, "text_classifier")
    assert alone["inference_count"] == REQUESTS_PER_CLIENT, alone
    assert alone["execution_count"] == REQUESTS_PER_CLIENT, alone
    assert alone["inference_stats"]["queue"]["ns"] / REQUESTS_PER_CLIENT < 5e6, alone

    # Eight at once, each run taking milliseconds: requests queue behind the running batch
    # and go together in the next.
    sent = _run_clients(server.port, CLIENTS, torch_ref)
    loaded = _stats(server, "text_classifier")
    inferences = loaded["inference_count"] - alone["inference_count"]
    executions = loaded["execution_count"] - alone["execution_count"]
    assert inferences == sent, loaded
    assert executions < inferences * 0.75, (
        f"{inferences} one-row requests from {CLIENTS} clients ran in {executions} batches")
    assert max(b["batch_size"] for b in loaded["batch_stats"]) > 1, loaded["batch_stats"]


def test_the_intra_op_thread_count_is_chosen_at_load_and_explained(start_server, tmp_path):
    repo = make_repository(tmp_path / "repo", {"mlp_scorer": "mlp_scorer",
                                               "resnet18": "resnet18"})
    server = start_server(repo)
    cores = len(os.sched_getaffinity(server.proc.pid))

    mlp = _stats(server, "mlp_scorer")["intra_op_threads"]
    resnet = _stats(server, "resnet18")["intra_op_threads"]
    for name, choice in (("mlp_scorer", mlp), ("resnet18", resnet)):
        assert f"model {name}: " in server.log() and "intra-op threads " in server.log()
        if cores > FEW_CORES:
            assert choice["probe"] == [] and f"{cores} cores" in choice["reason"], choice
    if cores > FEW_CORES or cores == 1:
        return  # with one core there is nothing to choose: the count is 1 already
    # Batch 1 on the backend's count first. When that is slow, batch 1 on one thread too: slow
    # there as well is a large model; quick there was a team held up by a busy core. A small
    # model then gets its largest batch timed on one thread, and keeps one thread exactly when
    # that run was short.
    def check(choice):
        probe = list(choice["probe"])
        first = probe.pop(0)
        assert (first["intra_op_threads"], first["batch_size"]) == (cores, 1), choice
        if first["fastest_ms"] >= SMALL_RUN_MS:
            single = probe.pop(0)
            assert (single["intra_op_threads"], single["batch_size"]) == (1, 1), choice
            if single["fastest_ms"] >= SMALL_RUN_MS:
                assert probe == [] and choice["count"] == cores, choice
                assert "not a small model" in choice["reason"], choice
                return "large"
        largest = probe.pop(0)
        assert largest["intra_op_threads"] == 1 and largest["batch_size"] > 1, choice
        assert choice["count"] == (1 if largest["fastest_ms"] < SMALL_RUN_MS else cores), choice
        return "small" if choice["count"] == 1 else "large"

    check(mlp)
    # ResNet-18 takes milliseconds even at batch 1 on one thread: not small, it keeps every
    # core to start with, and adapts the count while it serves.
    assert check(resnet) == "large", resnet
    assert "later runs choose among" in resnet["reason"] and 1 <= resnet["current"] <= cores


def test_what_config_yaml_says_wins_over_the_defaults(start_server, tmp_path, torch_ref):
    repo = make_repository(tmp_path / "repo", {"text_classifier": "text_classifier"})

    def explicit(config):
        config["dynamic_batching"] = {"enabled": False}
        config["parameters"] = {"intra_op_threads": 2}

    edit_config(repo / "text_classifier", explicit)
    server = start_server(repo)
    stats = _stats(server, "text_classifier")
    assert stats["batching"]["dynamic"] is False and stats["batching"]["source"] == "config"
    threads = stats["intra_op_threads"]
    assert threads["count"] == 2 and threads["probe"] == [], threads
    assert "fixed by config.yaml" in threads["reason"], threads

    sent = _run_clients(server.port, CLIENTS, torch_ref)
    after = _stats(server, "text_classifier")
    assert after["inference_count"] == after["execution_count"] == sent, after
    assert [b["batch_size"] for b in after["batch_stats"]] == [1], after["batch_stats"]
