"""The memory and lifecycle series of /metrics (budget, use, per-version memory, evictions,
reloads) follow what the model manager reports in GET /v2/repository/stats: they are read
from its report at scrape time, so nothing else would catch them going stale."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from lifecycle_helpers import assert_sample_output, copy_model, infer, lifecycle


def _samples(server) -> dict[tuple, float]:
    """(metric name, sorted labels) -> value, from a live scrape."""
    resp = server.get("/metrics")
    assert resp.status_code == 200, resp.text
    out = {}
    for family in text_string_to_metric_families(resp.text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def _value(samples, name: str, **labels) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


def test_memory_and_eviction_series_follow_the_lifecycle_report(start_server, tmp_path):
    repo = tmp_path / "repo"
    for i, name in enumerate(["a", "b"]):
        model_dir = copy_model(repo, name, "digits")
        with open(model_dir / "1" / "model.pt", "ab") as f:  # distinct files: no sharing
            f.write(b"\0" * (i + 1))
    probe = start_server(repo, "--lazy-load")
    assert infer(probe, "a", "digits").status_code == 200
    [row] = [v for v in lifecycle(probe)["versions"] if v["name"] == "a" and v["state"] == "READY"]
    size = row["memory_bytes"]
    probe.stop()

    budget = size + size // 2  # room for one of the two
    server = start_server(repo, "--lazy-load", "--memory-budget", f"cpu={budget}")
    for name in ["a", "b", "a"]:  # b evicts a, then a evicts b and is a reload
        resp = infer(server, name, "digits")
        assert resp.status_code == 200, resp.text
        assert_sample_output(resp, "digits")

    report = lifecycle(server)
    samples = _samples(server)
    [cpu] = [d for d in report["devices"] if d["device"] == "cpu"]
    assert _value(samples, "inferd_device_memory_budget_bytes", device="cpu") == budget
    assert _value(samples, "inferd_device_memory_used_bytes", device="cpu") == cpu["used_bytes"]
    assert cpu["used_bytes"] == size, cpu
    assert _value(samples, "inferd_model_memory_bytes", model="a", version="1", device="cpu") == size
    # b was evicted: its memory series is gone, not left at its old value.
    assert _value(samples, "inferd_model_memory_bytes", model="b", version="1", device="cpu") is None
    assert _value(samples, "inferd_model_evictions_total", model="a", version="1") == 1
    assert _value(samples, "inferd_model_evictions_total", model="b", version="1") == 1
    assert _value(samples, "inferd_model_reloads_total", model="a", version="1") == 1
    assert report["counters"]["evictions"] == 2 and report["counters"]["reloads"] == 1, report
