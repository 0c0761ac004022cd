"""The digits data (scikit-learn's bundled 8x8 digits, no download), split exactly as
tools/demo_models/digits.py trains the demo model (stratified 80/20, random_state=seed),
so test accuracy here is comparable with build/demo-models/digits/accuracy.json."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split


@dataclass
class DigitsSplit:
    x_train: np.ndarray  # float32 [n, 64], raw 0..16 pixels (what the served model takes)
    y_train: np.ndarray  # int64 [n]
    x_test: np.ndarray
    y_test: np.ndarray


def digits_split(seed: int = 0) -> DigitsSplit:
    digits = load_digits()
    x = digits.data.astype(np.float32)
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.2, random_state=seed, stratify=y)
    return DigitsSplit(x_train, y_train, x_test, y_test)


def accuracy(probabilities: np.ndarray, labels: np.ndarray) -> float:
    return float((probabilities.argmax(axis=1) == labels).mean())
