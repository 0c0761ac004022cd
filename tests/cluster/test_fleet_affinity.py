"""Model affinity: with nginx hashing the model name (deploy/nginx/render-pool --balance model)
and a memory budget per replica that fits 3 models, a fleet of 3 replicas keeps 9 distinct
models loaded — three times what one replica holds — and answers each one correctly, with no
eviction after the first load. With least_conn the same traffic spreads every model over
every replica and the budgets force evictions and reloads: the contrast shows the budget
really binds."""

from __future__ import annotations

import requests

from fleet import NginxPool, Replica, chash_owner, results_path
from lifecycle_helpers import assert_sample_output, copy_model, lifecycle, sample_request

PER_REPLICA = 3  # models one replica's budget holds
REPLICAS = 3
DEMO = "digits"


def _footprint(tmp_path, fleet) -> int:
    copy_model(tmp_path / "probe", DEMO, DEMO)
    probe = Replica("probe", tmp_path / "probe", tmp_path, [])
    fleet["replicas"].append(probe)
    probe.start()
    [row] = [v for v in requests.get(probe.url + "/v2/repository/stats", timeout=30)
             .json()["versions"] if v["name"] == DEMO]
    probe.stop()
    assert row["memory_bytes"] > 0, row
    return row["memory_bytes"]


def _choose_models(servers: list[str]) -> dict[str, list[str]]:
    """PER_REPLICA model names homed on each server by nginx's consistent hash."""
    homes: dict[str, list[str]] = {s: [] for s in servers}
    i = 0
    while any(len(v) < PER_REPLICA for v in homes.values()):
        name = f"model_{i:03d}"
        owner = chash_owner(servers, name)
        if len(homes[owner]) < PER_REPLICA:
            homes[owner].append(name)
        i += 1
        assert i < 10_000
    return homes


def _loaded(replica) -> set[str]:
    stats = lifecycle(replica)
    return {v["name"] for v in stats["versions"] if v["state"] == "READY"}


def _counters(replica) -> dict:
    return lifecycle(replica)["counters"]


def _traffic(pool, names, rounds: int) -> None:
    with requests.Session() as session:
        for _ in range(rounds):
            for name in names:
                resp = session.post(f"{pool.url}/v2/models/{name}/infer",
                                    json=sample_request(DEMO), timeout=60)
                assert_sample_output(resp, DEMO)


def test_model_affinity_holds_more_models_than_one_replica_fits(fleet, tmp_path, nginx_binary):
    size = _footprint(tmp_path, fleet)
    budget = size * PER_REPLICA + size // 2  # room for 3, not 4
    replicas = [Replica(f"replica-{i}", tmp_path / "repo", tmp_path,
                        ["--lazy-load", "--memory-budget", f"cpu={budget}"])
                for i in range(REPLICAS)]
    fleet["replicas"].extend(replicas)
    homes = _choose_models([r.http_address for r in replicas])
    names = sorted(n for group in homes.values() for n in group)
    for i, name in enumerate(names):
        # Distinct files (bytes after the zip's end), so no two models share weights.
        model_dir = copy_model(tmp_path / "repo", name, DEMO)
        with open(model_dir / "1" / "model.pt", "ab") as f:
            f.write(b"\0" * (i + 1))
    for r in replicas:
        r.start()
    pool = NginxPool(tmp_path / "nginx")
    fleet["pools"].append(pool)
    pool.start(replicas, "model")

    _traffic(pool, names, rounds=3)
    placement = {r.http_address: _loaded(r) for r in replicas}
    counters = {r.name: _counters(r) for r in replicas}
    lines = [f"affinity: {len(names)} models, budget {budget} B per replica "
             f"({PER_REPLICA} x {size} B + half); loaded per replica: "
             f"{ {r.name: sorted(placement[r.http_address]) for r in replicas} }; counters "
             f"{ {k: {c: v[c] for c in ('loads', 'evictions', 'reloads')} for k, v in counters.items()} }"]
    print("\n" + lines[0])
    for r in replicas:
        assert placement[r.http_address] == set(homes[r.http_address]), (r.name, placement)
        assert counters[r.name]["evictions"] == 0, counters
        assert counters[r.name]["loads"] == PER_REPLICA, counters
    assert len(set().union(*placement.values())) == len(names) == PER_REPLICA * REPLICAS

    # The same models without affinity: budgets that held them all now churn.
    # One-at-a-time requests make least_conn a round robin; 10 requests per round (not a
    # multiple of 3) send each model to a different replica in the second round.
    pool.reload(replicas, "least_conn")
    _traffic(pool, names + names[:1], rounds=2)
    churn = sum(_counters(r)["evictions"] for r in replicas)
    lines.append(f"least_conn, same traffic (2 rounds): {churn} evictions across the fleet")
    print(lines[-1])
    if out := results_path("fleet-affinity.txt"):
        out.write_text("\n".join(lines) + "\n")
    assert churn > 0


