"""Checks the benchmark figures that README.md and docs/ quote in prose, outside the tables
bench/headline.py generates, against the result files they come from.

    .venv/bin/python bench/doc_figures.py           # list every figure and its source
    .venv/bin/python bench/doc_figures.py --check   # exit 1 if a document says otherwise

Each entry of FIGURES is a sentence fragment as the document states it, with `{...}` where
a figure stands, the result file the figures come from, and the function that computes them
from that file. The check formats the computed figures with the rounding the fragment
shows and looks for the fragment in the document (line breaks count as spaces). A
fragment that is not found fails the check with the text the document should hold: a
figure typed by hand cannot drift from its result file, and a new figure in prose needs an
entry here (or belongs in a generated table).

A source "git:<commit>:<path>" is a result file as that commit kept it (a run whose file
was later replaced, before result files were kept; bench/README.md, "Kept runs"). A kind of
run that is repeated (peers, optimization) is read as its newest run (result_file.newest),
so a new run whose figures differ fails this check until the prose says what it measured.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path
from statistics import median
from typing import Callable, Dict, List, NamedTuple, Tuple

import result_file

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


class Figure(NamedTuple):
    document: str     # relative to the repository root
    fragment: str     # the document's words, with format fields where the figures stand
    source: str       # a file under bench/results, or git:<commit>:<path>
    values: Callable[[dict], Tuple]  # the figures, in the order of the format fields
    keys: str         # where in the source they come from, for the reader of this list

def _shared_node(run: dict, *cells: Tuple[str, str]) -> Tuple:
    """Medians from bench/shared_node_bench.py's summary: (configuration, alone|busy|ratio)."""
    return tuple(run["summary"][config][kind]["median"] for config, kind in cells)



def _http_gap(run: dict, *cells: str) -> Tuple:
    """bench/http_gap.py: each inferd cell's median ratio to nginx with the same body."""
    return tuple(run["summary"][c]["ratio_to_nginx"]["median"] for c in cells)


def _http_gap_profile(run: dict) -> Tuple:
    """bench/http_gap.py, the binary body: nginx's CPU per request, inferd's I/O thread and
    execution thread CPU per request, the model's forward pass per request, its batch."""
    nginx = run["summary"]["nginx-binary"]["profile"]["nginx worker"]["cpu_us"]
    cell = run["summary"]["kserve-binary"]
    return (nginx, cell["profile"]["HTTP I/O threads"]["cpu_us"],
            cell["profile"]["execution thread (+ its intra-op team)"]["cpu_us"],
            cell["model"]["forward_us_per_request"], cell["model"]["average_batch"])


def _http_gap_io_over(run: dict) -> Tuple:
    s = run["summary"]
    return (s["kserve-binary"]["profile"]["HTTP I/O threads"]["cpu_us"]
            - s["nginx-binary"]["profile"]["nginx worker"]["cpu_us"],)


def _grpc_gap(run: dict) -> Tuple:
    """bench/grpc_ab.py A/A: the goal figures and the profile, baseline then candidate."""
    m, t = run["medians"], run["threads"]
    b, c = m["baseline"], m["candidate"]
    lib = "gRPC library threads"
    return (b["grpc_added_us"], c["grpc_added_us"], b["grpc_c64_qps"] / b["http_c64_qps"],
            c["grpc_c64_qps"] / c["http_c64_qps"], b["http_added_us"], c["http_added_us"],
            b["grpc_compute_us"], c["grpc_compute_us"], t["baseline"][lib]["cpu_us"],
            t["candidate"][lib]["cpu_us"], t["baseline"][lib]["timeslices"],
            t["candidate"][lib]["timeslices"])


def _shared_classic(run: dict) -> Tuple:
    """bench/shared_node_classic.py: the figures docs/benchmarks.md quotes, in its order."""
    s = run["summary"]

    def cell(variant: str, model: str, neighbour: str, what: str) -> float:
        c = s[variant][model][neighbour]
        return c["ratio_to_alone" if what == "ratio" else "qps"]["median"]

    one = "beside 1 busy process"
    return (cell("before", "resnet18", one, "ratio"), cell("before", "resnet18", one, "qps"),
            cell("after", "resnet18", one, "ratio"), cell("after-again", "resnet18", one, "ratio"),
            cell("after", "resnet18", one, "qps"), cell("after-again", "resnet18", one, "qps"),
            cell("after", "resnet18", "alone", "qps"),
            cell("after-again", "resnet18", "alone", "qps"),
            cell("before", "resnet18", "alone", "qps"), cell("before", "mlp_scorer", one, "ratio"),
            cell("after", "mlp_scorer", one, "ratio"),
            cell("after-again", "mlp_scorer", one, "ratio"))


def _http_cost_io(run: dict) -> Tuple:
    """bench/cost/http_cost.sh: the I/O thread's callgrind instructions per request of each
    binary, then each binary's median server CPU µs per request over its perf-stat rounds."""
    io = "inferd::HttpServer::Impl::Start()::{lambda()#1}::operator()() const"
    counts = tuple(dict(c["rows"])[io] for c in run["callgrind"])
    cpu = []
    for index in range(len(run["callgrind"])):
        per = [r["counters"]["task-clock"] * 1000 / r["wrk"]["requests"]
               for r in run["perf_stat_runs"] if r["binary_index"] == index]
        cpu.append(statistics.median(per))
    return counts + tuple(cpu)


def _load(source: str) -> dict:
    if source.startswith("git:"):
        _, commit, path = source.split(":", 2)
        text = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{path}"],
                              capture_output=True, text=True, check=True).stdout
        return json.loads(text)
    return json.loads((RESULTS / source).read_text())


def _inferd_over(run: dict, model: str, peer: str = "triton") -> Dict[Tuple[str, int], Tuple]:
    """inferd's (demo config) throughput over `peer`'s per (client, concurrency), with both
    medians: {(client, concurrency): (ratio, inferd req/s, peer req/s)}."""
    by = {(c["model"], c["client"], c["concurrency"], c["peer"]): c.get("summary")
          for c in run["cells"]}
    out = {}
    for (m, client, concurrency, who), mine in by.items():
        theirs = by.get((m, client, concurrency, peer))
        if m == model and who == "inferd" and mine and theirs:
            out[(client, concurrency)] = (mine["qps"] / theirs["qps"], mine["qps"],
                                          theirs["qps"])
    return out


