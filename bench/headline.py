"""Writes the benchmark tables of README.md and docs/benchmarks.md from committed results.

    .venv/bin/python bench/headline.py           # rewrite the generated blocks
    .venv/bin/python bench/headline.py --check   # exit 1 if a block differs (tests run this)

Nothing here is typed by hand: every figure comes from a bench/results/*.json file that
bench/batching_bench.py (through the same functions, bench/batching_report.py, that wrote
the .md beside it), bench/llm/llm_bench.py (the generation table) or bench/reliability/ (the
reliability table) wrote, and every missed target is a line copied from the result file that
marks it. Each document holds its block between `<!-- headline:KIND -->` and
`<!-- /headline -->`; everything outside the markers is prose and stays as it is.

A result file is never overwritten (bench/README.md, "Kept runs"): where a table shows a kind
of run that is repeated (the generation benchmark, the reliability scripts), it shows the
newest run of that kind (result_file.newest: <kind>.json, the first run, then
<date>-<kind>[-N].json) and links the earlier ones.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import List

import batching_report
import result_file

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"

# The runs the headline shows: the latest full batching run of each demo model it covers.
HEADLINE_RUNS = ["2026-11-30-batching-mlp-session3.json", "2026-11-30-batching-resnet-session3.json"]

# The defaults against the best hand tuning (issue 16): the plain demo config beside every
# variant that adds batching or thread settings, each file one run (the second repeats the
# cells the first missed, with more repeats).
DEFAULTS_RUNS = ["2026-12-02-defaults.json", "2026-12-02-defaults-repeat.json"]

# Every kept result file (bench/results/*.md) is searched for missed targets; a sentence
# matching MISSED_MARK is listed, whichever script wrote it, so a missed target cannot stay
# in a result file without showing in the docs.
def target_files() -> List[str]:
    return sorted(path.name for path in RESULTS.glob("*.md"))

# The generation benchmark (bench/llm/llm_bench.py wrote both files): its newest run.
LLM_KIND = "llm"
# The reliability scripts' results (bench/results/reliability/) and their report.
RELIABILITY = RESULTS / "reliability"
RELIABILITY_KINDS = ("soak", "overload", "faults", "slow_clients")
MISSED_MARK = re.compile(r"MISSED|\*\*not met|not met\b|:\s*missed\b|\(missed\b|; missed\)",
                         re.IGNORECASE)


def _missed_sentences(text: str) -> List[str]:
    """The sentences of `text` that MISSED_MARK finds, each whole: paragraphs and list items
    are joined across their wrapped lines first (tables and headings are skipped)."""
    blocks, current = [], []
    for line in text.splitlines():
        starts_item = line.startswith(("- ", "* "))
        if not line.strip() or line.startswith(("|", "#")) or starts_item:
            if current:
                blocks.append(" ".join(current))
            current = [line[2:].strip()] if starts_item else []
        else:
            current.append(line.strip())
    if current:
        blocks.append(" ".join(current))
    found = []
    for block_text in blocks:
        for sentence in re.split(r"(?<=[.;])\s+(?=[A-Z*(])", block_text):
            if MISSED_MARK.search(sentence):
                found.append(sentence.strip())
    return found


def _load(name: str) -> dict:
    return json.loads((RESULTS / name).read_text())


def _run_rows(name: str, full: dict, concurrencies: List[int]) -> List[str]:
    """One row per inferd variant at each of `concurrencies` (the highest measured if absent),
    with the same run's Flask, nginx and engine references as ratios."""
    refs = batching_report.references(full)
    measured = sorted({c["concurrency"] for c in full["cells"]})
    wanted = [c for c in concurrencies if c in measured] or measured[-1:]
    rows = []
    for cell in full["cells"]:
        if cell["kind"] != "inferd" or cell["concurrency"] not in wanted:
            continue
        s = batching_report.summarise(cell)
        if s is None:
            rows.append(f"| {cell['model']} | {cell['concurrency']} | {cell['variant']} "
                        f"| {batching_report.describe(cell)} | | | | | |")
            continue
        m, c = cell["model"], cell["concurrency"]
        flask, nginx, engine = (refs.get((m, c, "flask")), refs.get((m, c, "nginx")),
                                refs.get((m, None, "engine")))
        rows.append(f"| {m} | {c} | {cell['variant']} | {s['qps']:.0f} | {s['p99_ms']:.1f} "
                    f"| {batching_report._ratio(s['qps'], flask, '{:.1f}×')} "
                    f"| {batching_report._ratio(s['qps'], nginx, '{:.0%}')} "
                    f"| {batching_report._ratio(s['qps'], engine, '{:.0%}')} "
                    f"| [{name[:-5]}](RESULTS/{name[:-5]}.md) |")
    return rows


