"""GET /metrics against the real tools: promtool's linter on a live scrape, and a real
Prometheus server that scrapes inferd under load and answers PromQL with the exact count."""

from __future__ import annotations

import pytest
import requests

from observability_tools import PrometheusServer, promtool, send_load


@pytest.fixture
def prometheus_factory(tmp_path):
    servers: list[PrometheusServer] = []

    def start(targets: list[str]) -> PrometheusServer:
        server = PrometheusServer(tmp_path / f"prometheus-{len(servers)}", targets)
        servers.append(server)
        return server.start()

    yield start
    for server in servers:
        server.stop()


def test_live_scrape_passes_promtool_check_metrics(start_server, small_repository):
    server = start_server(small_repository)
    # Every metric type populated: successes, a bad input, an unknown path.
    assert send_load(server.url, "digits", 20) == [200] * 20
    assert server.post("/v2/models/digits/infer", raw="{not json").status_code == 400
    assert server.get("/nope").status_code == 404
    scrape = server.get("/metrics")
    assert scrape.status_code == 200
    assert scrape.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    checked = promtool("check", "metrics", stdin=scrape.text)
    assert checked.returncode == 0 and checked.stdout.strip() == "" and checked.stderr.strip() == "", (
        f"promtool check metrics: rc {checked.returncode}\n{checked.stdout}\n{checked.stderr}")
    for name in ["inferd_requests_total", "inferd_request_duration_seconds_bucket",
                 "inferd_queue_duration_seconds_bucket", "inferd_compute_duration_seconds_bucket",
                 "inferd_batch_size_rows_bucket", "inferd_queue_depth",
                 "inferd_http_requests_in_flight", "inferd_model_load_duration_seconds",
                 "inferd_model_ready", "process_cpu_seconds_total",
                 "process_resident_memory_bytes", "inferd_http_responses_total"]:
        assert f"\n{name}" in scrape.text, f"{name} missing from /metrics"


def test_metrics_count_every_outcome_per_model(start_server, small_repository):
    server = start_server(small_repository)
    assert send_load(server.url, "mlp_scorer", 7, clients=1) == [200] * 7
    # A request with the wrong shape reaches the model and is its client's fault.
    bad = {"inputs": [{"name": "features", "datatype": "FP32", "shape": [1, 3],
                       "data": [1, 2, 3]}]}
    assert server.post("/v2/models/mlp_scorer/infer", bad).status_code == 400
    # So does a body that is not JSON, on every protocol.
    assert server.post("/v2/models/mlp_scorer/infer", raw="{nope").status_code == 400
    assert server.post("/predict?model=mlp_scorer", raw="{nope").status_code == 400
    assert server.post("/v1/models/mlp_scorer:predict", raw="{nope").status_code == 400
    # An unknown model is not a label value (the label set stays bounded by the repository).
    assert server.post("/v2/models/unknown/infer", raw="{}").status_code == 404
    text = server.get("/metrics").text
    assert 'inferd_requests_total{model="mlp_scorer",outcome="success",version="1"} 7\n' in text
    assert 'inferd_requests_total{model="mlp_scorer",outcome="bad_input",version="1"} 4\n' in text
    assert 'model="unknown"' not in text
    assert 'inferd_http_responses_total{code="404"} 1\n' in text
    assert 'inferd_requests_total{model="digits",outcome="success",version="1"} 0\n' in text
    assert 'inferd_request_duration_seconds_count{model="mlp_scorer",version="1"} 11\n' in text
    assert "inferd_model_load_failures_total{" not in text  # every model loaded


def test_real_prometheus_scrapes_the_exact_request_count_under_load(
        start_server, small_repository, prometheus_factory):
    server = start_server(small_repository)
    prometheus = prometheus_factory([f"127.0.0.1:{server.port}"])
    prometheus.wait_for('up{job="inferd"}', lambda r: r and r[0]["value"][1] == "1")

    statuses = send_load(server.url, "digits", 300, clients=8)
    assert statuses == [200] * 300

    query = 'sum(inferd_requests_total{job="inferd",model="digits",outcome="success"})'
    result = prometheus.wait_for(query, lambda r: r and r[0]["value"][1] == "300")
    assert result[0]["value"][1] == "300"
    # The latency histogram is usable from PromQL as the dashboards and alerts use it.
    p99 = prometheus.wait_for(
        'histogram_quantile(0.99, sum by (le) (rate(inferd_request_duration_seconds_bucket'
        '{model="digits"}[1m])))',
        lambda r: r and r[0]["value"][1] not in ("NaN", "+Inf"))
    assert 0 < float(p99[0]["value"][1]) < 10
    batches = prometheus.query('sum(inferd_batch_size_rows_count{model="digits"})')
    assert batches and float(batches[0]["value"][1]) >= 1
    # The alert rules load into the real server and none fires on a healthy inferd.
    rules = requests.get(prometheus.url + "/api/v1/rules", timeout=10).json()
    names = {rule["name"] for group in rules["data"]["groups"] for rule in group["rules"]}
    assert {"InferdHighP99Latency", "InferdHighErrorRate", "InferdMemoryNearBudget",
            "InferdModelLoadFailed"} <= names
    assert prometheus.query('ALERTS{alertstate="firing"}') == []


def test_grafana_dashboard_queries_are_valid_promql_over_real_metrics(
        start_server, small_repository, prometheus_factory):
    """Every expression of deploy/grafana/inferd-dashboard.json runs on a real Prometheus
    scraping inferd, and the traffic panels return data."""
    import json

    from inferd_harness import REPO_ROOT

    server = start_server(small_repository)
    prometheus = prometheus_factory([f"127.0.0.1:{server.port}"])
    # Scraped once at 0 before the traffic, so that rate() sees the increase.
    prometheus.wait_for('inferd_requests_total{model="digits",outcome="success"}',
                        lambda r: r and r[0]["value"][1] == "0")
    send_load(server.url, "digits", 50)
    prometheus.wait_for('sum(inferd_requests_total{model="digits",outcome="success"})',
                        lambda r: r and r[0]["value"][1] == "50")
    dashboard = json.loads((REPO_ROOT / "deploy/grafana/inferd-dashboard.json").read_text())
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    assert len(exprs) >= 10
    for expr in exprs:
        promql = (expr.replace("$__rate_interval", "1m").replace('"$job"', '".*"')
                  .replace('"$model"', '".*"'))
        prometheus.query(promql)  # raises on a PromQL error
    # The requests-per-second panel shows the traffic (rate needs two scrapes of it).
    qps = (exprs[0].replace("$__rate_interval", "1m").replace('"$job"', '".*"')
           .replace('"$model"', '".*"'))
    assert prometheus.wait_for(qps, lambda r: r and float(r[0]["value"][1]) > 0)