def _range(run: dict, model: str, peer: str = "triton") -> Tuple[float, float]:
    ratios = [r for r, _, _ in _inferd_over(run, model, peer).values()]
    return min(ratios), max(ratios)


def _peers_run(run: dict, *peers: str) -> Tuple:
    """inferd over each peer on mlp_scorer (min-max), then the load at the start and end."""
    ranges = [x for peer in peers for x in _range(run, "mlp_scorer", peer)]
    return (*ranges, run["loadavg"]["start"][0], run["loadavg"]["end"][0])


def _closest(run: dict, model: str) -> Tuple[float, float]:
    """inferd's and Triton's req/s in the cell where inferd's lead is smallest."""
    _, mine, theirs = min(_inferd_over(run, model).values())
    return mine, theirs


def _cell(run: dict, model: str, client: str, concurrency: int) -> Tuple:
    return _inferd_over(run, model)[(client, concurrency)]


def _ab(run: dict, key: str) -> Tuple[float, float]:
    return run["medians"]["baseline"][key], run["medians"]["candidate"][key]


def _ab_ratios(run: dict, *keys: str) -> Tuple:
    """Candidate over baseline medians (bench/grpc_ab.py), one per key."""
    return tuple(run["medians"]["candidate"][k] / run["medians"]["baseline"][k] for k in keys)


def _llm_ab_ratios(run: dict, base: str, *variants: str) -> Tuple:
    """Each variant's median tokens/s over `base`'s at 1 then 16 clients (bench/llm/llm_ab.py),
    rounded as its table shows them."""
    def tps(variant: str, clients: str) -> float:
        return run["results"][variant][clients]["tokens_per_s"]["median"]
    return tuple(round(tps(v, c) / tps(base, c), 3) for v in variants for c in ("1", "16"))


def _engine_gap(run: dict, *keys: str) -> Tuple:
    """bench/llm/engine_gap.py's summary: "key" is its median, "key:min" / "key:max" the
    ends of its range; ratios of the form x - 1 (overhead_1, decode_call_over_engine) in %."""
    out = []
    for key in keys:
        name, _, end = key.partition(":")
        value = run["summary"][name][end or "median"]
        out.append(100 * value if name in ("overhead_1", "decode_call_over_engine") else value)
    return tuple(out)


def _engine_gap_http(run: dict) -> Tuple:
    """The HTTP I/O thread's timeslices and run-queue wait per token, last round."""
    [t] = [v for k, v in run["rounds"][-1]["inferd_1"]["threads"].items()
           if k.startswith("http-io")]
    return t["slices_per_token"], t["wait_ms_per_token"]


def _batching_kqps(run: dict, model: str, concurrency: int, *variants: str) -> Tuple:
    """Thousands of requests/s of each inferd variant, as bench/batching_report.py shows them."""
    import batching_report

    by = {(c["model"], c["concurrency"], c["variant"]): c for c in run["cells"]
          if c["kind"] == "inferd"}
    return tuple(batching_report.summarise(by[(model, concurrency, v)])["qps"] / 1000
                 for v in variants)


def _batching_over(run: dict, model: str, concurrency: int, variant: str) -> Tuple:
    """A variant's throughput over the same run's Flask and nginx at that concurrency."""
    import batching_report

    refs = batching_report.references(run)
    [cell] = [c for c in run["cells"] if c["kind"] == "inferd" and
              (c["model"], c["concurrency"], c["variant"]) == (model, concurrency, variant)]
    qps = batching_report.summarise(cell)["qps"]
    return qps / refs[(model, concurrency, "flask")], qps / refs[(model, concurrency, "nginx")]


def _tuned(run: dict, key: str, batch_size: int, measure: str) -> float:
    """One row of the auto-tuner's table (batching[key].auto_tune.table)."""
    [row] = [r for r in run["batching"][key]["auto_tune"]["table"]
             if r["batch_size"] == batch_size]
    return row[measure]


def _widest_spread(runs: List[dict]) -> Tuple[float, str, int, str]:
    """The largest max/min of single rounds' req/s of one (model, concurrency, variant) cell
    across `runs`, with that cell."""
    qps: Dict[Tuple, List[float]] = {}
    for run in runs:
        for cell in run["cells"]:
            key = (cell["model"], cell["concurrency"], cell.get("variant"))
            qps.setdefault(key, []).extend(r["qps"] for r in cell["runs"] if r.get("qps"))
    return max((max(q) / min(q), *key) for key, q in qps.items() if q)


def _busy_poll(run: dict) -> Tuple[float, ...]:
    """Engine p50, then binary HTTP p50 (median of the rounds) and its excess over the engine
    with the 100 us busy poll and without it."""
    def p50(setting: str) -> float:
        return median(p["p50_us"] for p in run["results"][setting]["probe"]
                      if p["transport"] == "http-binary")
    engine = run["engine_p50_us"]
    return engine, p50("100"), p50("100") - engine, p50("0"), p50("0") - engine


def _opt(run: dict, model: str, variant: str, engine: str, key: str) -> float:
    """One measure of one variant in bench/optimization_bench.py's results."""
    [row] = [r for r in run["results"]
             if (r["model"], r["variant"], r["engine"]) == (model, variant, engine)]
    return row[key]


def _ab_runs(run: dict, model: str, variant: str, per_request: Callable[[dict], float]) -> float:
    """Median over the rounds of a per-request figure of one variant (bench/binary_ab.sh)."""
    return median(per_request(r) for r in run["runs"]
                  if (r["model"], r["variant"]) == (model, variant))


def _compute_ms(r: dict) -> float:
    return r["compute_infer_ns"] / r["requests"] / 1e6


def _to5(x: float) -> float:
    """To the nearest 5, for figures the document gives as approximate (~)."""
    return 5 * round(x / 5)


def _grpc_probe(run: dict, setting: str, key: str) -> float:
    return median(p[key] for p in run["results"][setting]["probe"] if p["transport"] == "grpc")