def _table(concurrencies: List[int]) -> List[str]:
    rows = ["| model | clients | inferd variant | items/s | p99 ms | ×Flask | ×nginx | ×engine best | run |",
            "|---|---:|---|---:|---:|---:|---:|---:|---|"]
    for name in HEADLINE_RUNS:
        rows += _run_rows(name, _load(name), concurrencies)
    return rows


def _targets() -> List[str]:
    lines = []
    for name in HEADLINE_RUNS:
        lines += batching_report.targets(_load(name)) + [""]
    lines += ["Targets other results mark as missed (each sentence as its result file states it):", ""]
    for name in target_files():
        for sentence in _missed_sentences((RESULTS / name).read_text()):
            lines.append(f"- [{name}](RESULTS/{name}): {sentence}")
    return lines


def _llm_table() -> List[str]:
    """Output tokens/s at each client count, inferd beside llama.cpp's own server, its
    Python server and its batched benchmark (the engine's limit), from the newest llm run."""
    name = result_file.newest(LLM_KIND)
    run = _load(name)
    stem = name[:-len(".json")]
    peers, engine = run["peers"], run["batched_bench"]["rows"]
    rows = ["| clients | inferd tok/s | llama-server | llama_cpp.server | engine (batched-bench) "
            "| ×llama-server | ×llama_cpp.server | ×engine | TTFT p50 ms inferd / llama-server |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for clients in sorted(peers["inferd"]["runs"], key=int):
        i = peers["inferd"]["runs"][clients]
        s = peers["llama-server"]["runs"][clients]
        p = peers["llama_cpp.server"]["runs"][clients]
        e = engine[clients]["tokens_per_s"]
        rows.append(f"| {clients} | {i['tokens_per_s']:.1f} | {s['tokens_per_s']:.1f} | "
                    f"{p['tokens_per_s']:.1f} | {e:.1f} | {i['tokens_per_s'] / s['tokens_per_s']:.2f}× | "
                    f"{i['tokens_per_s'] / p['tokens_per_s']:.2f}× | {i['tokens_per_s'] / e:.2f}× | "
                    f"{i['ttft_p50_ms']:.0f} / {s['ttft_p50_ms']:.0f} |")
    before, after = (", ".join(f"{x:.1f}" for x in run[key]) for key in ("load_before", "load_after"))
    slots = run.get("slots", "?")
    rows += ["", f"SmolLM2-135M Q4_1, {run['threads']} threads, {run['output_tokens']} greedy "
             f"output tokens, streamed /v1/completions, one run. What each ran: inferd "
             f"{slots} sequences with continuous batching; llama-server (llama.cpp's own, the same "
             f"release inferd links) `-np {slots} -cb -fa on -b 512 -ub 512`, {run['threads']} "
             f"threads; llama_cpp.server (llama-cpp-python's) one request at a time, "
             f"{run['threads']} threads; the engine: llama-batched-bench `-npp 32 -ntg "
             f"{run['output_tokens']} -npl 1,4,16`, generated tokens over decode time (no "
             f"prompt, no sampling, no server). Load average (1, 5, 15 min) "
             f"before {before}, after {after}. Goals met and missed: "
             f"[{stem}.md](RESULTS/{stem}.md)."]
    earlier = result_file.earlier_runs_line(LLM_KIND, "RESULTS")
    return rows + (["", earlier] if earlier else [])


def _reliability_table() -> List[str]:
    """One row per reliability script (bench/reliability/), from the newest JSON it wrote."""
    def load(name: str) -> dict:
        return json.loads((RELIABILITY / result_file.newest(name, folder=RELIABILITY)).read_text())

    soak, over, faults, slow = (load(n) for n in RELIABILITY_KINDS)
    o, r = over["overload"], over["recovery"]
    b, w = slow["baseline"]["good"], slow["with_slow_connections"]["good"]
    rows = [
        ("soak", soak, f"{soak['minutes']} min at {soak['median_fraction'] * 100:.0f} % of "
         f"{soak['capacity_rps']:.0f} req/s: {soak['totals']['errors']} errors in "
         f"{soak['totals']['requests']:,} requests, resident memory "
         f"+{soak['rss_growth_percent']} %"),
        ("overload", over, f"{over['factor']:g}× capacity on "
         f"{over['model']}: rejections p99 {o['rejected_service'].get('p99_ms')} ms (goal 5), "
         f"admitted p99 {o['admitted'].get('p99_ms')} ms (SLO {over['slo_ms']}); then at "
         f"{over['recovery']['offered_rps']} req/s {r['statuses'].get('200', 0)} of "
         f"{sum(r['statuses'].values())} answered 200, p99 {r['admitted'].get('p99_ms')} ms"),
        ("faults", faults, f"backend error mid-batch, truncated and deleted model files, "
         f"kill -9 during a load: bystander {faults['bystander']['ok']} answers, "
         f"{faults['bystander']['failed']} failed"),
        ("slow clients", slow, f"{slow['slow_connections']} slowloris connections: good "
         f"clients' p99 {b.get('p99_ms')} → {w.get('p99_ms')} ms, "
         f"{slow['with_slow_connections']['good_errors']} errors"),
    ]
    lines = ["| check | verdict | measured | run (load at the end) |", "|---|---|---|---|"]
    for name, data, figures in rows:
        m = data["machine"]
        verdict = "pass" if data.get("passed") else "**FAIL**"
        lines.append(f"| {name} | {verdict} | {figures} | {m['date']}, `{m['git']}`, "
                     f"{m['loadavg_1m_at_end']} |")
    report = result_file.newest("reliability", "md")
    lines += ["", "Each script's command, criteria and per-window figures: "
              f"[{report}](RESULTS/{report})."]
    earlier = [f"[{run}](RESULTS/reliability/{run})" for kind in RELIABILITY_KINDS
               for run in result_file.runs_of(kind, "json", RELIABILITY)[:-1]]
    earlier += [f"[{r}](RESULTS/{r})" for r in result_file.runs_of("reliability", "md")[:-1]]
    if earlier:
        lines += ["", "Earlier runs: " + ", ".join(earlier) + "."]
    return lines


def _defaults_table() -> List[str]:
    lines = []
    for name in DEFAULTS_RUNS:
        full = _load(name)
        stem = name[:-len(".json")]
        lines += [f"[{stem}](RESULTS/{stem}.md): `{full['bench_command']}` "
                  f"({full['settings']['repeats']} × {full['settings']['duration']} s per cell, "
                  f"medians; load average {full['loadavg']['start'][0]:.1f} at the start, "
                  f"{full['loadavg']['end'][0]:.1f} at the end)", ""]
        lines += batching_report.defaults_vs_tuned(full) + [""]
    return lines[:-1]


def block(kind: str, results_link: str) -> str:
    if kind == "short":
        lines = _table([1, 64])
    elif kind == "defaults":
        lines = _defaults_table()
    elif kind == "llm":
        lines = _llm_table()
    elif kind == "reliability":
        lines = _reliability_table()
    elif kind == "full":
        lines = _table([1, 8, 32, 64]) + ["", "### Targets, met and missed", ""] + _targets()
    else:
        raise ValueError(kind)
    return "\n".join(lines).replace("(RESULTS/", f"({results_link}/")


DOCUMENTS = [(ROOT / "README.md", "short", "bench/results"),
             (ROOT / "README.md", "defaults", "bench/results"),
             (ROOT / "README.md", "llm", "bench/results"),
             (ROOT / "README.md", "reliability", "bench/results"),
             (ROOT / "docs" / "benchmarks.md", "full", "../bench/results"),
             (ROOT / "docs" / "benchmarks.md", "llm", "../bench/results")]


def render(text: str, kind: str, results_link: str, path: Path) -> str:
    begin, end = f"<!-- headline:{kind} -->", "<!-- /headline -->"
    pattern = re.compile(re.escape(begin) + r"\n.*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{path}: no '{begin}' ... '{end}' block")
    generated = (f"{begin}\n<!-- generated by bench/headline.py from bench/results/*.json; "
                 f"do not edit -->\n{block(kind, results_link)}\n{end}")
    return pattern.sub(lambda _: generated, text, count=1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare instead of writing; exit 1 when a block differs")
    args = parser.parse_args()
    stale = []
    for path, kind, link in DOCUMENTS:
        text = path.read_text()
        new = render(text, kind, link, path)
        if new != text:
            stale.append(path)
            if not args.check:
                path.write_text(new)
    if args.check and stale:
        print("stale generated blocks (run bench/headline.py): "
              + ", ".join(str(p.relative_to(ROOT)) for p in stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
