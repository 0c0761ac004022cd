"""bench/peers' table (.md), raw numbers (.json) and plots (.png, matplotlib).

Everything shown comes from the run's record: medians over rounds per (model, client,
concurrency, server), and each server's throughput as a ratio of inferd's (demo config)
and inferd's auto-tuned config at the same model, client and concurrency.
"""

import json
import os
import re
from typing import Dict, List, Optional

import report  # bench/, which peers_bench.py puts on sys.path
import result_file


LABELS = {"inferd": "inferd (demo config)",
          "inferd-autotune": "inferd (auto_tune, 1 intra-op thread)",
          "triton": "Triton 2.51 (Python backend)", "ray": "Ray Serve", "litserve": "LitServe",
          "torchserve": "TorchServe 0.12", "bentoml": "BentoML 1.4.40",
          "kserve": "KServe 0.21.0"}
# What a stronger configuration of a peer would be, where it cannot run here: said in every
# report that measures the peer, so no ratio against it reads as the peer at its best.
NOT_HERE = {
    "triton": "Triton's PyTorch (LibTorch) and ONNX Runtime backends, the ones a Triton user "
              "would serve these TorchScript models with, are not in the build that installs "
              "from PyPI here (nvidia-pytriton 0.7.0 ships the Python backend only): every "
              "Triton figure is its Python backend, torch.jit inside triton_python_backend_stub "
              "(apps/triton_model.py).",
    "kserve": "KServe's batching, its agent sidecar (an InferenceService's `batcher: "
              "{maxBatchSize, maxLatency}`), runs only under Kubernetes: every KServe figure is "
              "its Python model server answering each request with its own forward pass.",
}
CLIENT_LABELS = {"wrk-json": "wrk, KServe v2 JSON body",
                 "pa-http": "perf_analyzer, HTTP binary tensors",
                 "pa-grpc": "perf_analyzer, gRPC"}


def _pin(rep: dict, peer: str, package: str, default: str) -> str:
    for pin in rep.get("versions", {}).get(peer, []):
        name, _, version = pin.partition("==")
        if name.lower() == package:
            return version
    return default


def ran(rep: dict, model: str, peer: str) -> str:
    """What the peer ran, as the run's settings and configs say: the label of its rows."""
    st = rep["settings"]
    batch = st.get("max_batch", {}).get(model, "?")
    delay = st.get("queue_delay_us", {}).get(model)
    ms = "?" if delay is None else f"{delay / 1e3:g}"
    if peer == "inferd":
        found = re.search(r"max_batch_size:\s*(\d+)", rep.get("configs", {}).get(
            f"{model}/inferd", ""))
        return (f"inferd, demo config (dynamic batching up to {found.group(1) if found else '?'}, "
                "no queue delay; intra-op threads chosen at load)")
    if peer == "inferd-autotune":
        return f"inferd, auto_tune (SLO {st.get('slo_ms', '?'):g} ms), 1 intra-op thread"
    if peer == "triton":
        return (f"Triton 2.51, Python backend, dynamic batching (max_batch_size {batch}, "
                f"max_queue_delay {delay} µs), 1 instance")
    if peer == "ray":
        return (f"Ray Serve {_pin(rep, peer, 'ray', '?')}, @serve.batch (max_batch_size {batch}, "
                f"batch_wait_timeout {ms} ms), 1 replica")
    if peer == "litserve":
        return (f"LitServe {_pin(rep, peer, 'litserve', '?')}, batching (max_batch_size {batch}, "
                f"batch_timeout {ms} ms), 1 worker")
    if peer == "torchserve":
        wait = "?" if delay is None else max(1, round(delay / 1e3))
        return (f"TorchServe {_pin(rep, peer, 'torchserve', '0.12')}, batching (batchSize {batch},"
                f" maxBatchDelay {wait} ms), 1 worker")
    if peer == "bentoml":
        found = re.search(r"max_latency_ms=(\d+)", rep.get("configs", {}).get(
            f"{model}/bentoml", ""))
        return (f"BentoML {_pin(rep, peer, 'bentoml', '?')}, adaptive batching (max_batch_size "
                f"{batch}, max_latency_ms {found.group(1) if found else '?'}; the wait learned), "
                "1 worker")
    if peer == "kserve":
        return (f"KServe {_pin(rep, peer, 'kserve', '?')} Python model server (kserve.Model), "
                "no batching (KServe's batcher is a Kubernetes sidecar), 1 worker")
    return LABELS.get(peer, peer)


def _load(triple) -> str:
    return "/".join(f"{x:.2f}" for x in triple)


def _ratio(value: Optional[float], base: Optional[dict]) -> str:
    if value is None or not base or not base.get("qps") or base.get("errors"):
        return "—"
    return f"{value / base['qps']:.2f}×"


def _fmt(value: Optional[float], spec: str) -> str:
    return "—" if value is None else format(value, spec)


