"""The seed's naive baseline: a Flask dev server running one TorchScript inference per request.

This is deliberately the deployment the seed describes, not a tuned one, because inferd's
performance claims are ratios against it:

  * Flask's built-in development server with ``app.run(threaded=True)`` (a thread per
    connection, request logging on, no batching, no worker processes);
  * the model loaded once at startup with ``torch.jit.load``;
  * ``POST /predict`` with ``{"input": <nested list>}`` -> ``{"output": <nested list>}``,
    one forward pass per request under ``torch.no_grad()``, input as FP32.

The request and answer bodies match inferd's ``POST /predict`` (docs/http-api.md), so the
same wrk script (bench/predict.lua) drives both servers. A ``?model=`` query parameter is
accepted and ignored: this server holds exactly one model. Torch's thread count is left at
its default, as the seed leaves it.

    python bench/flask_baseline.py --model build/demo-models/mlp_scorer/1/model.pt --port 8000
"""

import argparse
import sys

import torch
from flask import Flask, jsonify, request


def to_json_value(output):
    """Turns a model's output (tensor, tuple/list of tensors or dict of tensors) into JSON values.

    Mirrors inferd's answer: the nested list itself for a one-output model, an object of
    nested lists (by name, or by position when the model gives no names) otherwise.
    """
    if isinstance(output, torch.Tensor):
        return output.tolist()
    if isinstance(output, dict):
        return {str(name): to_json_value(value) for name, value in output.items()}
    if isinstance(output, (tuple, list)):
        if len(output) == 1:
            return to_json_value(output[0])
        return {f"output{i}": to_json_value(value) for i, value in enumerate(output)}
    raise TypeError(f"unsupported model output type {type(output).__name__}")


def create_app(model_path: str) -> Flask:
    """Builds the Flask app with the model loaded once, as the seed does at import time."""
    model = torch.jit.load(model_path, map_location="cpu")
    model.eval()
    app = Flask(__name__)

    @app.post("/predict")
    def predict():
        body = request.get_json(silent=True)
        if not isinstance(body, dict) or "input" not in body:
            return jsonify({"error": 'body must be a JSON object with an "input" field'}), 400
        try:
            tensor = torch.tensor(body["input"], dtype=torch.float32)
        except (TypeError, ValueError) as exc:
            return jsonify({"error": f"input is not a numeric nested list: {exc}"}), 400
        with torch.no_grad():
            output = model(tensor)
        return jsonify({"output": to_json_value(output)})

    return app


def parse_args(argv):
    """Reads the command line: the model file and where to listen."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="path to a TorchScript model.pt")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--host", default="127.0.0.1")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    app = create_app(args.model)
    print(f"flask_baseline: {args.model} on {args.host}:{args.port} "
          f"(torch threads {torch.get_num_threads()})", file=sys.stderr, flush=True)
    app.run(host=args.host, port=args.port, threaded=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