def _fleet(run: dict, *keys: str) -> Tuple:
    return tuple(run["summary"][k] for k in keys)


def _shm_over(run: dict, transport: str) -> Tuple[float, float]:
    """Shared memory's requests/s over `transport` without it, at 1 and 8 clients, on the
    cheap model with a 1 MiB input (wide_mean)."""
    m = run["medians"]
    return tuple(m[f"wide_mean/{c}/{transport}/system"]["qps"]
                 / m[f"wide_mean/{c}/{transport}/none"]["qps"] for c in (1, 8))


PEERS = result_file.newest("peers")
TRITON3 = result_file.newest("peers-vs-triton")
XEON = "2026-12-04-peers-vs-triton-xeon.json"
BENTOML = "2026-12-06-peers-bentoml.json"
BENTOML_KSERVE = "2026-12-06-peers-bentoml-kserve.json"
XEON_EARLIER = "git:df3ea7e:bench/results/peers.json"
GRPC_AA = "2026-12-04-2026-12-04-grpc-a-a-xeon.json"
ACCESS_LOG = "2026-12-04-2026-12-04-grpc-batched-access-log.json"
STRETCHED = "2026-12-03-grpc-stretched-poll.json"
BUSY_POLL = "2026-11-30-busy-poll.json"
SHM = "2026-12-02-shared-memory.json"
MLP3 = "2026-11-30-batching-mlp-session3.json"
OPT = result_file.newest("optimization")
TEAMS = "2026-12-03-openmp-teams.json"
DEPLOY = "2026-12-01-deployment/"
COUNTS = ("scheduled", "failed", "lost", "retried_by_nginx")
ONE_THREAD = "cells[mlp_scorer, 64, autotune-1t] and [.., autotune]: median qps (batching_report.summarise) / 1000"
RATIO = "min-max over clients and concurrencies of cells[model, client, c, 'inferd'].summary.qps / cells[..., 'triton'].summary.qps"
PEERS_RATIO = ("mlp_scorer: " + RATIO.replace("'triton'", "peer")
               + "; loadavg.start[0], .end[0]")

