"""Python stubs for inferd's gRPC API (proto/inference_service.proto), generated with
grpcio-tools into a temporary folder the first time this module is imported: the one place
the tests, inferd-perf and the fuzz corpus builder get `pb` (messages) and `pb_grpc` (stubs).

tritonclient, which the compatibility tests import into the same process, registers the same
message names (package `inference`) in protobuf's default descriptor pool; two files defining
one name there is an error. The generated module is therefore pointed at a pool of its own
(a one-line substitution in the generated file): the wire format is unchanged."""

from __future__ import annotations

import importlib
import sys
import tempfile
from pathlib import Path

from grpc_tools import protoc

PROTO = Path(__file__).resolve().parents[1] / "proto" / "inference_service.proto"


def _generate():
    out = Path(tempfile.mkdtemp(prefix="inferd-grpc-stubs-"))
    code = protoc.main(["grpc_tools.protoc", f"-I{PROTO.parent}", f"--python_out={out}",
                        f"--grpc_python_out={out}", str(PROTO)])
    if code != 0:
        raise RuntimeError(f"protoc failed on {PROTO}")
    module = out / "inference_service_pb2.py"
    text = module.read_text()
    if "_descriptor_pool.Default()" not in text:
        raise RuntimeError("unexpected generated code: no _descriptor_pool.Default() to replace")
    module.write_text(text.replace("_descriptor_pool.Default()", "_descriptor_pool.DescriptorPool()"))
    sys.path.insert(0, str(out))
    return (importlib.import_module("inference_service_pb2"),
            importlib.import_module("inference_service_pb2_grpc"))


pb, pb_grpc = _generate()
