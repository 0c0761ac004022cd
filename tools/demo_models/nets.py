"""The demo networks. Forward arguments are named like the config inputs they receive.

All of these script cleanly with torch.jit.script (no tracing needed), so the saved
modules keep their batch dimension dynamic and carry no baked-in shapes.
"""

import torch
from torch import nn


class MlpScorer(nn.Module):
    """A click-through-style scorer: cheap per row, so batching and HTTP overhead dominate."""

    def __init__(self, in_features: int = 256, hidden: int = 512, hidden2: int = 256):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(in_features, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden2),
            nn.ReLU(),
            nn.Linear(hidden2, 1),
        )

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.layers(features))


class TextClassifier(nn.Module):
    """Embedding + transformer encoder + mean pooling: an INT64-input, attention-heavy model.

    There is no positional encoding and no padding mask: the model exists to exercise
    integer inputs and transformer compute, not to be a good classifier.
    """

    def __init__(
        self,
        vocab_size: int = 30522,
        d_model: int = 256,
        nhead: int = 4,
        dim_feedforward: int = 1024,
        num_layers: int = 4,
        num_classes: int = 2,
    ):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model)
        layer = nn.TransformerEncoderLayer(
            d_model, nhead, dim_feedforward, dropout=0.0, batch_first=True
        )
        # Nested tensors only help with padding masks, which we never pass; turning them
        # off also silences the constructor's warning about it.
        self.encoder = nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, num_classes)

    def forward(self, token_ids: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(self.embedding(token_ids))
        return self.head(hidden.mean(dim=1))


class DigitsNet(nn.Module):
    """The trainable part of the digits classifier: logits from pixels scaled to [0, 1]."""

    def __init__(self, in_features: int = 64, hidden: int = 128, num_classes: int = 10):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(in_features, hidden),
            nn.ReLU(),
            nn.Linear(hidden, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


class DigitsClassifier(nn.Module):
    """What gets exported: raw 0..16 pixel values in, class probabilities out.

    Scaling lives inside the module so clients send the dataset's pixels unchanged and
    the server needs no preprocessing step.
    """

    def __init__(self, net: DigitsNet, pixel_max: float = 16.0):
        super().__init__()
        self.net = net
        self.pixel_max = pixel_max

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.net(pixels / self.pixel_max), dim=1)
