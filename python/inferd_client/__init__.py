"""inferd's Python client: KServe v2 over HTTP (JSON or binary tensors), standard library only;
numpy arrays in and out when numpy is installed. `python -m inferd_client` is inferd-cli."""

from .client import Client, InferdError, InferResult
from .tensors import DATATYPES, Tensor

__all__ = ["Client", "InferdError", "InferResult", "Tensor", "DATATYPES"]
