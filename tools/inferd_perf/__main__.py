"""inferd-perf: measures an inference server the way Triton's perf_analyzer does, for inferd
and its competitors alike.

  inferd-perf -m mlp_scorer --protocol http-binary --concurrency-range 1:64:x2
  inferd-perf -m mlp_scorer --protocol grpc --request-rate-range 1000:8000:1000 --poisson
  inferd-perf -m mlp_scorer --protocol predict --url localhost:5000 --input-shape features=1,256

Closed loop (--concurrency-range a:b:step, step `xN` multiplies) or open loop
(--request-rate-range a:b:step, constant or --poisson arrivals); a warm-up, then measurement
windows until `--stable-windows` in a row agree within `--stability-percentage` on throughput
and p50; p50/p90/p95/p99, throughput, errors and the server's queue/compute breakdown (from
/v2/models/M/stats, when the server has it). Protocols: http-json, http-binary, grpc,
predict (the seed's POST /predict, e.g. the Flask baseline). Output: the terminal, and
--csv, --json, --plot (PNG, latency vs throughput).

  inferd-perf -m smollm2 --generate --prompt-tokens 128 --output-tokens 64 --concurrency-range 1:16:x4

--generate drives a language model instead: closed-loop clients streaming /v1/completions
(any OpenAI-compatible server), `--requests` per concurrency level, reporting time to first
token p50/p99, time per output token p50, output tokens/s and the token counts the server's
usage gave (tools/inferd_perf/generation.py).
"""

from __future__ import annotations

import argparse
import datetime
import platform
import sys
from pathlib import Path

from . import generation
from .measure import Options, Runner, ServerStats
from .output import print_row, write_csv, write_json, write_plot
from .senders import PROTOCOLS, InputSpec, build_factory, model_inputs


def parse_range(text: str, integer: bool) -> list[float]:
    """"a:b:step" -> [a, a+step, ... <= b]; a step "xN" multiplies instead ("1:64:x2")."""
    parts = text.split(":")
    start = float(parts[0])
    end = float(parts[1]) if len(parts) > 1 else start
    step = parts[2] if len(parts) > 2 else "1"
    factor = float(step[1:]) if step.startswith("x") else None
    increment = None if factor else float(step)
    if start <= 0 or (factor is not None and factor <= 1) or (increment is not None and increment <= 0):
        raise SystemExit(f"range {text}: needs a positive start and a step that grows")
    values, v = [], start
    while v <= end + 1e-9:
        values.append(int(v) if integer else v)
        v = v * factor if factor else v + increment
    return values


def parse_shapes(items: list[str]) -> dict[str, list[int]]:
    shapes = {}
    for item in items or []:
        name, _, dims = item.partition("=")
        shapes[name] = [int(d) for d in dims.split(",") if d]
    return shapes


