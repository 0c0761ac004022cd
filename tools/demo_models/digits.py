"""Trains the digits classifier on scikit-learn's bundled 8x8 digits (no download).

A real trained model gives accuracy numbers that mean something (e.g. FP32 vs INT8),
which random weights cannot. Training is small enough for a couple of CPU seconds.
"""

import time
from dataclasses import dataclass

import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn

from tools.demo_models.nets import DigitsClassifier, DigitsNet

PIXEL_MAX = 16.0


@dataclass
class DigitsResult:
    model: DigitsClassifier  # eval mode, raw pixels in, probabilities out
    test_accuracy: float
    x_test: np.ndarray  # float32 [m, 64], raw 0..16 pixel values
    y_test: np.ndarray  # int64 [m]
    train_samples: int
    test_samples: int


def train_digits(seed: int, epochs: int = 60, batch_size: int = 64) -> DigitsResult:
    """Trains an MLP with Adam on a stratified 80/20 split fixed by `seed`.

    Shuffling uses its own seeded generator so the result does not depend on how much
    of the global RNG earlier models consumed.
    """
    digits = load_digits()
    x = digits.data.astype(np.float32)  # raw pixel values 0..16
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.2, random_state=seed, stratify=y
    )

    torch.manual_seed(seed)
    net = DigitsNet()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(seed)
    xt = torch.from_numpy(x_train) / PIXEL_MAX
    yt = torch.from_numpy(y_train)

    start = time.perf_counter()
    net.train()
    for _ in range(epochs):
        order = torch.randperm(len(xt), generator=gen)
        for i in range(0, len(order), batch_size):
            idx = order[i : i + batch_size]
            optimizer.zero_grad()
            loss = loss_fn(net(xt[idx]), yt[idx])
            loss.backward()
            optimizer.step()
    seconds = time.perf_counter() - start
    print(f"  trained {epochs} epochs in {seconds:.1f} s, last loss {loss.item():.4f}")

    model = DigitsClassifier(net, PIXEL_MAX).eval()
    with torch.no_grad():
        predicted = model(torch.from_numpy(x_test)).argmax(dim=1).numpy()
    accuracy = float((predicted == y_test).mean())
    return DigitsResult(model, accuracy, x_test, y_test, len(x_train), len(x_test))
