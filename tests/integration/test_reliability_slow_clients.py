"""Slow connections, shortened for CI: bench/reliability/slow_clients.py with 200 slowloris
connections while good clients send 100 req/s; no good request may fail and their p99 must
stay within 2x the baseline (+1 ms). The 500-connection figures are in
bench/results/reliability.md."""

from __future__ import annotations

from test_reliability_faults import run_script


def test_slow_connections_do_not_starve_good_clients(tmp_path):
    result = run_script(tmp_path, "slow_clients.py", "--slow", "200", "--rate", "100",
                        "--seconds", "8", "--output", "slow-ci")
    assert result["server_alive"], result
    under = result["with_slow_connections"]
    assert under["good_errors"] == 0, under
    assert under["fresh_failures"] == 0, under
    assert result["passed"], result
