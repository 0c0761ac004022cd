"""The batching benchmark's table, the engine's batch sweep and issue 3's targets (.md, .json).

Rows carry ratios against the three references measured in the same run — Flask (the
seed's baseline), nginx (the loopback ceiling) and the engine at its best batch size (the
model's limit) — and the targets are checked from those same rows, so a pass or fail can
always be traced to the numbers beside it.
"""

import json
import os
import statistics
from typing import Dict, List, Optional

import report
import result_file

# Issue 3's targets, checked at concurrency 64 (or the highest one measured).
TARGET_C = 64
TARGETS = {
    "mlp_scorer": [("≥ 60% of nginx", "nginx", 0.60), ("≥ 40× Flask", "flask", 40.0),
                   ("p99 < 100 ms", "p99", 100.0), ("zero errors", "errors", 0)],
    "resnet18": [("≥ 90% of engine best", "engine", 0.90), ("zero errors", "errors", 0)],
}


def summarise(cell: dict) -> Optional[dict]:
    """report.summarise's medians plus the average batch inferd says it ran (None if unknown)."""
    if cell.get("error") or cell.get("skipped") or not cell.get("runs"):
        return None
    s = report.summarise(cell["runs"])
    if s["requests"] == 0:
        return None
    stats = [run.get("stats") for run in cell["runs"]]
    if stats and all(stats):
        executions = sum(x["execution_count"] for x in stats)
        s["avg_batch"] = sum(x["inference_count"] for x in stats) / executions if executions else None
    return s


def engine_summary(engine: dict) -> Optional[dict]:
    """Per batch size, medians over the sweeps; the best size by median items/s."""
    runs = engine.get("runs") or []
    if not runs:
        return None
    sizes = {}
    for run in runs:
        for row in run["sweep"]:
            sizes.setdefault(row["batch_size"], []).append(row)
    table = [{"batch_size": b, "items_per_s": statistics.median(r["items_per_s"] for r in rows),
              "p50_ms": statistics.median(r["p50_ms"] for r in rows),
              "p99_ms": statistics.median(r["p99_ms"] for r in rows), "sweeps": len(rows)}
             for b, rows in sorted(sizes.items())]
    best = max(table, key=lambda row: row["items_per_s"])
    return {"sizes": table, "best": best, "setup": runs[0]}


def describe(cell: dict) -> str:
    if cell.get("skipped"):
        return f"skipped ({cell['skipped']})"
    s = summarise(cell)
    if s is None and cell.get("runs") and not cell.get("error"):
        return "no request completed (each took longer than the run?)"
    if s is None:
        return "failed: " + cell.get("error", "no runs").splitlines()[0][:160]
    batch = f", avg batch {s['avg_batch']:.2f}" if s.get("avg_batch") else ""
    return (f"{s['qps']:.1f} items/s, p50 {s['p50_ms']:.2f} ms, p99 {s['p99_ms']:.2f} ms, "
            f"errors {s['errors']}/{s['requests']}{batch}")


def references(full: dict) -> Dict[tuple, float]:
    """(model, concurrency, 'flask'|'nginx') -> QPS; (model, None, 'engine') -> best items/s."""
    refs = {}
    for cell in full["cells"]:
        s = summarise(cell)
        if s and cell["kind"] in ("flask", "nginx") and s["errors"] == 0:
            refs[(cell["model"], cell["concurrency"], cell["kind"])] = s["qps"]
    for engine in full["engine"]:
        e = engine_summary(engine)
        if e:
            refs[(engine["model"], None, "engine")] = e["best"]["items_per_s"]
    return refs


def _ratio(value: Optional[float], ref: Optional[float], fmt: str) -> str:
    return fmt.format(value / ref) if value is not None and ref else "—"