FIGURES: List[Figure] = [
    Figure("README.md", "inferd serves the small model at {:.2g}-{:.2g}× Triton's (Python "
           "backend, dynamic batching with a 1 ms queue delay) rate", PEERS,
           lambda r: _range(r, "mlp_scorer"), f"mlp_scorer: {RATIO}"),
    Figure("README.md", "inferd's demo config served {:.2g}-{:.2g}× BentoML's requests/s "
           "({:.2g}-{:.2g}× TorchServe's, {:.2g}-{:.2g}× LitServe's) at a load average of "
           "{:.1f}-{:.1f}", BENTOML,
           lambda r: _peers_run(r, "bentoml", "torchserve", "litserve"), PEERS_RATIO),
    Figure("README.md", "inferd's demo config served {:.3g}-{:.3g}× BentoML's requests/s, "
           "{:.3g}-{:.3g}× KServe's and {:.3g}-{:.3g}× TorchServe's, at a load average of "
           "{:.1f}-{:.1f}", BENTOML_KSERVE,
           lambda r: _peers_run(r, "bentoml", "kserve", "torchserve"), PEERS_RATIO),
    Figure("docs/benchmarks.md", "inferd's demo config served {:.2g}-{:.2g}× BentoML's "
           "requests/s ({:.2g}-{:.2g}× TorchServe's, {:.2g}-{:.2g}× LitServe's) at a load "
           "average of {:.1f}-{:.1f}", BENTOML,
           lambda r: _peers_run(r, "bentoml", "torchserve", "litserve"), PEERS_RATIO),
    Figure("docs/benchmarks.md", "inferd's demo config served {:.3g}-{:.3g}× BentoML's "
           "requests/s, {:.3g}-{:.3g}× KServe's and {:.3g}-{:.3g}× TorchServe's, at a load "
           "average of {:.1f}-{:.1f}", BENTOML_KSERVE,
           lambda r: _peers_run(r, "bentoml", "kserve", "torchserve"), PEERS_RATIO),
    Figure("README.md", "and resnet18 at {:.2f}-{:.2f}×;", PEERS,
           lambda r: _range(r, "resnet18"), f"resnet18: {RATIO}"),
    Figure("README.md", "on text_classifier it is at {:.2f}-{:.2f}×, behind Triton", PEERS,
           lambda r: _range(r, "text_classifier"), f"text_classifier: {RATIO}"),
    Figure("README.md", "inferd is at {:.2f}-{:.2f}× on resnet18 and {:.2f}-{:.2f}× on "
           "text_classifier, behind only over wrk at 8 clients ({:.2f}×; missed)", TRITON3,
           lambda r: (*_range(r, "resnet18"), *_range(r, "text_classifier"),
                      _cell(r, "text_classifier", "wrk-json", 8)[0]),
           f"resnet18, text_classifier: {RATIO}; then text_classifier wrk-json c=8"),
    Figure("README.md", "put inferd ahead in every cell: {:.2f}-{:.2f}× on resnet18, "
           "{:.2f}-{:.2f}× on text_classifier", XEON,
           lambda r: (*_range(r, "resnet18"), *_range(r, "text_classifier")),
           f"resnet18, text_classifier: {RATIO}"),
    Figure("docs/benchmarks.md", "{:.2g}-{:.2g}× on mlp_scorer, {:.2f}-{:.2f}× on resnet18 "
           "(behind only with perf_analyzer at one client) and {:.2f}-{:.2f}× on "
           "text_classifier", PEERS,
           lambda r: (*_range(r, "mlp_scorer"), *_range(r, "resnet18"),
                      *_range(r, "text_classifier")), f"each model: {RATIO}"),
    Figure("docs/benchmarks.md", "the day before, on a Xeon, resnet18 was {:.2f}-{:.2f}× and "
           "text_classifier {:.2f}-{:.2f}×", XEON_EARLIER,
           lambda r: (*_range(r, "resnet18"), *_range(r, "text_classifier")),
           f"resnet18, text_classifier: {RATIO}"),
    Figure("docs/benchmarks.md", "resnet18 {:.2f}-{:.2f}× (every client and concurrency), "
           "text_classifier {:.2f}-{:.2f}×, behind only over wrk at 8 clients ({:.1f} against "
           "{:.1f} req/s; missed)", TRITON3,
           lambda r: (*_range(r, "resnet18"), *_range(r, "text_classifier"),
                      *_cell(r, "text_classifier", "wrk-json", 8)[1:]),
           f"resnet18, text_classifier: {RATIO}; then text_classifier wrk-json c=8 "
           "inferd and triton summary.qps"),
    Figure("docs/benchmarks.md", "inferd ahead in every cell, resnet18 {:.2f}-{:.2f}× "
           "(closest: perf_analyzer gRPC at 8 clients, {:.1f} against {:.1f} req/s), "
           "text_classifier {:.2f}-{:.2f}× (closest: gRPC at 64, {:.1f} against {:.1f})", XEON,
           lambda r: (*_range(r, "resnet18"), *_closest(r, "resnet18"),
                      *_range(r, "text_classifier"), *_closest(r, "text_classifier")),
           f"{RATIO}; closest: inferd and triton summary.qps of the cell with the lowest ratio"),
    Figure("docs/benchmarks.md", "ModelInfer minus an empty RPC {:.0f} and {:.0f} µs, binary "
           "HTTP p50 {:.0f} and {:.0f} µs", GRPC_AA,
           lambda r: (*_ab(r, "grpc_added_us"), *_ab(r, "http_p50_us")),
           "medians.{baseline,candidate}.grpc_added_us, .http_p50_us"),
    Figure("docs/benchmarks.md", "ModelInfer {:.0f} -> {:.0f} µs, the empty RPC {:.0f} -> "
           "{:.0f} µs, so ModelInfer minus the empty RPC stays at {:.0f} -> {:.0f} µs (target "
           "≤ 100: missed); server CPU per call {:.0f} -> {:.0f} µs", ACCESS_LOG,
           lambda r: (*_ab(r, "grpc_p50_us"), *_ab(r, "grpc_empty_p50_us"),
                      *_ab(r, "grpc_added_us"), *_ab(r, "grpc_cpu_us")),
           "medians.{baseline,candidate}.grpc_p50_us, .grpc_empty_p50_us, .grpc_added_us, "
           ".grpc_cpu_us"),
    Figure("docs/benchmarks.md", "passes the 40× Flask target at 64 clients ({:.1f}×) but "
           "reaches only {:.0f} % of nginx's loopback ceiling", MLP3,
           lambda r: (lambda flask, nginx: (flask, nginx * 100))(
               *_batching_over(r, "mlp_scorer", 64, "autotune-1t")),
           "cells[mlp_scorer, 64, autotune-1t] median qps over the flask and nginx cells' "
           "(batching_report.references)"),
    Figure("docs/scheduling.md", "it picks {:.0f} for `mlp_scorer` ({:.2f} ms for 32 rows, "
           "{:.0f}k items/s against {:.0f}k at batch 1;", "2026-11-30-batching-mlp-quiet.json",
           lambda r: (r["batching"]["mlp_scorer/autotune"]["auto_tune"]["chosen_batch_size"],
                      _tuned(r, "mlp_scorer/autotune", 32, "latency_ms"),
                      _tuned(r, "mlp_scorer/autotune", 32, "items_per_s") / 1e3,
                      _tuned(r, "mlp_scorer/autotune", 1, "items_per_s") / 1e3),
           "batching[mlp_scorer/autotune].auto_tune: chosen_batch_size; table[32].latency_ms, "
           ".items_per_s / 1e3; table[1].items_per_s / 1e3"),
    Figure("docs/scheduling.md", "and {:.0f} for `resnet18` ({:.1f} ms at batch 1 and {:.1f} ms at "
           "batch 2, {:.0f} against {:.0f} items/s; batch 4 takes {:.1f} ms and would break a "
           "{:.0f} ms SLO;", "2026-11-30-batching-resnet-session3.json",
           lambda r: (r["batching"]["resnet18/autotune"]["auto_tune"]["chosen_batch_size"],
                      _tuned(r, "resnet18/autotune", 1, "latency_ms"),
                      _tuned(r, "resnet18/autotune", 2, "latency_ms"),
                      _tuned(r, "resnet18/autotune", 2, "items_per_s"),
                      _tuned(r, "resnet18/autotune", 1, "items_per_s"),
                      _tuned(r, "resnet18/autotune", 4, "latency_ms"),
                      r["batching"]["resnet18/autotune"]["auto_tune"]["latency_slo_ms"]),
           "batching[resnet18/autotune].auto_tune: chosen_batch_size; table[1, 2, 4].latency_ms "
           "and items_per_s; latency_slo_ms"),
    Figure("docs/scheduling.md", "two threads win for mlp_scorer here (batch 32: {:.2f} against "
           "{:.2f} ms)", MLP3,
           lambda r: (_tuned(r, "mlp_scorer/autotune", 32, "latency_ms"),
                      _tuned(r, "mlp_scorer/autotune-1t", 32, "latency_ms")),
           "batching[mlp_scorer/autotune and autotune-1t].auto_tune.table[32].latency_ms"),
    Figure("README.md", "single runs of one cell on this machine differed by up to {:.1f}× "
           "({}'s {} config at {} clients, across the two files;", "2026-12-02-defaults.json",
           lambda r: (lambda spread, model, c, variant: (spread, model, variant, c))(
               *_widest_spread([r, _load("2026-12-02-defaults-repeat.json")])),
           "cells[*].runs[*].qps of 2026-12-02-defaults.json and -repeat.json: the largest "
           "max/min within one (model, concurrency, variant)"),
    Figure("docs/benchmarks.md", "a larger batch measured only {:.0f} % more at load time",
           "2026-11-30-batching-resnet-session3.json",
           lambda r: ((_tuned(r, "resnet18/autotune", 8, "items_per_s")
                       / _tuned(r, "resnet18/autotune", 4, "items_per_s") - 1) * 100,),
           "batching[resnet18/autotune].auto_tune.table: items_per_s at batch 8 over batch 4 "
           "(the backlog batch), minus 1"),
    Figure("docs/configuration.md", "auto-tuned mlp_scorer served {:.1f}k instead of {:.1f}k "
           "req/s at 64 clients", MLP3,
           lambda r: _batching_kqps(r, "mlp_scorer", 64, "autotune-1t", "autotune"), ONE_THREAD),
    Figure("docs/scheduling.md", "({:.1f}k against {:.1f}k req/s at 64 clients)", MLP3,
           lambda r: _batching_kqps(r, "mlp_scorer", 64, "autotune-1t", "autotune"), ONE_THREAD),
    Figure("docs/scheduling.md", "binary-HTTP round trip from {3:.0f} µs to {1:.0f} µs",
           BUSY_POLL, _busy_poll,
           "results[0 and 100].probe[http-binary].p50_us, median of the rounds"),
    Figure("docs/protocols.md", "engine p50 {:.0f} µs): binary HTTP p50 {:.0f} µs, **+{:.0f} "
           "µs** ({:.0f} µs, +{:.0f}, with `--busy-poll-us 0`)", BUSY_POLL, _busy_poll,
           "engine_p50_us; results[100 and 0].probe[http-binary].p50_us (median of the "
           "rounds) and minus the engine"),
    Figure("docs/scheduling.md", "ModelInfer at one client from {:.0f} to {:.0f} µs over an "
           "empty RPC (the model's queue wait from {:.0f} to {:.0f} µs, its forward pass on "
           "warm caches from {:.0f} to {:.0f} µs)", STRETCHED,
           lambda r: (*_ab(r, "grpc_added_us"), *_ab(r, "grpc_queue_us"),
                      *_ab(r, "grpc_compute_us")),
           "medians.{baseline,candidate}.grpc_added_us, .grpc_queue_us, .grpc_compute_us"),
    Figure("docs/protocols.md", "ModelInfer takes {1:.0f} µs more than an empty RPC against "
           "{0:.0f} before, on a 2-core machine where the model's own forward pass takes "
           "{3:.0f} µs of them", STRETCHED,
           lambda r: (*_ab(r, "grpc_added_us"), *_ab(r, "grpc_compute_us")),
           "medians.{baseline,candidate}.grpc_added_us, medians.candidate.grpc_compute_us"),
    Figure("docs/http-api.md", "{:.0f}–{:.0f}× the requests per second of binary HTTP and "
           "{:.1f}–{:.1f}× gRPC's at 1 and 8 clients", SHM,
           lambda r: (*_shm_over(r, "http"), *_shm_over(r, "grpc")),
           "medians[wide_mean/{1,8}/{http,grpc}/system].qps / [.../none].qps"),
    Figure("docs/onnx.md", "resnet18 {:.1f} against {:.1f} ms p50 at batch 1 ({:.2f}×) and "
           "{:.0f} against {:.0f} img/s at batch 32; text_classifier {:.1f} against {:.1f} ms at "
           "batch 1 ({:.1f}×), equal at batch 32 ({:.0f} against {:.0f} items/s)", OPT,
           lambda r: (_opt(r, "resnet18", "fp32", "onnx", "p50_ms_batch1"),
                      _opt(r, "resnet18", "fp32", "torch", "p50_ms_batch1"),
                      _opt(r, "resnet18", "fp32", "torch", "p50_ms_batch1")
                      / _opt(r, "resnet18", "fp32", "onnx", "p50_ms_batch1"),
                      _opt(r, "resnet18", "fp32", "onnx", "items_per_s_batch32"),
                      _opt(r, "resnet18", "fp32", "torch", "items_per_s_batch32"),
                      _opt(r, "text_classifier", "fp32", "onnx", "p50_ms_batch1"),
                      _opt(r, "text_classifier", "fp32", "torch", "p50_ms_batch1"),
                      _opt(r, "text_classifier", "fp32", "torch", "p50_ms_batch1")
                      / _opt(r, "text_classifier", "fp32", "onnx", "p50_ms_batch1"),
                      _opt(r, "text_classifier", "fp32", "onnx", "items_per_s_batch32"),
                      _opt(r, "text_classifier", "fp32", "torch", "items_per_s_batch32")),
           "results[model, fp32, onnx|torch].p50_ms_batch1, .items_per_s_batch32"),
    Figure("docs/onnx.md", "(digits {:.0f} → {:.0f} kB, mlp_scorer {:.2f} MB → {:.0f} kB); "
           "the ONNX transformer {:.1f} → {:.1f} MB (its embedding is quantized too), the "
           "TorchScript one only {:.0f} → {:.0f} MB", OPT,
           lambda r: (_opt(r, "digits", "fp32", "torch", "file_bytes") / 1e3,
                      _opt(r, "digits", "int8", "torch", "file_bytes") / 1e3,
                      _opt(r, "mlp_scorer", "fp32", "torch", "file_bytes") / 1e6,
                      _opt(r, "mlp_scorer", "int8", "torch", "file_bytes") / 1e3,
                      _opt(r, "text_classifier", "fp32", "onnx", "file_bytes") / 1e6,
                      _opt(r, "text_classifier", "int8", "onnx", "file_bytes") / 1e6,
                      _opt(r, "text_classifier", "fp32", "torch", "file_bytes") / 1e6,
                      _opt(r, "text_classifier", "int8", "torch", "file_bytes") / 1e6),
           "results[model, fp32|int8, torch|onnx].file_bytes / 1e3 or 1e6"),
    Figure("docs/onnx.md", "none lost on digits ({:.4f} on both engines)", OPT,
           lambda r: (_opt(r, "digits", "int8", "torch", "accuracy"),),
           "results[digits, int8, torch].accuracy"),
    Figure("docs/onnx.md", "faster at batch 1 ({:.1f} → {:.1f} ms) and at batch 32 ({:.0f} → "
           "{:.0f} items/s); ONNX Runtime's is faster at batch 32 ({:.0f} → {:.0f} items/s) but "
           "slower at batch 1 ({:.1f} → {:.1f} ms)", OPT,
           lambda r: tuple(_opt(r, "text_classifier", v, e, k) for e, k in
                           [("torch", "p50_ms_batch1"), ("torch", "items_per_s_batch32"),
                            ("onnx", "items_per_s_batch32"), ("onnx", "p50_ms_batch1")]
                           for v in ("fp32", "int8")),
           "results[text_classifier, fp32 and int8, torch|onnx].p50_ms_batch1, "
           ".items_per_s_batch32"),
    Figure("docs/onnx.md", "({:.4f} → {:.4f} TorchScript, {:.4f} ONNX: the student", OPT,
           lambda r: (_opt(r, "digits", "fp32", "torch", "accuracy"),
                      _opt(r, "digits", "distilled", "torch", "accuracy"),
                      _opt(r, "digits", "distilled", "onnx", "accuracy")),
           "results[digits, fp32|distilled, torch|onnx].accuracy"),
    Figure("docs/onnx.md", "pruning half the hidden units and fine-tuning cost {:.1f} points "
           "({:.4f})", OPT,
           lambda r: ((_opt(r, "digits", "fp32", "torch", "accuracy")
                       - _opt(r, "digits", "pruned", "torch", "accuracy")) * 100,
                      _opt(r, "digits", "pruned", "torch", "accuracy")),
           "results[digits, fp32 - pruned, torch].accuracy x 100; results[digits, pruned].accuracy"),
    Figure("docs/hardening.md", "re-faulted ~{:,.0f} pages each, {:.1f} ms per pass against "
           "{:.1f} ms", TEAMS,
           lambda r: (round(_ab_runs(r, "resnet18", "before",
                                     lambda x: x["perf"]["page-faults"] / x["requests"]), -3),
                      _ab_runs(r, "resnet18", "before", _compute_ms),
                      _ab_runs(r, "resnet18", "teams-released+purge-16MiB", _compute_ms)),
           "runs[resnet18, before]: median perf.page-faults / requests (to the thousand), "
           "median compute_infer_ns / requests; the same of teams-released+purge-16MiB"),
    Figure("docs/configuration.md", "text_classifier's batch-1 pass went from {:.1f} to {:.1f} "
           "ms in the server", TEAMS,
           lambda r: (_ab_runs(r, "text_classifier", "before", _compute_ms),
                      _ab_runs(r, "text_classifier", "teams-released", _compute_ms)),
           "runs[text_classifier, before and teams-released]: median compute_infer_ns / requests"),
    Figure("docs/inference-path.md", "every answer through the pool gave {:.2f}× and {:.2f}×",
           "2026-12-06-grpc-completion-pool.json", lambda r: _ab_ratios(r, "grpc_p50_us",
                                                                       "grpc_c64_qps"),
           "medians.candidate / medians.baseline: grpc_p50_us, grpc_c64_qps"),
    Figure("docs/benchmarks.md", "Missed: `/predict` {:.2f}×, KServe JSON {:.2f}×, KServe\n"
           "  binary {:.2f}× of nginx", "2026-12-06-http-gap.json",
           lambda r: _http_gap(r, "predict", "kserve-json", "kserve-binary"),
           "summary.{predict,kserve-json,kserve-binary}.ratio_to_nginx.median"),
    Figure("docs/benchmarks.md", "nginx spends {:.1f} µs of CPU on the binary POST; inferd's\n"
           "  HTTP I/O thread alone spends {:.1f} µs on it, and the execution thread another\n"
           "  {:.1f} µs, of which the model's forward pass is {:.1f} µs (batches of\n"
           "  {:.0f} rows)", "2026-12-06-http-gap.json", _http_gap_profile,
           "summary.nginx-binary.profile; summary.kserve-binary.profile and .model"),
    Figure("docs/benchmarks.md", "about {:.0f} µs per request,\n  spread over",
           "2026-12-06-http-gap.json", _http_gap_io_over,
           "kserve-binary I/O thread cpu_us minus nginx-binary's"),
    Figure("docs/benchmarks.md", "Missed: ModelInfer minus the empty RPC {:.0f} and {:.0f} µs; gRPC at 64 "
           "concurrent {:.2f}× and\n  {:.2f}× binary HTTP's req/s (perf_analyzer for both). The same "
           "inference over binary HTTP\n  costs {:.0f} and {:.0f} µs over its own empty request, and "
           "the model's forward pass is {:.0f}\n  and {:.0f} µs of it: the forward pass alone takes "
           "most of the 100 µs. What gRPC adds\n  beyond HTTP is its library's threads: per call "
           "(ModelInfer and the empty RPCs together)\n  {:.0f} and {:.0f} µs of CPU on its own "
           "threads and {:.1f} and {:.1f} timeslices",
           "2026-12-06-grpc-a-a-gap.json", _grpc_gap,
           "medians.{baseline,candidate}: grpc_added_us, grpc_c64_qps / http_c64_qps, "
           "http_added_us, grpc_compute_us; threads.*.gRPC library threads"),
    Figure("docs/benchmarks.md", "kept\n  {:.2f}× of its alone rate beside one busy process ({:.1f} req/s): the two-thread team "
           "waited at\n  every barrier for the member the busy process had pushed off its core. With "
           "the count\n  adapted at run time it kept {:.2f}× and {:.2f}× (the A/A twin), {:.1f} and {:.1f} "
           "req/s: met.\n  Alone the adapting binaries made {:.1f} and {:.1f} req/s against {:.1f} "
           "before", "2026-12-06-shared-node-classic.json",
           lambda r: _shared_classic(r)[:9],
           "summary.{before,after,after-again}.resnet18.{alone,beside 1 busy process}"),
    Figure("docs/benchmarks.md", "rounds' spread ({:.1f} to {:.1f} across the three)",
           "2026-12-06-shared-node-classic.json",
           lambda r: (min(r["summary"][v]["resnet18"]["alone"]["qps"]["min"] for v in r["summary"]),
                      max(r["summary"][v]["resnet18"]["alone"]["qps"]["max"] for v in r["summary"])),
           "summary.*.resnet18.alone.qps.{min,max}"),
    Figure("docs/benchmarks.md", "one thread, kept {:.2f}× before and {:.2f}× and {:.2f}× after",
           "2026-12-06-shared-node-classic.json", lambda r: _shared_classic(r)[9:],
           "summary.*.mlp_scorer.beside 1 busy process.ratio_to_alone.median"),
    Figure("docs/benchmarks.md", "instructions per request falling from {:,.0f} to {:,.0f} "
           "(callgrind, which does\n  not depend on the load; the A/A copy: {:,.0f}), while its CPU "
           "time per request under load\n  stays inside the noise (medians over three rounds: {:.1f} "
           "before, {:.1f} and {:.1f} µs",
           "2026-12-06-http-cost.json", _http_cost_io,
           "callgrind[*].rows[HttpServer I/O lambda]; perf_stat_runs task-clock/requests by binary"),
    Figure("docs/benchmarks.md", "one\n  stream {:+.1f} % per token (per round {:+.1f} to {:+.1f} %), 16 "
           "streams {:.3f}× ({:.3f} to {:.3f})", "2026-12-06-llm-engine-gap-2.json",
           lambda r: _engine_gap(r, "overhead_1", "overhead_1:min", "overhead_1:max", "ratio_n",
                                 "ratio_n:min", "ratio_n:max"),
           "summary.{overhead_1,ratio_n}.{median,min,max}"),
    Figure("docs/benchmarks.md", "inferd spends {:.2f} ms per token outside its llama_decode "
           "calls (sampling,\n  detokenising, the event, the hand-off) against a {:.2f} ms call",
           "2026-12-06-llm-engine-gap-2.json",
           lambda r: _engine_gap(r, "inferd_outside_decode_ms", "inferd_decode_call_ms"),
           "summary.{inferd_outside_decode_ms,inferd_decode_call_ms}.median"),
    Figure("docs/benchmarks.md", "S_TG rose from {:.0f} to {:.0f} tokens/s over\n  the rounds while "
           "inferd's stayed between {:.0f} and {:.0f}", "2026-12-06-llm-engine-gap-2.json",
           lambda r: _engine_gap(r, "engine_n_tokens_per_s:min", "engine_n_tokens_per_s:max",
                                 "inferd_n_decode_tokens_per_s:min",
                                 "inferd_n_decode_tokens_per_s:max"),
           "summary.{engine_n_tokens_per_s,inferd_n_decode_tokens_per_s}.{min,max}"),
    Figure("docs/benchmarks.md", "together, resnet18 kept {:.2f}× of its alone rate ({:.2f} to {:.2f}) "
           "and the chat stream {:.2f}×\n  ({:.2f} to {:.2f})", "2026-12-06-shared-node-together.json",
           lambda r: tuple(r["summary"][k][end] for k in ("resnet18_ratio", "chat_ratio")
                           for end in ("median", "min", "max")),
           "summary.{resnet18_ratio,chat_ratio}.{median,min,max}"),
    Figure("docs/inference-path.md", "only while others wait gave {:.2f}× and {:.2f}×",
           "2026-12-06-grpc-adaptive-completion.json",
           lambda r: _ab_ratios(r, "grpc_p50_us", "grpc_c64_qps"),
           "medians.candidate / medians.baseline: grpc_p50_us, grpc_c64_qps"),
    Figure("docs/inference-path.md", "two identical binaries beside it gave {:.2f}× and {:.2f}×",
           "2026-12-06-grpc-a-a-completion.json",
           lambda r: _ab_ratios(r, "grpc_p50_us", "grpc_c64_qps"),
           "medians.candidate / medians.baseline: grpc_p50_us, grpc_c64_qps"),
    Figure("docs/llm.md", "1 and 16 streams): {:.3f}× / {:.3f}× (A/A {:.3f}× / {:.3f}×",
           "2026-12-06-llm-engine-steps.json",
           lambda r: _llm_ab_ratios(r, "before", "after", "after-again"),
           "results.{after,after-again}[1,16].tokens_per_s.median / results.before's"),
    Figure("docs/llm.md", "then {:.3f}× / {:.3f}× (A/A {:.3f}× / {:.3f}×",
           "2026-12-06-llm-one-door-after-steps.json",
           lambda r: _llm_ab_ratios(r, "before", "after", "after-again"),
           "results.{after,after-again}[1,16].tokens_per_s.median / results.before's"),
    Figure("docs/llm.md", "gave medians of {:+.1f} % per token at one stream over the engine's "
           "step and {:.3f}× the engine's S_TG at 16 streams, but per-round ranges of {:+.1f} % to "
           "{:+.1f} % and {:.3f}× to {:.3f}×: the engine's own step ranged {:.1f} to {:.1f} ms",
           "2026-12-06-llm-engine-gap.json",
           lambda r: _engine_gap(r, "overhead_1", "ratio_n", "overhead_1:min", "overhead_1:max",
                                 "ratio_n:min", "ratio_n:max", "engine_step_ms:min",
                                 "engine_step_ms:max"),
           "summary.{overhead_1 (x100), ratio_n, engine_step_ms}.{median,min,max}"),
    Figure("docs/llm.md", "{:.2f} ms per token (median) lies outside its llama_decode calls",
           "2026-12-06-llm-engine-gap.json",
           lambda r: _engine_gap(r, "inferd_outside_decode_ms"),
           "summary.inferd_outside_decode_ms.median"),
    Figure("docs/llm.md", "the HTTP thread), against a {:.2f} ms call;",
           "2026-12-06-llm-engine-gap.json", lambda r: _engine_gap(r, "inferd_decode_call_ms"),
           "summary.inferd_decode_call_ms.median"),
    Figure("docs/llm.md", "woken about {:.1f} times per token, it waited {:.1f} ms per token for "
           "a core", "2026-12-06-llm-engine-gap.json", _engine_gap_http,
           "rounds[-1].inferd_1.threads[http-io*].{slices,wait_ms}_per_token"),
    Figure("docs/observability.md", "which at one client cost ~{:.0f} µs per gRPC call",
           ACCESS_LOG, lambda r: (round(_ab(r, "grpc_p50_us")[0] - _ab(r, "grpc_p50_us")[1], -1),),
           "medians.baseline.grpc_p50_us - medians.candidate.grpc_p50_us, to the ten"),
    Figure("docs/protocols.md", "gRPC p50 ~{:.0f}-{:.0f} µs, +{:.0f}-{:.0f} µs, of which an empty "
           "RPC (ServerLive) already takes ~{:.0f} µs", BUSY_POLL,
           lambda r: tuple(_to5(x) for x in (
               _grpc_probe(r, "0", "p50_us"), _grpc_probe(r, "100", "p50_us"),
               _grpc_probe(r, "0", "p50_us") - r["engine_p50_us"],
               _grpc_probe(r, "100", "p50_us") - r["engine_p50_us"],
               _grpc_probe(r, "0", "server_live_p50_us"))),
           "results[0 and 100].probe[grpc].p50_us (median of the rounds), minus engine_p50_us, "
           "and results[0].probe[grpc].server_live_p50_us; each to the nearest 5"),
    Figure("docs/llm.md", "automatic kept {:.1f} tokens/s beside the busy process ({:.2f}× of its "
           "{:.1f} alone), where a fixed two threads (the old default on this 2-core machine) fell "
           "to {:.1f} ({:.2f}×) and a fixed one thread made {:.1f}. The price is alone: {:.1f} "
           "against {:.1f} and {:.1f} for the fixed two threads",
           "2026-12-05-shared-node-3.json",
           lambda r: _shared_node(r, ("threads 0 (automatic)", "busy"),
                                  ("threads 0 (automatic)", "ratio"),
                                  ("threads 0 (automatic)", "alone"),
                                  ("threads 2 (every core, fixed)", "busy"),
                                  ("threads 2 (every core, fixed)", "ratio"),
                                  ("threads 1", "busy"), ("threads 0 (automatic)", "alone"),
                                  ("threads 2 (every core, fixed)", "alone"),
                                  ("threads 2 (every core, fixed; A/A)", "alone")),
           "summary[config][alone|busy|ratio].median"),
    Figure("docs/llm.md", "every 64 steps: {:.1f} beside busy, {:.2f}×)", "2026-12-05-shared-node.json",
           lambda r: _shared_node(r, ("threads 0 (automatic)", "busy"),
                                  ("threads 0 (automatic)", "ratio")),
           "summary[threads 0 (automatic)][busy|ratio].median"),
    Figure("docs/llm.md", "still on every core: {:.1f}, {:.2f}×)", "2026-12-05-shared-node-2.json",
           lambda r: _shared_node(r, ("threads 0 (automatic)", "busy"),
                                  ("threads 0 (automatic)", "ratio")),
           "summary[threads 0 (automatic)][busy|ratio].median"),
    Figure("docs/llm.md", "inferd made {:.1f} tokens/s at one stream and {:.1f} at 16 against "
           "llama-server's {:.1f} and {:.1f} ({:.2f}× and {:.2f}×, medians of per-round ratios; "
           "the A/A binary {:.2f}× and {:.2f}×); the binary that masked the whole vocabulary "
           "first made {:.2f}× and {:.2f}×", "2026-12-05-llm-structured.json",
           lambda r: tuple(r["summary"][k]["median"] for k in (
               "inferd-1-json_schema", "inferd-16-json_schema", "llama-server-1-json_schema",
               "llama-server-16-json_schema", "ratio-inferd-1-json_schema",
               "ratio-inferd-16-json_schema", "ratio-inferd A/A-1-json_schema",
               "ratio-inferd A/A-16-json_schema", "ratio-grammar-first (before)-1-json_schema",
               "ratio-grammar-first (before)-16-json_schema")),
           "summary[<server>-<clients>-json_schema].median, summary[ratio-...].median"),
    Figure("docs/llm.md", "llama-server's text for text ({} of {})", "2026-12-05-llm-structured.json",
           lambda r: (r["agreement"]["inferd"]["same"], r["agreement"]["inferd"]["compared"]),
           "agreement.inferd"),
    Figure("docs/deployment.md", "{:.0f} requests/s of mlp_scorer and digits for {:.0f} s",
           DEPLOY + "fleet-chaos.json", lambda r: _fleet(r, "rate_per_s", "duration_s"),
           "summary.rate_per_s, .duration_s"),
    Figure("docs/deployment.md", "{} requests scheduled, {} completed, **{} failed, {} lost**; {} "
           "were retried by nginx on another replica; latency p50 {:.1f} ms, p99 {:.0f} ms, max "
           "{:.0f} ms", DEPLOY + "fleet-chaos.json",
           lambda r: _fleet(r, "scheduled", "completed", "failed", "lost", "retried_by_nginx",
                            "p50_ms", "p99_ms", "max_ms"),
           "summary.scheduled, .completed, .failed, .lost, .retried_by_nginx, .p50_ms, .p99_ms, "
           ".max_ms"),
    Figure("docs/deployment.md", "`swarm-rate10.json` | {} | {} | {} | {} | {:.0f} ms | {:.0f} ms "
           "| {:.0f} ms |", DEPLOY + "swarm-rate10.json",
           lambda r: _fleet(r, *COUNTS, "p50_ms", "p99_ms", "max_ms"),
           "summary.scheduled, .failed, .lost, .retried_by_nginx, .p50_ms, .p99_ms, .max_ms"),
    Figure("docs/deployment.md", "`swarm-rate40.json` | {} | {} | {} | {} | {:.0f} s | {:.0f} s | "
           "{:.0f} s |", DEPLOY + "swarm-rate40.json",
           lambda r: (*_fleet(r, *COUNTS),
                      *(x / 1000 for x in _fleet(r, "p50_ms", "p99_ms", "max_ms"))),
           "summary.scheduled, .failed, .lost, .retried_by_nginx, .p50_ms, .p99_ms, .max_ms "
           "(in s)"),
]


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def expected(figure: Figure) -> str:
    return figure.fragment.format(*figure.values(_load(figure.source)))


def mismatches() -> List[str]:
    out = []
    for figure in FIGURES:
        want = expected(figure)
        if _flat(want) not in _flat((ROOT / figure.document).read_text()):
            out.append(f"{figure.document}: should say \"{want}\" ({figure.source}: "
                       f"{figure.keys})")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when a document's figure differs from its result file")
    args = parser.parse_args()
    if not args.check:
        for figure in FIGURES:
            print(f"{figure.document}: \"{expected(figure)}\"\n    from {figure.source}: "
                  f"{figure.keys}")
        return 0
    wrong = mismatches()
    for line in wrong:
        print(line, file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
