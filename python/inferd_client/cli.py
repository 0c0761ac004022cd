"""inferd-cli: health, model list, metadata, statistics, load/unload and inference from a
KServe v2 JSON body or .npy files, against any KServe v2 HTTP server.

  inferd-cli [--url localhost:8080] health
  inferd-cli list
  inferd-cli metadata MODEL
  inferd-cli stats [MODEL]
  inferd-cli load MODEL | unload MODEL
  inferd-cli infer MODEL --json body.json            (the body's "inputs"; JSON data)
  inferd-cli infer MODEL --npy features=x.npy [--out score.npy] [--no-binary]
  inferd-cli chat MODEL [--system TEXT] [--message TEXT]   (a language model; streams replies)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .client import Client, InferdError
from .tensors import Tensor


def _print(value) -> None:
    print(json.dumps(value, indent=2))


def _inputs_from_json(path: Path) -> list[Tensor]:
    body = json.loads(path.read_text())
    tensors = []
    for entry in body.get("inputs", []):
        data = entry["data"]
        tensor = Tensor.from_value(entry["name"], data, entry["datatype"])
        tensor.shape = list(entry["shape"])  # flat data: the shape comes from the body
        tensors.append(tensor)
    if not tensors:
        raise SystemExit(f"{path}: no 'inputs' in the JSON body")
    return tensors


def _inputs_from_npy(pairs: list[str]) -> list[Tensor]:
    try:
        import numpy as np
    except ImportError:
        raise SystemExit("--npy needs numpy (pip install numpy), or use --json") from None
    tensors = []
    for pair in pairs:
        name, sep, file = pair.partition("=")
        if not sep:
            raise SystemExit(f"--npy takes NAME=FILE.npy, got '{pair}'")
        tensors.append(Tensor.from_value(name, np.load(file, allow_pickle=False)))
    return tensors


def _infer(client: Client, args) -> int:
    tensors = _inputs_from_json(Path(args.json)) if args.json else _inputs_from_npy(args.npy)
    result = client.infer(args.model, tensors, outputs=args.output or None,
                          version=args.model_version, binary=not args.no_binary)
    if args.out:
        import numpy as np
        if len(result.outputs) != 1:
            raise SystemExit(f"--out needs one output; the model gave {list(result.outputs)}")
        np.save(args.out, next(iter(result.outputs.values())).as_numpy())
    _print({"model_name": result.model_name, "model_version": result.model_version,
            "outputs": [{"name": t.name, "datatype": t.datatype, "shape": t.shape,
                         "data": t.to_json_data()} for t in result.outputs.values()]})
    return 0


def _chat(client: Client, args) -> int:
    """One message (--message), or a conversation read line by line from stdin."""
    messages = [{"role": "system", "content": args.system}] if args.system else []
    interactive = args.message is None and sys.stdin.isatty()
    turns = [args.message] if args.message is not None else None
    while True:
        if turns is not None:
            if not turns:
                return 0
            text = turns.pop(0)
        else:
            if interactive:
                print("you> ", end="", flush=True)
            line = sys.stdin.readline()
            if not line:
                return 0
            text = line.rstrip("\n")
            if not text:
                continue
        messages.append({"role": "user", "content": text})
        reply = []
        for piece in client.chat(args.model, messages, max_tokens=args.max_tokens,
                                 temperature=args.temperature, seed=args.seed):
            reply.append(piece)
            print(piece, end="", flush=True)
        print()
        messages.append({"role": "assistant", "content": "".join(reply)})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="inferd-cli", description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="localhost:8080",
                        help="host:port of the HTTP API (https://host:port for TLS)")
    parser.add_argument("--timeout", type=float, default=60.0)
    # No --api-key: a key on the command line shows in `ps` and shell history.
    parser.add_argument("--api-key-env", default="INFERD_API_KEY", metavar="VARIABLE",
                        help="environment variable holding the API key (default: %(default)s)")
    parser.add_argument("--ca-file", help="CA certificates (PEM) to trust for https://")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("health", help="live and ready")
    sub.add_parser("list", help="every model in the repository with its state")
    p = sub.add_parser("metadata", help="a model's inputs and outputs")
    p.add_argument("model")
    p.add_argument("--model-version")
    p = sub.add_parser("stats", help="inference statistics")
    p.add_argument("model", nargs="?")
    for name in ("load", "unload"):
        sub.add_parser(name, help=f"{name} a model").add_argument("model")
    p = sub.add_parser("infer", help="run a model")
    p.add_argument("model")
    p.add_argument("--model-version")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--json", help="a KServe v2 request body with 'inputs'")
    group.add_argument("--npy", nargs="+", metavar="NAME=FILE", help="inputs from .npy files")
    p.add_argument("--output", action="append", help="output to return (default: all)")
    p.add_argument("--out", help="save the (single) output to this .npy file")
    p.add_argument("--no-binary", action="store_true", help="send JSON tensors, not binary")
    p = sub.add_parser("chat", help="chat with a language model (streams the replies)")
    p.add_argument("model")
    p.add_argument("--system", help="a system message")
    p.add_argument("--message", help="one message (default: read messages from stdin)")
    p.add_argument("--max-tokens", type=int)
    p.add_argument("--temperature", type=float)
    p.add_argument("--seed", type=int)
    args = parser.parse_args(argv)

    api_key = os.environ.get(args.api_key_env) or ""
    with Client(args.url, timeout=args.timeout, api_key=api_key, ca_file=args.ca_file) as client:
        try:
            if args.command == "health":
                live, ready = client.is_live(), client.is_ready()
                _print({"live": live, "ready": ready})
                return 0 if live and ready else 1
            if args.command == "list":
                _print(client.repository_index())
            elif args.command == "metadata":
                _print(client.model_metadata(args.model, args.model_version))
            elif args.command == "stats":
                _print(client.statistics(args.model))
            elif args.command == "load":
                client.load_model(args.model)
                print(f"loaded {args.model}")
            elif args.command == "unload":
                client.unload_model(args.model)
                print(f"unloaded {args.model}")
            elif args.command == "infer":
                return _infer(client, args)
            elif args.command == "chat":
                return _chat(client, args)
        except InferdError as e:
            print(f"inferd-cli: {e.status}: {e.message}", file=sys.stderr)
            return 2
        except OSError as e:
            print(f"inferd-cli: cannot reach {args.url}: {e}", file=sys.stderr)
            return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
