"""Writes the demo pipelines: models of the demo repository behind built-in ops, taking the
raw inputs users hold (a PNG, a JPEG, a sentence) and answering labels (docs/pipelines.md).

    .venv/bin/python -m tools.demo_models.pipelines --out build/demo-pipelines

Made here, not downloaded, and deterministic:
    digits_png                PNG of a handwritten digit -> digits -> top 3 labels
    resnet18_top5             JPEG -> PIL/torchvision's ImageNet preprocessing -> resnet18
                              -> softmax -> top 5 of ImageNet's 1000 labels
    text_classifier_pipeline  text -> WordPiece tokenizer (trained here) -> text_classifier
                              -> softmax -> top 2 labels
Each folder holds config.yaml, its assets in 1/ and samples/ with inputs to send.
The step models (digits, resnet18, text_classifier) come from the demo repository
(make_demo_models), served beside the pipelines (scripts/serve's build/serve-models).
"""

import argparse
import os
import shutil
from pathlib import Path

import numpy as np
from PIL import Image
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

# Digits' 8x8 pixels are 0..16; a PNG stores them as 8-bit gray v * 15 (0..240), which the
# image op divides by 15 again: v * 15 / 15 == v exactly in float32, so the PNG path gives
# the digits model the very tensors of the tensor path (and the same accuracy).
DIGITS_PNG_SCALE = 15


def _fresh_dir(out: Path, name: str) -> Path:
    path = out / name
    shutil.rmtree(path, ignore_errors=True)
    (path / "1").mkdir(parents=True)
    return path


def _write_lines(path: Path, lines) -> None:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def make_digits_png(out: Path, seed: int) -> None:
    """Every test image of the digits split (the one digits/accuracy.json was measured on)
    as a PNG named <index>_<label>.png."""
    folder = _fresh_dir(out, "digits_png")
    _write_lines(folder / "1" / "labels.txt", [str(i) for i in range(10)])
    (folder / "config.yaml").write_text(
        """\
# digits_png: a PNG of a handwritten digit (8x8 gray, pixel = digit value * 15) in, its top 3
# labels out: decode -> divide by 15 (the 0..16 values digits was trained on) -> digits.
backend: pipeline
max_batch_size: 64
inputs:
  - {name: image, datatype: BYTES, dims: [], content: image}
outputs:
  - {name: labels, datatype: BYTES, dims: [3]}
  - {name: scores, datatype: FP32, dims: [3]}
pipeline:
  steps:
    - name: decode
      op: image_to_tensor
      inputs: {image: image}
      outputs: {tensor: gray_8x8}
      # 8x8 as digits was trained (a larger image is resized down as PIL would), gray
      params: {color: gray, resize: {size: [8, 8]}, divisor: 15, layout: NHWC}
    - {name: flatten, op: reshape, inputs: {x: gray_8x8}, outputs: {y: pixels},
       params: {shape: [64]}}
    - {name: classify, model: digits, inputs: {pixels: pixels},
       outputs: {probabilities: probabilities}}
    - {name: top, op: top_k, inputs: {x: probabilities},
       outputs: {labels: labels, scores: scores}, params: {k: 3, labels: labels.txt}}
  answer: {labels: labels, scores: scores}
""",
        encoding="utf-8",
    )
    digits = load_digits()
    x = digits.data.astype(np.float32)
    y = digits.target.astype(np.int64)
    # The split of tools/demo_models/digits.py: same arguments, same test images.
    _, x_test, _, y_test = train_test_split(x, y, test_size=0.2, random_state=seed, stratify=y)
    samples = folder / "samples"
    samples.mkdir()
    for index, (pixels, label) in enumerate(zip(x_test, y_test)):
        gray = (pixels.reshape(8, 8) * DIGITS_PNG_SCALE).astype(np.uint8)
        Image.fromarray(gray, mode="L").save(samples / f"{index:03d}_{label}.png", optimize=False)
    print(f"  digits_png: {len(x_test)} test images in {samples}")


def make_resnet18_top5(out: Path) -> None:
    """resnet18 (the demo's seeded random weights: its labels are real names, its answers
    are not) behind torchvision's ImageNet preprocessing."""
    import torchvision  # imported here: the other pipelines do not need it

    folder = _fresh_dir(out, "resnet18_top5")
    categories = torchvision.models.ResNet18_Weights.IMAGENET1K_V1.meta["categories"]
    _write_lines(folder / "1" / "labels.txt", categories)
    (folder / "config.yaml").write_text(
        """\
# resnet18_top5: a JPEG, PNG or WebP in, the 5 likeliest ImageNet labels out. The
# preprocessing is torchvision's Resize(256), CenterCrop(224), ToTensor, Normalize on a PIL
# image (docs/image-ops.md says how close it is).
backend: pipeline
max_batch_size: 8
inputs:
  - {name: image, datatype: BYTES, dims: [], content: image}
outputs:
  - {name: labels, datatype: BYTES, dims: [5]}
  - {name: scores, datatype: FP32, dims: [5]}
pipeline:
  steps:
    - name: preprocess
      op: image_to_tensor
      inputs: {image: image}
      outputs: {tensor: pixels}
      params:
        resize: {shorter_side: 256}
        center_crop: [224, 224]
        mean: [0.485, 0.456, 0.406]
        std: [0.229, 0.224, 0.225]
        layout: NCHW
    - {name: classify, model: resnet18, inputs: {image: pixels}, outputs: {logits: logits}}
    - {name: probabilities, op: softmax, inputs: {x: logits}, outputs: {y: probabilities}}
    - {name: top, op: top_k, inputs: {x: probabilities},
       outputs: {labels: labels, scores: scores}, params: {k: 5, labels: labels.txt}}
  answer: {labels: labels, scores: scores}
""",
        encoding="utf-8",
    )
    samples = folder / "samples"
    samples.mkdir()
    # Two photographs that ship inside scikit-learn (sklearn/datasets/images).
    import sklearn.datasets

    images = Path(sklearn.datasets.__file__).parent / "images"
    for name in ("china.jpg", "flower.jpg"):
        shutil.copyfile(images / name, samples / name)
    print(f"  resnet18_top5: {len(categories)} labels, samples china.jpg, flower.jpg")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="build/demo-pipelines", help="repository root")
    parser.add_argument("--seed", type=int, default=0, help="the demo models' seed")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    make_digits_png(out, args.seed)
    make_resnet18_top5(out)
    from tools.demo_models.text_pipeline import make_text_classifier_pipeline

    make_text_classifier_pipeline(out)
    print(f"demo pipelines written to {os.fspath(out)}")


if __name__ == "__main__":
    main()