def table(cells: List[dict], model: str, client: str, concurrency: List[int],
          peers: List[str], names: Dict[str, str]) -> List[str]:
    by = {(c["concurrency"], c["peer"]): c for c in cells
          if c["model"] == model and c["client"] == client}
    rows = ["| clients | server | req/s | rounds' req/s | p50 ms | p99 ms | errors "
            "| server CPU ms/req | ÷ inferd | ÷ inferd auto_tune |",
            "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for c in concurrency:
        base = (by.get((c, "inferd")) or {}).get("summary")
        tuned = (by.get((c, "inferd-autotune")) or {}).get("summary")
        for peer in peers:
            cell = by.get((c, peer))
            if cell is None:
                continue
            s = cell.get("summary")
            head = f"| {c} | {names[peer]} "
            if s is None:
                why = (cell["errors"] or ["no run"])[0].splitlines()[0][:150]
                rows.append(head + f"| failed: {why} | | | | | | | |")
                continue
            spread = sorted(r["qps"] for r in cell["runs"] if r.get("qps") is not None)
            rounds = (f"{spread[0]:.1f}–{spread[-1]:.1f}" if len(spread) > 1 else "one round")
            rows.append(head + f"| {s['qps']:.1f} | {rounds} | {s['p50_ms']:.2f} "
                        f"| {s['p99_ms']:.2f} "
                        f"| {s['errors']} / {s['requests'] or '?'} | {_fmt(s['cpu_ms'], '.3f')} "
                        f"| {_ratio(s['qps'], base)} | {_ratio(s['qps'], tuned)} |")
    return rows


def headline(cells: List[dict], model: str, peers: List[str], concurrency: List[int],
             names: Dict[str, str]) -> List[str]:
    """req/s per server and concurrency with the client every server took (wrk-json)."""
    by = {(c["concurrency"], c["peer"]): c.get("summary") for c in cells
          if c["model"] == model and c["client"] == "wrk-json"}
    rows = ["| server | " + " | ".join(f"c={c}" for c in concurrency) + " |",
            "|---|" + "---:|" * len(concurrency)]
    for peer in peers:
        if not any((c, peer) in by for c in concurrency):
            continue
        vals = []
        for c in concurrency:
            s = by.get((c, peer))
            vals.append("failed" if s is None else f"{s['qps']:.0f}"
                        + (f" ({s['errors']} err)" if s["errors"] else ""))
        rows.append(f"| {names[peer]} | " + " | ".join(vals) + " |")
    return rows


def markdown(rep: dict, name: str) -> str:
    m, st = rep["machine"], rep["settings"]
    peers, conc = st["peers"], st["concurrency"]
    lines = [f"# inferd and its peers — {rep['date']}", "",
             f"- command: `{rep['bench_command']}`",
             f"- git commit: {rep['git_commit']}; started {rep['started']}, ended {rep['ended']}",
             f"- machine: {report.machine_words(m)}, {m['wrk']}, "
             f"perf_analyzer {rep['perf_analyzer']}",
             f"- load average (1/5/15 min): {_load(rep['loadavg']['start'])} at the start, "
             f"{_load(rep['loadavg']['end'])} at the end (the benchmark itself keeps it near 2; "
             "more means other work shared the cores)",
             f"- one server at a time; per server: {st['warmup_requests']} sequential requests, "
             f"then per concurrency {st['warmup']} s of wrk (untimed) and one "
             f"{st['duration']} s run per client; {st['rounds']} round(s), medians over rounds; "
             "every server runs the same frozen TorchScript file with one instance / replica / "
             "worker and its own dynamic batching (configs below)",
             "- server CPU ms/req: user+system CPU of every process in the server's session "
             "(from /proc) from the start of a run until it is idle again, over the requests it "
             "served (Δinference_count from its statistics for inferd and Triton, the client's "
             "count for the others)",
             "- rounds' req/s: the lowest and highest of the rounds the median is taken over "
             "(the spread: a ratio smaller than it says nothing)",
             "- ÷ inferd: the server's req/s over inferd's (demo config) at the same model, "
             "client and concurrency; ÷ inferd auto_tune likewise against the tuned config", ""]
    if rep.get("inferd_binary"):
        b = rep["inferd_binary"]
        lines += [f"inferd binary: `{b['path']}`, sha256 {b['sha256'][:16]}…, built {b['mtime']}"
                  f"; models from `{rep.get('repository', '?')}`", ""]
    absent = [NOT_HERE[p] for p in peers if p in NOT_HERE]
    if absent:
        lines += ["Not measured, stronger configurations that cannot run here:", ""]
        lines += [f"- {text}" for text in absent] + [""]
    for model in st["models"]:
        names = {peer: ran(rep, model, peer) for peer in peers}
        lines += [f"## {model}", "",
                  f"![{model}]({name}-{model}.png)", "",
                  "Requests/s with the client every server took (wrk, KServe v2 JSON body):", ""]
        lines += headline(rep["cells"], model, peers, conc, names) + [""]
        for client in st["clients"]:
            rows = table(rep["cells"], model, client, conc, peers, names)
            if len(rows) > 2:
                lines += [f"### {CLIENT_LABELS[client]}", ""] + rows + [""]
    lines += ["## Fronts", ""]
    for peer in peers:
        if peer in rep["fronts"]:
            lines.append(f"- {LABELS[peer]}: {rep['fronts'][peer]}")
    lines += ["", "perf_analyzer reads the model's metadata and config before it sends anything, "
              "so it drives only the servers with a KServe v2 front of their own.", "",
              "## Idle CPU", "",
              "Cores each server used with no request in flight (2 s, after its warm-up "
              "requests); it counts in CPU per request too and takes cores from the client:", ""]
    lines += [f"- {LABELS[key.split('/')[1]]} / {key.split('/')[0]}: {cores:.3f}"
              for key, cores in rep.get("idle_cores", {}).items()]
    lines += ["",
              "## Could not run", ""]
    lines += [f"- {LABELS.get(f['peer'], f['peer'])} / {f['model']} (round {f['round']}): "
              f"{f['error'].splitlines()[0][:300]}" for f in rep["failures"]] or ["- none"]
    lines += ["", "## Answers checked before timing", "",
              "One POST of the KServe v2 JSON body (sample.json's first row, batch 1) per server, "
              "its output against sample.json's expected row (|Δ| ≤ 1e-4 + 1e-4·|expected|); "
              "then sample.json's rows as separate requests, 8 copies each, all at once, so "
              "batching groups different rows, each answer against its own row:", ""]
    for c in rep["checks"]:
        lines.append(f"- {LABELS[c['peer']]} / {c['model']}: HTTP {c['status']}, ready after "
                     f"{c['ready_s']:.1f} s, {c['verdict']}"
                     + (f"; {c['concurrent']}" if c.get("concurrent") else ""))
    lines += ["", "## Versions and batching configs", ""]
    for peer, pins in rep["versions"].items():
        key = [p for p in pins if p.split("==")[0].lower() in
               ("nvidia-pytriton", "ray", "litserve", "torchserve", "torch-model-archiver",
                "bentoml", "kserve", "torch", "numpy", "fastapi", "uvicorn")]
        lines.append(f"- {LABELS[peer]}: {', '.join(key)} (all pins: "
                     f"bench/peers/requirements-{peer}.txt)")
    lines.append("")
    for key, text in rep["configs"].items():
        lines += [f"`{key}`:", "", "```", text.strip(), "```", ""]
    for key, batching in rep["batching"].items():
        if batching:
            lines += [f"`{key}` as loaded (GET /v2/models/M/stats `batching`): "
                      f"`{json.dumps(batching)[:600]}`", ""]
    lines += ["Every command (servers, wrk, perf_analyzer) and every run is in the .json beside "
              "this file.", ""]
    return "\n".join(lines)


def plot(rep: dict, model: str, path: str) -> bool:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter

    plain = FuncFormatter(lambda v, _: f"{v:g}")

    st = rep["settings"]
    clients = [c for c in st["clients"] if any(
        cell["model"] == model and cell["client"] == c and cell.get("summary")
        for cell in rep["cells"])]
    if not clients:
        return False
    fig, axes = plt.subplots(len(clients), 2, figsize=(11, 3.6 * len(clients)), squeeze=False)
    for row, client in enumerate(clients):
        for col, (key, title) in enumerate((("qps", "requests/s"), ("p99_ms", "p99 latency, ms"))):
            ax = axes[row][col]
            for peer in st["peers"]:
                pts = sorted((cell["concurrency"], cell["summary"][key]) for cell in rep["cells"]
                             if cell["model"] == model and cell["client"] == client
                             and cell["peer"] == peer and cell.get("summary"))
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                            color=f"C{list(LABELS).index(peer)}", label=LABELS[peer])
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xticks(st["concurrency"], [str(c) for c in st["concurrency"]])
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.yaxis.set_major_formatter(plain)
            ax.yaxis.set_minor_formatter(NullFormatter())
            ax.set_xlabel("concurrent clients")
            ax.set_title(f"{model}: {title} — {CLIENT_LABELS[client]}", fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
            if row == 0 and col == 0:
                ax.legend(fontsize=7, loc="best")
    fig.suptitle(f"inferd and its peers, {rep['date']} ({rep['machine']['nproc']} CPUs, load "
                 f"{_load(rep['loadavg']['start'])} → {_load(rep['loadavg']['end'])})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def write(rep: dict, out_dir: str, name: str) -> List[str]:
    """Writes <date>-<name>[-N].md, .json and -<model>.png (result_file.new_stem: never over a
    kept file); returns their paths."""
    stem = result_file.new_stem(out_dir, name)
    out_dir, name = str(stem.parent), stem.name
    paths = []
    for model in rep["settings"]["models"]:
        png = os.path.join(out_dir, f"{name}-{model}.png")
        if plot(rep, model, png):
            paths.append(png)
    md, js = os.path.join(out_dir, name + ".md"), os.path.join(out_dir, name + ".json")
    with open(md, "w") as f:
        f.write(markdown(rep, name))
    with open(js, "w") as f:
        json.dump(rep, f, indent=1)
        f.write("\n")
    return [md, js] + paths
