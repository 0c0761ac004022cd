"""The server a user would otherwise write for raw inputs: Flask + PIL + torchvision +
Hugging Face tokenizers + torch.jit, answering the same /predict requests as inferd's demo
pipelines (tools/demo_models/pipelines.py), for bench/pipelines_bench.py.

    POST /predict?model=resnet18_top5            body: a JPEG/PNG (Content-Type image/*)
    POST /predict?model=text_classifier_pipeline body: {"input": "some text"}
    -> {"label": ..., "score": ..., "top_k": [{"label": ..., "score": ...}, ...]}

What runs per request is what those pipelines run, written the way their libraries'
documentation shows: `Image.open(...).convert("RGB")`, torchvision's Resize(256),
CenterCrop(224), ToTensor, Normalize; `Tokenizer.from_file(...).encode(text)` truncated and padded to
the pipeline's 128 tokens (the model's input dims), as the pipeline's tokenize op does; one forward pass under
`torch.inference_mode()`; softmax; top-k. Flask's threaded server (a thread per connection)
as in bench/flask_baseline.py; torch's thread count left at its default.

    python bench/pipelines_python_server.py --models build/demo-models \
        --pipelines build/demo-pipelines --port 8000
"""

import argparse
import io
import sys
from pathlib import Path

import torch
from flask import Flask, jsonify, request
from PIL import Image
from tokenizers import Tokenizer
from torchvision import transforms


def _labels(path: Path) -> list:
    return path.read_text(encoding="utf-8").splitlines()


def _top_k(logits: torch.Tensor, labels: list, k: int) -> dict:
    probabilities = torch.softmax(logits, dim=-1)[0]
    scores, indices = torch.topk(probabilities, k)
    top = [{"label": labels[i], "score": float(s)} for s, i in zip(scores, indices.tolist())]
    return {"label": top[0]["label"], "score": top[0]["score"], "top_k": top}


def _load(path: Path) -> torch.jit.ScriptModule:
    # inferd's default for TorchScript (freeze), so both run the same frozen graph.
    return torch.jit.freeze(torch.jit.load(str(path), map_location="cpu").eval())


def create_app(models: Path, pipelines: Path, workloads: list) -> Flask:
    app = Flask(__name__)
    routes = {}
    if "image" in workloads:
        resnet = _load(models / "resnet18" / "1" / "model.pt")
        resnet_labels = _labels(pipelines / "resnet18_top5" / "1" / "labels.txt")
        preprocess = transforms.Compose([
            transforms.Resize(256),
            transforms.CenterCrop(224),
            transforms.ToTensor(),
            transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
        ])
    if "text" in workloads:
        classifier = _load(models / "text_classifier" / "1" / "model.pt")
        tokenizer = Tokenizer.from_file(
            str(pipelines / "text_classifier_pipeline" / "1" / "tokenizer.json"))
        text_labels = _labels(pipelines / "text_classifier_pipeline" / "1" / "labels.txt")
        tokenizer.enable_truncation(128)
        tokenizer.enable_padding(length=128, pad_id=0)

    def image_answer():
        try:
            image = Image.open(io.BytesIO(request.get_data())).convert("RGB")
        except Exception as exc:  # PIL raises several types for a bad file
            return jsonify({"error": f"not an image: {exc}"}), 400
        with torch.inference_mode():
            logits = resnet(preprocess(image).unsqueeze(0))
        return jsonify(_top_k(logits, resnet_labels, 5))

    def text_answer():
        body = request.get_json(silent=True)
        if not isinstance(body, dict) or not isinstance(body.get("input"), str):
            return jsonify({"error": 'body must be {"input": "some text"}'}), 400
        ids = tokenizer.encode(body["input"]).ids
        with torch.inference_mode():
            logits = classifier(torch.tensor([ids], dtype=torch.int64))
        return jsonify(_top_k(logits, text_labels, 2))

    if "image" in workloads:
        routes["resnet18_top5"] = image_answer
    if "text" in workloads:
        routes["text_classifier_pipeline"] = text_answer

    @app.post("/predict")
    def predict():
        route = routes.get(request.args.get("model", ""))
        if route is None:
            return jsonify({"error": f"?model= must be one of {sorted(routes)}"}), 404
        return route()

    return app


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", required=True, help="the demo model repository")
    parser.add_argument("--pipelines", required=True, help="the demo pipelines (their assets)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--workloads", default="image,text", help="image, text or both")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    app = create_app(Path(args.models), Path(args.pipelines), args.workloads.split(","))
    print(f"pipelines_python_server on {args.host}:{args.port} "
          f"(torch threads {torch.get_num_threads()})", file=sys.stderr, flush=True)
    app.run(host=args.host, port=args.port, threaded=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
