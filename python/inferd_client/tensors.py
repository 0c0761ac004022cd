"""Tensors for the KServe v2 protocol without third-party packages: a datatype, a shape and
the elements, converted to and from JSON lists and the binary tensor extension's bytes.
numpy arrays are accepted and returned when numpy is installed; it is never required."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Sequence

try:  # optional
    import numpy as _np
except ImportError:  # pragma: no cover - exercised only where numpy is missing
    _np = None

# datatype -> struct format character (little-endian on the wire)
_FORMATS = {
    "BOOL": "?", "UINT8": "B", "UINT16": "H", "UINT32": "I", "UINT64": "Q",
    "INT8": "b", "INT16": "h", "INT32": "i", "INT64": "q",
    "FP16": "e", "FP32": "f", "FP64": "d",
}
_NUMPY_TYPES = {
    "BOOL": "bool", "UINT8": "uint8", "UINT16": "uint16", "UINT32": "uint32", "UINT64": "uint64",
    "INT8": "int8", "INT16": "int16", "INT32": "int32", "INT64": "int64",
    "FP16": "float16", "FP32": "float32", "FP64": "float64",
}
DATATYPES = tuple(_FORMATS) + ("BF16", "BYTES")


def _flatten(value: Any, shape: list[int], depth: int, out: list) -> None:
    if isinstance(value, (list, tuple)):
        if depth == len(shape):
            shape.append(len(value))
        elif shape[depth] != len(value):
            raise ValueError(f"ragged nested list: expected {shape[depth]} elements at depth "
                             f"{depth}, got {len(value)}")
        for item in value:
            _flatten(item, shape, depth + 1, out)
    else:
        out.append(value)


@dataclass
class Tensor:
    """A named tensor: `data` is a flat list in row-major order (bytes objects for BYTES)."""
    name: str
    datatype: str
    shape: list[int]
    data: list

    @classmethod
    def from_value(cls, name: str, value: Any, datatype: str | None = None) -> "Tensor":
        """From a numpy array, or a (nested) list with an explicit `datatype`."""
        if _np is not None and isinstance(value, _np.ndarray):
            if value.dtype.kind in "OSU":
                data = [v if isinstance(v, bytes) else str(v).encode() for v in value.ravel()]
                return cls(name, "BYTES", list(value.shape), data)
            inferred = {v: k for k, v in _NUMPY_TYPES.items()}.get(value.dtype.name)
            if inferred is None:
                raise ValueError(f"numpy dtype {value.dtype} has no protocol datatype")
            return cls(name, datatype or inferred, list(value.shape), value.ravel().tolist())
        if datatype is None:
            raise ValueError(f"input '{name}': give a datatype for a list value")
        shape: list[int] = []
        flat: list = []
        _flatten(value, shape, 0, flat)
        if datatype == "BYTES":
            flat = [v.encode() if isinstance(v, str) else bytes(v) for v in flat]
        return cls(name, datatype, shape, flat)

    def to_binary(self) -> bytes:
        if self.datatype == "BYTES":
            return b"".join(struct.pack("<I", len(v)) + v for v in self.data)
        if self.datatype == "BF16":
            return b"".join(struct.pack("<f", float(v))[2:] for v in self.data)
        return struct.pack(f"<{len(self.data)}{_FORMATS[self.datatype]}", *self.data)

    def to_json_data(self) -> list:
        if self.datatype == "BYTES":
            return [v.decode("utf-8", errors="replace") for v in self.data]
        return list(self.data)

    @classmethod
    def from_binary(cls, name: str, datatype: str, shape: list[int], raw: bytes) -> "Tensor":
        if datatype == "BYTES":
            data, offset = [], 0
            while offset < len(raw):
                (length,) = struct.unpack_from("<I", raw, offset)
                data.append(raw[offset + 4:offset + 4 + length])
                offset += 4 + length
            return cls(name, datatype, shape, data)
        if datatype == "BF16":
            data = [struct.unpack("<f", b"\0\0" + raw[i:i + 2])[0] for i in range(0, len(raw), 2)]
            return cls(name, datatype, shape, data)
        fmt = _FORMATS[datatype]
        count = len(raw) // struct.calcsize(fmt)
        return cls(name, datatype, shape, list(struct.unpack(f"<{count}{fmt}", raw)))

    def as_numpy(self):
        """The tensor as a numpy array (requires numpy)."""
        if _np is None:
            raise RuntimeError("numpy is not installed; use .data and .shape")
        if self.datatype == "BYTES":
            return _np.array(self.data, dtype=object).reshape(self.shape)
        if self.datatype == "BF16":
            return _np.array(self.data, dtype="float32").reshape(self.shape)
        return _np.array(self.data, dtype=_NUMPY_TYPES[self.datatype]).reshape(self.shape)

    def nested(self) -> Any:
        """The elements nested to the shape, as plain lists."""
        def build(offset: int, dims: Sequence[int]):
            if not dims:
                return self.data[offset]
            stride = 1
            for d in dims[1:]:
                stride *= d
            return [build(offset + i * stride, dims[1:]) for i in range(dims[0])]
        return build(0, self.shape)
