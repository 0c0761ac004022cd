"""Three inferd replicas behind nginx (least_conn) under a fixed-rate load: one replica is
killed with SIGKILL and started again, then all three are rolled one at a time with SIGTERM
(inferd's drain period, then exit 0) — the sequence of a crash and a rolling update. Every
scheduled request must come back with the right answer: none lost, none failed. The
latencies and counts are printed (pytest -s) and written to the test's folder."""

from __future__ import annotations

import json
import threading
import time

from fleet import NginxPool, Replica, results_path
from fleet_load import FleetLoad, Target
from inferd_harness import DEMO_MODELS, make_repository

RATE = 40.0        # requests/s; 2 cores run the load, nginx and three replicas
DRAIN_S = 2        # inferd --drain-seconds during the roll
SETTLE_S = 5.0     # load before the first and after the last disruption
MODELS = ["mlp_scorer", "digits"]


def test_kill_and_rolling_restart_under_load_lose_no_request(fleet, tmp_path, nginx_binary):
    repo = make_repository(tmp_path / "repo", {m: m for m in MODELS})
    replicas = [Replica(f"replica-{i}", repo, tmp_path, ["--drain-seconds", str(DRAIN_S)])
                for i in range(3)]
    fleet["replicas"].extend(replicas)
    for r in replicas:
        r.start()
    pool = NginxPool(tmp_path / "nginx")
    fleet["pools"].append(pool)
    pool.start(replicas, "least_conn")

    targets = [Target.from_sample(m, DEMO_MODELS / m / "sample.json") for m in MODELS]
    load = FleetLoad("127.0.0.1", pool.http_port, targets, RATE).start()
    exit_codes = []
    errors = []

    def disrupt():
        # The sleeps below are the chaos schedule, spans of steady load between disruptions
        # (what the test is about), not waits for a server: start() and terminate() wait
        # for readiness and exit themselves.
        try:
            time.sleep(SETTLE_S)
            victim = replicas[0]
            load.note(f"SIGKILL {victim.name}")
            victim.kill()
            time.sleep(3.0)  # down for a while: nginx must route around it
            load.note(f"restart {victim.name}")
            victim.start()
            load.note(f"{victim.name} ready")
            time.sleep(2.0)
            for r in replicas:
                load.note(f"SIGTERM {r.name} (drain {DRAIN_S} s)")
                exit_codes.append(r.terminate())
                load.note(f"{r.name} exited {exit_codes[-1]}; restart")
                r.start()
                load.note(f"{r.name} ready")
            time.sleep(SETTLE_S)
        except Exception as e:  # reported below
            errors.append(e)

    chaos = threading.Thread(target=disrupt)
    chaos.start()
    chaos.join(240)
    result = load.stop()
    report = result.report()
    print("\n" + report)
    (tmp_path / "fleet-chaos.json").write_text(json.dumps(result.to_json(), indent=2))
    if out := results_path("fleet-chaos.json"):
        out.write_text(json.dumps(result.to_json(), indent=2))
        out.with_suffix(".txt").write_text(report + "\n")

    assert not errors, errors
    assert exit_codes == [0, 0, 0], f"exit codes after SIGTERM: {exit_codes}"
    for r in replicas:
        log = r.log()
        assert log.count("drain period over") >= 1, f"{r.name} did not drain"
    assert result.scheduled >= RATE * 15, report
    assert result.completed == result.scheduled, f"lost requests\n{report}"
    assert not result.failures, f"failed requests\n{report}"
    # The disruptions reached the clients' requests: nginx had to retry some on another
    # replica (a killed or closing one), or the test exercised nothing.
    assert result.retried() > 0 or "upstream" in pool.error_log(), report
