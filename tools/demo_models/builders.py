"""One function per demo model: build it, export TorchScript, write config and sample.

make_demo_models runs `python -m tools.demo_models.builders --model NAME ...` once per
model, each in a fresh process (see there for why). Each function also seeds torch
itself, so calling one directly (e.g. from a test) gives the same weights and outputs.
"""

import argparse
import os
import shutil
import time

import numpy as np
import torch
import torchvision

from tools.demo_models.common import (
    TensorSpec,
    assert_close,
    export_and_check,
    rounded_fp32,
    set_determinism,
    tensor_json,
    write_config,
    write_json,
    write_lines,
    write_sample,
)
from tools.demo_models.digits import train_digits
from tools.demo_models.nets import MlpScorer, TextClassifier

# Input values in sample.json are rounded to this many decimals: a smaller file, and an
# exact one (the short decimal parses back to the very float32 the model was run on).
SAMPLE_DECIMALS = 4


def _model_dir(out: str, name: str) -> str:
    """A fresh directory per model, so a stale version folder never survives a rebuild."""
    path = os.path.join(out, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def make_mlp_scorer(out: str, seed: int) -> None:
    """A small MLP: the model on which per-request overhead (HTTP, JSON, batching) shows."""
    torch.manual_seed(seed)
    model = MlpScorer().eval()
    model_dir = _model_dir(out, "mlp_scorer")
    features = torch.from_numpy(
        rounded_fp32(np.random.default_rng(seed).standard_normal((2, 256)), SAMPLE_DECIMALS)
    )
    score = export_and_check(model, torch.jit.script(model), model_dir, [features])
    write_config(
        model_dir,
        "mlp_scorer: random-weight MLP 256-512-256-1 with a sigmoid score",
        32,
        [TensorSpec("features", "FP32", [256])],
        [TensorSpec("score", "FP32", [1])],
    )
    write_sample(
        model_dir,
        [tensor_json("features", "FP32", features, SAMPLE_DECIMALS)],
        [tensor_json("score", "FP32", score)],
    )


def make_resnet18(out: str, seed: int) -> None:
    """torchvision ResNet-18 with seeded random weights: the compute-heavy image model."""
    torch.manual_seed(seed)
    model = torchvision.models.resnet18(weights=None).eval()
    model_dir = _model_dir(out, "resnet18")
    image = torch.from_numpy(
        rounded_fp32(
            np.random.default_rng(seed).standard_normal((1, 3, 224, 224)), SAMPLE_DECIMALS
        )
    )
    logits = export_and_check(model, torch.jit.script(model), model_dir, [image])
    write_config(
        model_dir,
        "resnet18: torchvision ResNet-18 with random (seeded) weights, 224x224 RGB in",
        8,
        [TensorSpec("image", "FP32", [3, 224, 224])],
        [TensorSpec("logits", "FP32", [1000])],
    )
    write_sample(
        model_dir,
        [tensor_json("image", "FP32", image, SAMPLE_DECIMALS)],
        [tensor_json("logits", "FP32", logits)],
    )


def _check_text_fast_path(model: torch.nn.Module, scripted, token_ids: torch.Tensor) -> None:
    """Checks scripted vs eager in both transformer code paths.

    In eval mode with grad disabled, nn.TransformerEncoderLayer takes a fused "fast
    path" (torch._transformer_encoder_layer_fwd); with grad enabled it runs the plain
    Python ops. TorchScript keeps that same branch, so each path must agree between
    eager and scripted, and the two paths should agree with each other within ATOL.
    """
    with torch.no_grad():
        fast_eager, fast_script = model(token_ids), scripted(token_ids)
    slow_eager, slow_script = model(token_ids).detach(), scripted(token_ids).detach()
    batch = token_ids.shape[0]
    assert_close(fast_script, fast_eager, f"batch {batch} scripted vs eager, fast path")
    assert_close(slow_script, slow_eager, f"batch {batch} scripted vs eager, slow path")
    assert_close(fast_eager, slow_eager, f"batch {batch} fast path vs slow path")


def make_text_classifier(out: str, seed: int) -> None:
    """Embedding + 4-layer transformer encoder: INT64 inputs and attention compute.

    torch.jit.script works for nn.TransformerEncoder (checked below against eager), so
    no tracing is needed and the batch dimension stays dynamic.
    """
    torch.manual_seed(seed)
    model = TextClassifier().eval()
    model_dir = _model_dir(out, "text_classifier")
    scripted = torch.jit.script(model)
    rng = np.random.default_rng(seed)
    for batch in (1, 3):
        _check_text_fast_path(
            model, scripted, torch.from_numpy(rng.integers(0, 30522, (batch, 128)))
        )
    ids = rng.integers(0, 30522, (2, 128))
    ids[0, 0], ids[1, -1] = 0, 30521  # exercise both ends of the vocabulary
    token_ids = torch.from_numpy(ids.astype(np.int64))
    logits = export_and_check(model, scripted, model_dir, [token_ids])
    write_config(
        model_dir,
        "text_classifier: random-weight embedding + 4-layer transformer encoder, 2 classes",
        16,
        [TensorSpec("token_ids", "INT64", [128])],
        [TensorSpec("logits", "FP32", [2])],
    )
    write_sample(
        model_dir,
        [tensor_json("token_ids", "INT64", token_ids)],
        [tensor_json("logits", "FP32", logits)],
    )


def make_digits(out: str, seed: int) -> None:
    """An MLP trained on sklearn's digits: a model whose accuracy is real, not random."""
    result = train_digits(seed)
    print(f"  digits test accuracy: {result.test_accuracy:.4f} "
          f"({result.train_samples} train / {result.test_samples} test samples)")
    if result.test_accuracy <= 0.9:
        raise AssertionError(f"digits test accuracy {result.test_accuracy} <= 0.9")
    model_dir = _model_dir(out, "digits")
    pixels = torch.from_numpy(result.x_test[:2])  # two real test images, raw 0..16 values
    probabilities = export_and_check(
        result.model, torch.jit.script(result.model), model_dir, [pixels]
    )
    print(f"  sample images: labels {result.y_test[:2].tolist()}, "
          f"predicted {probabilities.argmax(dim=1).tolist()}")
    write_config(
        model_dir,
        "digits: MLP 64-128-10 trained on sklearn digits; raw 0..16 pixels in, softmax out",
        64,
        [TensorSpec("pixels", "FP32", [64])],
        [TensorSpec("probabilities", "FP32", [10])],
    )
    write_sample(
        model_dir,
        [tensor_json("pixels", "FP32", pixels)],
        [tensor_json("probabilities", "FP32", probabilities)],
    )
    write_lines(os.path.join(model_dir, "labels.txt"), [str(i) for i in range(10)])
    write_json(
        os.path.join(model_dir, "accuracy.json"),
        {
            "test_accuracy": result.test_accuracy,
            "train_samples": result.train_samples,
            "test_samples": result.test_samples,
        },
    )


MODELS = {
    "mlp_scorer": make_mlp_scorer,
    "resnet18": make_resnet18,
    "text_classifier": make_text_classifier,
    "digits": make_digits,
}


def main() -> None:
    """Builds one model in this process; make_demo_models is the entry point to use."""
    parser = argparse.ArgumentParser(description="Build one demo model (internal).")
    parser.add_argument("--model", required=True, choices=list(MODELS))
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--threads", type=int, required=True)
    args = parser.parse_args()
    if os.environ.get("PYTHONHASHSEED") != "0":
        print("  warning: PYTHONHASHSEED is not 0; model.pt bytes will vary between runs")

    set_determinism(args.seed, args.threads)
    start = time.perf_counter()
    print(f"{args.model} (torch {torch.__version__}, seed {args.seed}, "
          f"{args.threads} thread(s)):", flush=True)
    MODELS[args.model](args.out, args.seed)
    print(f"  done in {time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main()
