"""Structured pruning: remove the weakest hidden units of a digits classifier, then fine-tune.

    python -m tools.optimize.prune --source build/demo-models/digits --amount 0.5 \\
        --to onnx --out models/digits_pruned

For every nn.Linear followed (through element-wise activations only) by another
nn.Linear inside an nn.Sequential, torch.nn.utils.prune.ln_structured picks the
`--amount` fraction of output units with the smallest L2 norm; those rows of the first
layer and the matching input columns of the next are then cut out, so the model really is
smaller and faster (masking alone would keep every multiply). A short fine-tune on the
digits training set recovers accuracy. The tool prints accuracy before, after pruning and
after fine-tuning, and verifies the written file against the fine-tuned module.
"""

from __future__ import annotations

import argparse
import os
from typing import List, Tuple

import torch
from torch import nn
from torch.nn.utils import prune

from tools.demo_models.nets import DigitsNet
from tools.optimize import folder
from tools.optimize.digits_data import digits_split
from tools.optimize.modules import load_state_dict
from tools.optimize.training import classifier, parameter_count, test_accuracy, train_digits_net
from tools.optimize.writing import write_digits_model

ELEMENTWISE = (nn.ReLU, nn.GELU, nn.Tanh, nn.Sigmoid, nn.LeakyReLU, nn.Identity, nn.Dropout)


def prunable_pairs(module: nn.Module) -> List[Tuple[nn.Sequential, int, int]]:
    """(sequential, index of a Linear, index of the next Linear) with only element-wise
    layers between them."""
    pairs = []
    for seq in module.modules():
        if not isinstance(seq, nn.Sequential):
            continue
        layers = list(seq)
        for i, layer in enumerate(layers):
            if not isinstance(layer, nn.Linear):
                continue
            j = i + 1
            while j < len(layers) and isinstance(layers[j], ELEMENTWISE):
                j += 1
            if j < len(layers) and isinstance(layers[j], nn.Linear):
                pairs.append((seq, i, j))
    return pairs


def prune_pair(seq: nn.Sequential, i: int, j: int, amount: float) -> Tuple[int, int]:
    """Cuts `amount` of layer i's output units (smallest L2 norm rows); returns (before, after)."""
    first, second = seq[i], seq[j]
    prune.ln_structured(first, name="weight", amount=amount, n=2, dim=0)
    keep = first.weight_mask.abs().sum(dim=1) > 0
    prune.remove(first, "weight")
    kept = int(keep.sum())
    new_first = nn.Linear(first.in_features, kept, bias=first.bias is not None)
    new_second = nn.Linear(kept, second.out_features, bias=second.bias is not None)
    with torch.no_grad():
        new_first.weight.copy_(first.weight[keep])
        if first.bias is not None:
            new_first.bias.copy_(first.bias[keep])
        new_second.weight.copy_(second.weight[:, keep])
        if second.bias is not None:
            new_second.bias.copy_(second.bias)
    seq[i], seq[j] = new_first, new_second
    return int(keep.numel()), kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", required=True,
                        help="a digits model folder whose 1/model.pt holds the weights")
    parser.add_argument("--amount", type=float, default=0.5, help="fraction of hidden units cut")
    parser.add_argument("--epochs", type=int, default=15, help="fine-tune epochs after pruning")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--to", choices=["onnx", "torchscript"], default="onnx")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if not 0 < args.amount < 1:
        raise SystemExit("--amount must be between 0 and 1")

    data = digits_split(args.seed)
    model = classifier(DigitsNet())
    model.load_state_dict(load_state_dict(os.path.join(args.source, "1", "model.pt")))
    before_params, before_acc = parameter_count(model), test_accuracy(model, data)
    pairs = prunable_pairs(model.net)
    if not pairs:
        raise SystemExit("no Linear -> activation -> Linear pair to prune")
    for seq, i, j in pairs:
        width, kept = prune_pair(seq, i, j, args.amount)
        print(f"  pruned {type(seq).__name__}[{i}]: {width} -> {kept} units")
    pruned_acc = test_accuracy(model, data)
    train_digits_net(model.net, data, args.epochs, args.seed, lr=5e-4)
    model.eval()
    tuned_acc = test_accuracy(model, data)
    facts = {"test_accuracy": tuned_acc, "accuracy_before_pruning": before_acc,
             "accuracy_after_pruning_before_fine_tune": pruned_acc,
             "parameters": parameter_count(model), "parameters_before": before_params,
             "amount": args.amount, "fine_tune_epochs": args.epochs,
             "test_samples": int(len(data.y_test))}
    print(f"  accuracy: source {before_acc:.4f}, pruned {pruned_acc:.4f}, fine-tuned "
          f"{tuned_acc:.4f}; parameters {before_params} -> {parameter_count(model)}")
    path = write_digits_model(model, args.to, args.out,
                              f"pruned {args.amount:.0%} of hidden units of {args.source}",
                              data.x_test, facts)
    print(f"wrote {path} ({folder.file_size_text(path)})")


if __name__ == "__main__":
    main()