def generate(args, host: str, port: int, argv: list[str] | None) -> int:
    if args.request_rate_range:
        raise SystemExit("--generate runs closed loop: use --concurrency-range")
    for name in ("prompt_tokens", "output_tokens"):
        if not 1 <= getattr(args, name) <= 1 << 20:
            raise SystemExit(f"--{name.replace('_', '-')} must be in 1..{1 << 20}")
    headers = {"Authorization": f"Bearer {args.api_key}"} if args.api_key else {}
    rows = []
    for level in parse_range(args.concurrency_range or "1", integer=True):
        requests = args.requests or 4 * level
        if requests < 1:
            raise SystemExit("--requests must be at least 1")
        row = generation.run(host, port, args.model, level, requests, args.prompt_tokens,
                             args.output_tokens, headers)
        generation.print_generation_row(row)
        rows.append(row)
    meta = {"command": " ".join(["inferd-perf", *(argv if argv is not None else sys.argv[1:])]),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "host": platform.node(), "python": platform.python_version()}
    if args.json:
        write_json(rows, meta, args.json)
    return 1 if any(r["errors"] for r in rows) else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="inferd-perf", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("-m", "--model", required=True)
    parser.add_argument("--url", default="localhost:8080", help="HTTP host:port (metadata, "
                        "statistics, and the load for HTTP protocols)")
    parser.add_argument("--grpc-url", default=None, help="gRPC host:port (default: port 8081)")
    parser.add_argument("--protocol", default="http-binary", choices=PROTOCOLS)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--concurrency-range", default=None, help="a:b:step (closed loop)")
    group.add_argument("--request-rate-range", default=None, help="a:b:step req/s (open loop)")
    parser.add_argument("--poisson", action="store_true", help="Poisson arrivals (open loop)")
    parser.add_argument("--batch-size", type=int, default=1, help="rows per request")
    parser.add_argument("--input-shape", action="append", metavar="NAME=D1,D2",
                        help="full shape of an input (default: from the model's metadata)")
    parser.add_argument("--input-datatype", default="FP32",
                        help="datatype for --protocol predict without metadata")
    parser.add_argument("--measurement-interval", type=float, default=2.0, help="window, s")
    parser.add_argument("--warmup", type=float, default=1.0, help="warm-up, s")
    parser.add_argument("--stability-percentage", type=float, default=10.0)
    parser.add_argument("--stable-windows", type=int, default=3)
    parser.add_argument("--max-windows", type=int, default=10)
    parser.add_argument("--processes", type=int, default=1,
                        help="load-generating processes (one Python process tops out at a few "
                             "thousand requests/s)")
    parser.add_argument("--max-threads", type=int, default=64, help="senders for open loop")
    parser.add_argument("--generate", action="store_true",
                        help="generation load: stream /v1/completions (see below)")
    parser.add_argument("--prompt-tokens", type=int, default=32, help="--generate: prompt length")
    parser.add_argument("--output-tokens", type=int, default=32, help="--generate: max_tokens")
    parser.add_argument("--requests", type=int, default=None,
                        help="--generate: requests per level (default 4 x concurrency)")
    parser.add_argument("--api-key", default=None, help="--generate: sent as a bearer token")
    parser.add_argument("--csv", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--plot", type=Path)
    args = parser.parse_args(argv)

    host, _, port = args.url.removeprefix("http://").partition(":")
    http_port = int(port or 8080)
    if args.generate:
        return generate(args, host, http_port, argv)
    shapes = parse_shapes(args.input_shape)
    if args.protocol == "predict" and shapes:
        inputs = [InputSpec(name, args.input_datatype, shape) for name, shape in shapes.items()]
    else:
        inputs = model_inputs(host, http_port, args.model, args.batch_size, shapes)
    if args.protocol == "grpc":
        ghost, _, gport = (args.grpc_url or f"{host}:8081").partition(":")
        factory = build_factory("grpc", ghost, int(gport or 8081), args.model, inputs)
    else:
        factory = build_factory(args.protocol, host, http_port, args.model, inputs)

    mode = "rate" if args.request_rate_range else "concurrency"
    levels = (parse_range(args.request_rate_range, integer=False) if mode == "rate"
              else parse_range(args.concurrency_range or "1", integer=True))
    options = Options(mode=mode, window_s=args.measurement_interval, warmup_s=args.warmup,
                      stability_pct=args.stability_percentage, stable_windows=args.stable_windows,
                      max_windows=args.max_windows, processes=args.processes,
                      open_loop_threads=args.max_threads, poisson=args.poisson)
    stats = ServerStats(host, http_port, args.model) if args.protocol != "predict" else None
    runner = Runner(factory, options, stats)
    rows = []
    try:
        for level in levels:
            row = {"protocol": args.protocol, "model": args.model} | runner.measure(level)
            print_row(row)
            rows.append(row)
    finally:
        runner.close()
    meta = {"command": " ".join(["inferd-perf", *(argv if argv is not None else sys.argv[1:])]),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "host": platform.node(), "python": platform.python_version(),
            "inputs": [vars(i) for i in inputs]}
    if args.csv:
        write_csv(rows, args.csv)
    if args.json:
        write_json(rows, meta, args.json)
    if args.plot:
        write_plot(rows, args.plot, f"{args.model} ({args.protocol}, {mode})")
    return 1 if any(r["errors"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
