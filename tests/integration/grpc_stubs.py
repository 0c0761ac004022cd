"""Python stubs for inferd's gRPC API, generated from proto/inference_service.proto with
grpcio-tools into a temporary folder the first time a test imports them.

tritonclient, which the compatibility tests import into the same process, registers the same
message names (package `inference`) in protobuf's default descriptor pool; two files defining
one name there is an error. Our generated module is therefore pointed at a pool of its own
(a one-line substitution in the generated file): the wire format is unchanged."""

from __future__ import annotations

import importlib
import sys
import tempfile
from pathlib import Path

from grpc_tools import protoc

PROTO_DIR = Path(__file__).resolve().parents[2] / "proto"
_OUT = Path(tempfile.mkdtemp(prefix="inferd-grpc-stubs-"))


def _generate():
    code = protoc.main(["grpc_tools.protoc", f"-I{PROTO_DIR}", f"--python_out={_OUT}",
                        f"--grpc_python_out={_OUT}", str(PROTO_DIR / "inference_service.proto")])
    if code != 0:
        raise RuntimeError(f"protoc failed on {PROTO_DIR / 'inference_service.proto'}")
    module = _OUT / "inference_service_pb2.py"
    text = module.read_text()
    if "_descriptor_pool.Default()" not in text:
        raise RuntimeError("unexpected generated code: no _descriptor_pool.Default() to replace")
    module.write_text(text.replace("_descriptor_pool.Default()", "_descriptor_pool.DescriptorPool()"))
    sys.path.insert(0, str(_OUT))
    return (importlib.import_module("inference_service_pb2"),
            importlib.import_module("inference_service_pb2_grpc"))


pb, pb_grpc = _generate()
