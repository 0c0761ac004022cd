"""The small training loop distill and prune share: Adam over the digits training set,
in a seeded order, on pixels scaled to [0, 1] as the demo model's DigitsNet expects."""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np
import torch
from torch import nn

from tools.demo_models.nets import DigitsClassifier
from tools.optimize.digits_data import DigitsSplit, accuracy

PIXEL_MAX = 16.0


def train_digits_net(net: nn.Module, data: DigitsSplit, epochs: int, seed: int, lr: float = 1e-3,
                     batch_size: int = 64,
                     extra_loss: Optional[Callable[[torch.Tensor, torch.Tensor], torch.Tensor]]
                     = None) -> float:
    """Trains `net` (pixels/16 -> logits) with cross-entropy, plus `extra_loss(logits, idx)`
    when given; returns the last batch's loss."""
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    x = torch.from_numpy(data.x_train) / PIXEL_MAX
    y = torch.from_numpy(data.y_train)
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    cross_entropy = nn.CrossEntropyLoss()
    net.train()
    loss = torch.zeros(())
    for _ in range(epochs):
        order = torch.randperm(len(x), generator=generator)
        for i in range(0, len(order), batch_size):
            idx = order[i:i + batch_size]
            optimizer.zero_grad()
            logits = net(x[idx])
            loss = cross_entropy(logits, y[idx])
            if extra_loss is not None:
                loss = extra_loss(logits, idx)  # replaces: it blends the hard loss itself
            loss.backward()
            optimizer.step()
    net.eval()
    return float(loss.item())


def test_accuracy(model: nn.Module, data: DigitsSplit) -> float:
    with torch.no_grad():
        probabilities = model(torch.from_numpy(data.x_test)).numpy()
    return accuracy(probabilities, data.y_test)


def classifier(net: nn.Module) -> DigitsClassifier:
    """The served form: raw 0..16 pixels in, probabilities out."""
    return DigitsClassifier(net, PIXEL_MAX).eval()


def parameter_count(module: nn.Module) -> int:
    return int(sum(p.numel() for p in module.parameters()))


def as_float32(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array, dtype=np.float32)
