"""Knowledge distillation: train a smaller digits classifier (the student) from a teacher.

    python -m tools.optimize.distill --teacher build/demo-models/digits --hidden 32 \\
        --to onnx --out models/digits_distilled

The teacher is a served digits model folder (TorchScript model.pt or ONNX model.onnx;
pixels in, probabilities out). The student is tools.demo_models.nets.DigitsNet with a
narrower hidden layer, trained on the digits training set with Hinton et al.'s loss:
alpha * T^2 * KL(student/T || teacher/T) + (1 - alpha) * cross-entropy with the labels.
The tool prints teacher and student test accuracy and parameter counts, writes them to
accuracy.json, and verifies the written file against the trained student.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import torch
import torch.nn.functional as F

from tools.demo_models.nets import DigitsNet
from tools.optimize import engines, folder
from tools.optimize.digits_data import accuracy, digits_split
from tools.optimize.training import classifier, parameter_count, test_accuracy, train_digits_net
from tools.optimize.writing import write_digits_model


def teacher_probabilities(teacher_dir: str, x: np.ndarray) -> np.ndarray:
    onnx_file = os.path.join(teacher_dir, "1", "model.onnx")
    if os.path.isfile(onnx_file):
        return engines.run_onnx(onnx_file, {"pixels": x})[0]
    return engines.run_torchscript(os.path.join(teacher_dir, "1", "model.pt"), {"pixels": x})[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--teacher", required=True, help="a digits model folder")
    parser.add_argument("--hidden", type=int, default=32, help="the student's hidden units")
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--temperature", type=float, default=4.0)
    parser.add_argument("--alpha", type=float, default=0.7, help="weight of the teacher's loss")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--to", choices=["onnx", "torchscript"], default="onnx")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    data = digits_split(args.seed)
    teacher_train = teacher_probabilities(args.teacher, data.x_train)
    teacher_acc = accuracy(teacher_probabilities(args.teacher, data.x_test), data.y_test)
    # log(probabilities) are logits up to a constant, which softmax ignores.
    teacher_logits = torch.from_numpy(np.log(np.clip(teacher_train, 1e-12, None)))
    labels = torch.from_numpy(data.y_train)
    t = args.temperature

    def distillation_loss(student_logits: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        soft = F.kl_div(F.log_softmax(student_logits / t, dim=1),
                        F.softmax(teacher_logits[idx] / t, dim=1), reduction="batchmean")
        hard = F.cross_entropy(student_logits, labels[idx])
        return args.alpha * t * t * soft + (1 - args.alpha) * hard

    net = DigitsNet(hidden=args.hidden)
    train_digits_net(net, data, args.epochs, args.seed, extra_loss=distillation_loss)
    student = classifier(net)
    student_acc = test_accuracy(student, data)
    teacher_params = None
    teacher_pt = os.path.join(args.teacher, "1", "model.pt")
    if os.path.isfile(teacher_pt):
        teacher_params = parameter_count(torch.jit.load(teacher_pt, map_location="cpu"))
    facts = {"test_accuracy": student_acc, "teacher_test_accuracy": teacher_acc,
             "parameters": parameter_count(student), "teacher_parameters": teacher_params,
             "hidden": args.hidden, "temperature": t, "alpha": args.alpha,
             "test_samples": int(len(data.y_test))}
    print(f"  teacher accuracy {teacher_acc:.4f} ({teacher_params} parameters); student "
          f"accuracy {student_acc:.4f} ({parameter_count(student)} parameters)")
    path = write_digits_model(student, args.to, args.out,
                              f"distilled from {args.teacher} (hidden {args.hidden})",
                              data.x_test, facts)
    print(f"wrote {path} ({folder.file_size_text(path)})")


if __name__ == "__main__":
    main()