def table(full: dict) -> List[str]:
    refs = references(full)
    rows = ["| model | c | server | items/s (= QPS) | p50 ms | p99 ms | errors | avg batch "
            "| ×Flask | ×nginx | ×engine best |", "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for cell in full["cells"]:
        m, c = cell["model"], cell["concurrency"]
        head = f"| {m} | {c} | {cell['server']} "
        s = summarise(cell)
        if s is None:
            rows.append(head + f"| {describe(cell)} | | | | | | | |")
            continue
        batch = f"{s['avg_batch']:.2f}" if s.get("avg_batch") else (
            "n/a (no /stats)" if cell["kind"] == "inferd" else "—")
        ratios = ["—"] * 3
        if cell["kind"] == "inferd":
            ratios = [_ratio(s["qps"], refs.get((m, c, "flask")), "{:.1f}×"),
                      _ratio(s["qps"], refs.get((m, c, "nginx")), "{:.0%}"),
                      _ratio(s["qps"], refs.get((m, None, "engine")), "{:.0%}")]
        rows.append(head + f"| {s['qps']:.1f} | {s['p50_ms']:.2f} | {s['p99_ms']:.2f} "
                    f"| {s['errors']} / {s['requests']} | {batch} | " + " | ".join(ratios) + " |")
    return rows


def engine_table(full: dict) -> List[str]:
    rows = ["| model | batch size | items/s | p50 ms per pass | p99 ms per pass | |",
            "|---|---:|---:|---:|---:|---|"]
    for engine in full["engine"]:
        e = engine_summary(engine)
        if e is None:
            rows.append(f"| {engine['model']} | failed: "
                        f"{engine.get('error', 'no runs').splitlines()[0][:160]} | | | | |")
            continue
        for row in e["sizes"]:
            mark = "**best**" if row is e["best"] else ""
            rows.append(f"| {engine['model']} | {row['batch_size']} | {row['items_per_s']:.1f} "
                        f"| {row['p50_ms']:.2f} | {row['p99_ms']:.2f} | {mark} |")
    return rows


def targets(full: dict) -> List[str]:
    """One row per (model, inferd variant, target) at concurrency 64 or the highest measured."""
    refs, rows, verdicts = references(full), [], []
    rows += ["| model | c | inferd variant | target | measured | pass |", "|---|---:|---|---|---:|---|"]
    for model, checks in TARGETS.items():
        cells = [c for c in full["cells"] if c["model"] == model and c["kind"] == "inferd"]
        if not cells:
            continue
        conc = TARGET_C if any(c["concurrency"] == TARGET_C for c in cells) else \
            max(c["concurrency"] for c in cells)
        met = []
        for cell in (c for c in cells if c["concurrency"] == conc):
            s, ok_all = summarise(cell), True
            for name, kind, limit in checks:
                if s is None:
                    value, ok = "unavailable", False
                elif kind == "p99":
                    value, ok = f"{s['p99_ms']:.1f} ms", s["p99_ms"] < limit
                elif kind == "errors":
                    value, ok = f"{s['errors']} / {s['requests']}", s["errors"] == 0
                else:
                    ref = refs.get((model, None if kind == "engine" else conc, kind))
                    ratio = s["qps"] / ref if ref else None
                    value = "no reference" if ratio is None else (
                        f"{ratio:.1f}×" if kind == "flask" else f"{ratio:.0%}")
                    ok = ratio is not None and ratio >= limit
                ok_all = ok_all and ok
                rows.append(f"| {model} | {conc} | {cell['variant']} | {name} | {value} "
                            f"| {'PASS' if ok else 'FAIL'} |")
            if ok_all:
                met.append(cell["variant"])
        verdicts.append(f"- {model} at c={conc}: " + (f"**met** by {', '.join(met)}" if met else
                                                       "**not met** by any variant measured"))
    return rows + [""] + verdicts if verdicts else []


# Issue 16: the plain config (inferd's defaults) reaches this share of the best variant.
DEFAULTS_GOAL = 0.9


def defaults_vs_tuned(full: dict) -> List[str]:
    """Per (model, c): the plain variant's QPS against the best other inferd variant's."""
    by_key: Dict[tuple, Dict[str, float]] = {}
    for cell in full["cells"]:
        s = summarise(cell) if cell["kind"] == "inferd" else None
        if s is not None:
            by_key.setdefault((cell["model"], cell["concurrency"]), {})[cell["variant"]] = s["qps"]
    rows = ["| model | c | plain QPS | best other variant | its QPS | plain ÷ best | "
            f"≥ {DEFAULTS_GOAL:.0%} |", "|---|---:|---:|---|---:|---:|---|"]
    for (model, conc), qps in sorted(by_key.items()):
        others = {v: q for v, q in qps.items() if v != "plain"}
        if "plain" not in qps or not others:
            continue
        best = max(others, key=others.get)
        ratio = qps["plain"] / others[best] if others[best] else 0
        rows.append(f"| {model} | {conc} | {qps['plain']:.1f} | {best} | {others[best]:.1f} "
                    f"| {ratio:.2f} | {'PASS' if ratio >= DEFAULTS_GOAL else 'FAIL'} |")
    return rows if len(rows) > 2 else []


def policy(batching: Optional[dict]) -> str:
    """The `batching` object of /stats in one line: the policy, and auto_tune's measurements
    (batch size → items/s, ms per pass, ✓ within the SLO) with its choice."""
    if not batching:
        return "not reported (no /stats endpoint, or no `batching` in it)"
    try:
        text = (f"dynamic {str(batching['dynamic']).lower()} ({batching.get('source', '?')}), "
                f"max_batch_size "
                f"{batching['max_batch_size']}, preferred {batching['preferred_batch_sizes']}, "
                f"max_queue_delay_us {batching['max_queue_delay_us']}")
        tune = batching.get("auto_tune")
        if tune:
            text += (f"; auto_tune (SLO {tune['latency_slo_ms']:g} ms) chose "
                     f"{tune['chosen_batch_size']} from " + ", ".join(
                         f"{m['batch_size']}: {m['items_per_s']:.0f}/s {m['latency_ms']:.2f} ms"
                         f"{' ✓' if m['within_slo'] else ' ✗'}" for m in tune["table"]))
        return text
    except (KeyError, TypeError, ValueError):
        return f"`{json.dumps(batching, separators=(',', ':'))}`"


def markdown(full: dict) -> str:
    m, st = full["machine"], full["settings"]
    idle = [run["idle_servers_cpu_s"] / run["duration_us"] * 1e6 for cell in full["cells"]
            for run in cell["runs"] if run.get("duration_us")]
    engines = [e for e in (engine_summary(x) for x in full["engine"]) if e]
    binary = full.get("inferd_binary") or {}
    lines = [f"# inferd dynamic batching vs engine, Flask and nginx — {full['date']}", "",
             f"- command: `{full['bench_command']}`",
             f"- git commit: {full['git_commit']}; machine: {report.machine_words(m)}, "
             f"{m['wrk']}, {full['nginx_version']}",
             f"- inferd: {binary.get('path', '—')} built {binary.get('mtime', '?')}, sha256 "
             f"{binary.get('sha256', '?')[:12]}, run from a copy made at the start",
             f"- per (model, c): {st['warmup_requests']} sequential requests + {st['warmup']} s "
             f"of load per server, then {st['repeats']} × {st['duration']} s "
             f"(Flask {st['flask_duration']} s) of `wrk -t1 -cC --timeout {st['wrk_timeout']}s`, "
             "repeats interleaved across servers; one item per request, so items/s = QPS; "
             "medians of repeats, errors are totals (non-2xx + socket errors)",
             "- servers of a model are started once and stay up; only one is under load at a "
             f"time; idle servers used at most {max(idle, default=0):.1%} of a core during "
             "the others' runs",
             "- avg batch: Δinference_count / Δexecution_count from GET /v2/models/M/stats "
             "around each timed run",
             f"- nginx ({st['nginx_mode']} mode, see bench/README.md): constant answer, ~2 KB "
             "body read in full; ×nginx is inferd's share of the loopback ceiling",
             f"- load average {report._load(full['loadavg']['start'])} at the start, "
             f"{report._load(full['loadavg']['end'])} at the end; wall {full['wall_s'] / 60:.1f} min",
             ""]
    if engines:
        r = engines[0]["setup"]
        lines += [f"- engine best: `engine_limit.py --batch-sizes`, one thread, torch {r['torch']}, "
                  f"{r['intra_op_threads']} intra-op threads, "
                  f"{os.path.basename(r['ld_preload']) or 'glibc malloc'}, "
                  f"{'frozen' if r['frozen'] else 'not frozen'}; the bench row repeated to each "
                  f"batch size, {st['engine_duration']:g} s per size; ×engine best = "
                  "inferd's items/s ÷ the best size's", ""]
    lines += table(full) + ["", "## Engine batch sweep (the limit)", ""] + engine_table(full)
    lines += ["", "## Issue 3 targets", ""] + (targets(full) or ["(no target model measured)"])
    lines += ["", "## The defaults against the best tuning (issue 16)", "",
              "`plain` is the demo config as a user writes it; each other variant adds "
              "batching or thread settings by hand.", ""]
    lines += defaults_vs_tuned(full) or ["(plain, or every other variant, did not run)"]
    lines += ["", "## Batching as each inferd variant reports it (GET /v2/models/M/stats)", ""]
    lines += [f"- {key}: {policy(value)}" for key, value in full.get("batching", {}).items()] \
        or ["(no inferd variant ran)"]
    lines += ["", "## Sanity check (one request per server before timing)", ""]
    lines += [f"- {c['server']} / {c['model']}: HTTP {c['status']}, {c['ms']:.1f} ms, "
              f"{c['verdict']}" for c in full["checks"]]
    lines += ["", "## Configs served", ""]
    for key, text in full["configs"].items():
        lines += [f"`{key}`:", "", "```", text.rstrip(), "```", ""]
    lines += ["Every command (servers, warm-ups, timed runs, engine) is in the .json.", ""]
    return "\n".join(lines)


def write(full: dict, out_dir: str, name: str) -> List[str]:
    """Writes <date>-<name>[-N].md and .json (result_file.new_stem: never over a kept file)."""
    stem = str(result_file.new_stem(out_dir, name))
    paths = [stem + ext for ext in (".md", ".json")]
    with open(paths[0], "w") as f:
        f.write(markdown(full))
    with open(paths[1], "w") as f:
        json.dump(full, f, indent=2)
        f.write("\n")
    return paths
