#!/usr/bin/env python3
"""Writes the seed corpora in tests/fuzz/corpus/<target>/: small valid (and a few nearly
valid) inputs for each fuzz target, in the input format its *_fuzzer.cc describes, for the
models of tests/fuzz/fuzz_server.h. The files are committed; run this again after changing
it (.venv/bin/python tests/fuzz/make_corpus.py [path/to/demo/sample.json]).

The gRPC seeds are serialized ModelInferRequest messages, encoded with the stubs that
tools/grpc_stubs.py generates from proto/inference_service.proto."""

from __future__ import annotations

import json
import shutil
import struct
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"


def j(value) -> str:
    return json.dumps(value, separators=(",", ":"))


def tensor(name, datatype, shape, data):
    return {"name": name, "datatype": datatype, "shape": shape, "data": data}


def kserve_bodies():
    return {
        "fp32": j({"id": "a", "inputs": [tensor("x", "FP32", [2, 3], [1, 2, 3, 4.5, -1e3, 0])]}),
        "fp32-nested": j({"inputs": [tensor("x", "FP32", [2, 2], [[1, 2], [3, 4]])],
                          "outputs": [{"name": "y"}], "parameters": {"priority": 1,
                                                                     "timeout": 1000000}}),
        "multi": j({"inputs": [tensor("a", "INT64", [1, 3], [1, -2, 3]),
                               tensor("b", "FP16", [2], [0.5, 1]),
                               tensor("c", "BOOL", [3], [True, False, True]),
                               tensor("d", "UINT8", [2], [0, 255])]}),
        "text": j({"inputs": [tensor("t", "BYTES", [2, 1], ["hello", "w\u00f6rld"])]}),
        "canary": j({"inputs": [tensor("x", "INT32", [2], [7, -7])]}),
    }


def binary_request(model, inputs, outputs=None, binary_output=True):
    """(model, header line, body): JSON header then raw little-endian tensors."""
    head_inputs, raw = [], b""
    for name, datatype, shape, data in inputs:
        head_inputs.append({"name": name, "datatype": datatype, "shape": shape,
                            "parameters": {"binary_data_size": len(data)}})
        raw += data
    head = {"inputs": head_inputs, "parameters": {"binary_data_output": binary_output}}
    if outputs:
        head["outputs"] = [{"name": o, "parameters": {"binary_data": True}} for o in outputs]
    head_bytes = j(head).encode()
    return model.encode() + b"\n" + str(len(head_bytes)).encode() + b"\n" + head_bytes + raw


def bytes_elements(*items: bytes) -> bytes:
    return b"".join(struct.pack("<I", len(s)) + s for s in items)


def write(target: str, name: str, data) -> None:
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def main() -> None:
    if CORPUS.exists():
        shutil.rmtree(CORPUS)
    bodies = kserve_bodies()
    for name, body in bodies.items():
        write("kserve_json_fuzzer", name, f"{name.split('-')[0]}\n{body}")
        write("router_fuzzer", f"infer-{name}",
              f"POST /v2/models/{name.split('-')[0]}/infer\nContent-Type: application/json\n\n{body}")
    if len(sys.argv) > 1:  # the demo's sample.json (digits): a real client body
        sample = Path(sys.argv[1]).read_text()
        write("kserve_json_fuzzer", "demo-sample", "digits\n" + sample)

    write("binary_infer_fuzzer", "fp32", binary_request(
        "fp32", [("x", "FP32", [2, 2], struct.pack("<4f", 1, 2, 3, 4))], ["y"]))
    write("binary_infer_fuzzer", "text", binary_request(
        "text", [("t", "BYTES", [2, 1], bytes_elements(b"abc", b""))]))
    write("binary_infer_fuzzer", "multi", binary_request(
        "multi", [("a", "INT64", [1, 3], struct.pack("<3q", 1, 2, 3)),
                  ("b", "FP16", [2], struct.pack("<2e", 0.5, 2.0)),
                  ("c", "BOOL", [2], b"\x01\x00"),
                  ("d", "UINT8", [3], b"\x00\x7f\xff")], binary_output=False))
    # Header length 0 and one that runs past the body: the error paths.
    write("binary_infer_fuzzer", "no-header", "fp32\n\n" + bodies["fp32"])
    write("binary_infer_fuzzer", "too-long", "fp32\n99999\n{}")

    tf = {
        "rows": ("fp32:predict", j({"instances": [[1, 2], [3, 4]]})),
        "columns": ("fp32:predict", j({"inputs": [[1, 2, 3]]})),
        "named-columns": ("multi:predict", j({"inputs": {"a": [[1, 2, 3]], "b": [1, 2],
                                                        "c": [True], "d": [1, 2]}})),
        "version": ("canary/versions/1:predict", j({"inputs": [5, 6]})),
        "signature": ("fp32:predict", j({"signature_name": "serving_default",
                                        "instances": [{"x": [1]}, {"x": [2]}]})),
        "text-one-row": ("text:predict", j({"instances": [["abc"]]})),
    }
    for name, (target, body) in tf.items():
        write("tfserving_fuzzer", name, f"{target}\n{body}")

    predict = {
        "fp32": ("model=fp32", j({"input": [[1.5, 2.5], [3, 4]]})),
        "canary": ("model=canary&x=1", j({"input": [1, 2]})),
        "no-model": ("", j({"input": [1]})),
    }
    for name, (query, body) in predict.items():
        write("predict_fuzzer", name, f"{query}\n{body}")
        write("router_fuzzer", f"predict-{name}", f"POST /predict?{query}\n\n{body}")

    write("logging_fuzzer", "level", j({"log_level": "off"}))
    write("logging_fuzzer", "all", j({"log_level": "error", "log_format": "json",
                                      "access_log": False}))
    write("logging_fuzzer", "plain", j({"log_format": "plain"}))

    repository = {
        "traffic": ("traffic canary", j({"labels": {"stable": 1, "next": 2},
                                          "traffic": {"stable": 90, "next": 10}})),
        "traffic-versions": ("traffic canary", j({"traffic": {"1": 50, "2": 50}})),
        "get-traffic": ("get-traffic canary", ""),
        "load": ("load fp32", ""),
        "unload": ("unload multi", ""),
        "index": ("index", "{}"),
    }
    for name, (line, body) in repository.items():
        write("repository_fuzzer", name, f"{line}\n{body}")

    for name, request in {
        "metadata": "GET /v2/models/multi",
        "version-ready": "GET /v2/models/canary/versions/2/ready",
        "live": "GET /v2/health/live",
        "stats": "GET /v2/models/stats",
        "repo-stats": "GET /v2/repository/stats",
        "label": "POST /v1/models/canary/labels/stable:predict\n\n" + j({"inputs": [1, 2]}),
        "timeout-header": "POST /v2/models/fp32/infer\nInference-Timeout-Us: 5000\n\n"
                          + bodies["fp32"],
        "shm-register": "POST /v2/systemsharedmemory/region/r/register\n\n"
                        + j({"key": "/inferd_fuzz_region", "offset": 0, "byte_size": 64}),
        "shm-status": "GET /v2/systemsharedmemory/region/r/status",
        "shm-unregister": "POST /v2/systemsharedmemory/unregister",
        "shm-cuda": "POST /v2/cudasharedmemory/region/c/register\n\n"
                    + j({"raw_handle": {"b64": "AA=="}, "device_id": 0, "byte_size": 4}),
        "shm-infer": "POST /v2/models/fp32/infer\n\n" + j({"inputs": [
            {"name": "x", "datatype": "FP32", "shape": [2, 3],
             "parameters": {"shared_memory_region": "r", "shared_memory_byte_size": 24,
                            "shared_memory_offset": 8}}],
            "outputs": [{"name": "y", "parameters": {"shared_memory_region": "r",
                                                     "shared_memory_byte_size": 24}}]}),
    }.items():
        write("router_fuzzer", name, request + ("\n" if "\n" not in request else ""))

    write("model_config_fuzzer", "full", """backend: torch
max_batch_size: 8
inputs:
  - {name: x, datatype: FP32, dims: [-1, 3]}
outputs:
  - {name: y, datatype: FP32, dims: [2]}
instances:
  - {count: 2, device: cpu}
dynamic_batching:
  max_queue_delay_us: 500
  preferred_batch_sizes: [4, 8]
  preserve_ordering: true
queue:
  priority_levels: 2
  default_priority_level: 2
  max_queue_size: 16
  default_timeout_us: 100000
  timeout_status: 429
precision: fp16
parameters: {freeze: false}
""")
    write("model_config_fuzzer", "versions", """backend: onnx
version_policy: {specific: [1, 3]}
labels: {stable: 1, canary: 3}
traffic: {stable: 90, canary: 10}
inputs:
  - {name: t, datatype: BYTES, dims: [1]}
outputs:
  - {name: u, datatype: INT64, dims: [-1]}
""")
    write("model_config_fuzzer", "lazy", """backend: torch
version_policy: {latest: 2}
lazy: true
pin: false
idle_unload_s: 30
dynamic_batching: {auto_tune: true, latency_slo_ms: 50}
inputs: [{name: a, datatype: UINT8, dims: [224, 224, 3]}]
outputs: [{name: b, datatype: FP32, dims: [1000]}]
""")

    write_grpc_seeds()
    write_generation_seeds()
    write_image_seeds()


def write_image_seeds() -> None:
    """image_decode_fuzzer: one byte choosing RGB (even) or gray (odd), then an image file;
    seeds from the image op's test set (tests/data/images), one per format and mode."""
    images = HERE.parents[1] / "tests" / "data" / "images"
    for name in ["odd_7x3.jpg", "gray.png", "cmyk.jpg", "exif_6.jpg", "lossless.webp",
                 "rgba.png", "progressive.jpg", "palette.png"]:
        write("image_decode_fuzzer", name.rsplit(".", 1)[0], b"\x00" + (images / name).read_bytes())


def write_generation_seeds() -> None:
    """generation_body_fuzzer: one byte choosing the API (0 chat, 1 completion, 2 KServe
    generate, 3 generate_stream, 4 embeddings, 5 Anthropic messages), then the body."""
    seeds = {
        "chat": (0, {"model": "smollm2", "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
            "max_tokens": 8, "temperature": 0.7, "top_p": 0.9, "top_k": 40, "seed": 3,
            "stop": ["\n", "END"], "stream": True, "stream_options": {"include_usage": True}}),
        "completion": (1, {"model": "smollm2", "prompt": "Count: one, two,", "max_tokens": 16,
                           "temperature": 0, "stop": "ten"}),
        "kserve": (2, {"text_input": "Paris is", "parameters": {"max_tokens": 4,
                                                                 "temperature": 0}}),
        "kserve_stream": (3, {"text_input": "Hi", "parameters": {"max_tokens": 2,
                                                                  "stream": True}}),
        "embeddings": (4, {"model": "embedder", "input": ["a cat", "a dog"],
                           "encoding_format": "base64"}),
        "chat_logprobs": (0, {"model": "smollm2", "messages": [{"role": "user", "content": "Hi"}],
                              "logprobs": True, "top_logprobs": 3, "stream": True}),
        "completion_logprobs": (1, {"model": "smollm2", "prompt": "Paris is", "logprobs": 2}),
        "anthropic": (5, {"model": "smollm2", "max_tokens": 8, "system": "Be brief.",
                          "messages": [{"role": "user", "content": [
                              {"type": "text", "text": "Hi"}]}],
                          "stop_sequences": ["END"], "stream": True,
                          "metadata": {"user_id": "u1"}}),
        "chat_tools": (0, {"model": "smollm2", "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"}],
            "tools": [{"type": "function", "function": {
                "name": "get_weather", "description": "Weather", "strict": True,
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                               "required": ["city"]}}}],
            "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
            "parallel_tool_calls": False, "stream": True}),
        "anthropic_tools": (5, {"model": "smollm2", "max_tokens": 8, "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "w", "input": {"city": "Oslo"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "cold"}]}],
            "tools": [{"name": "w", "input_schema": {"type": "object"}}],
            "tool_choice": {"type": "any", "disable_parallel_tool_use": True}}),
    }
    for name, (api, body) in seeds.items():
        write("generation_body_fuzzer", name,
              bytes([api]) + json.dumps(body, separators=(",", ":")).encode())


def write_grpc_seeds() -> None:
    sys.path.insert(0, str(HERE.parents[1]))  # the repository root: tools.grpc_stubs
    from tools.grpc_stubs import pb  # noqa: E402  (generates the stubs)

    def request(model, version="", **kwargs):
        return pb.ModelInferRequest(model_name=model, model_version=version, id="r1", **kwargs)

    seeds = {}
    r = request("fp32")
    t = r.inputs.add(name="x", datatype="FP32", shape=[2, 2])
    r.raw_input_contents.append(struct.pack("<4f", 1, 2, 3, 4))
    r.outputs.add(name="y")
    seeds["fp32-raw"] = r
    r = request("fp32", "1")
    t = r.inputs.add(name="x", datatype="FP32", shape=[1, 3])
    t.contents.fp32_contents.extend([1.0, 2.0, 3.0])
    r.parameters["priority"].int64_param = 1
    r.parameters["timeout"].int64_param = 100000
    seeds["fp32-typed"] = r
    r = request("text")
    r.inputs.add(name="t", datatype="BYTES", shape=[2, 1])
    r.raw_input_contents.append(bytes_elements(b"hello", b"x"))
    seeds["text-raw"] = r
    r = request("text")
    t = r.inputs.add(name="t", datatype="BYTES", shape=[1, 1])
    t.contents.bytes_contents.append(b"typed")
    seeds["text-typed"] = r
    r = request("multi")
    t = r.inputs.add(name="a", datatype="INT64", shape=[1, 3])
    t.contents.int64_contents.extend([1, 2, 3])
    t = r.inputs.add(name="b", datatype="FP16", shape=[2])
    r2 = r.inputs.add(name="c", datatype="BOOL", shape=[1])
    r2.contents.bool_contents.append(True)
    t = r.inputs.add(name="d", datatype="UINT8", shape=[2])
    t.contents.uint_contents.extend([1, 255])
    seeds["multi-typed-mixed"] = r
    r = request("canary", "2")
    t = r.inputs.add(name="x", datatype="INT32", shape=[2])
    t.contents.int_contents.extend([1, -1])
    seeds["canary-typed"] = r
    r = request("chat")  # a Triton vLLM-backend generation request (DecodeGrpcGeneration)
    for name, datatype, value in (
            ("text_input", "BYTES", bytes_elements(b"Hello")),
            ("stream", "BOOL", b"\x01"),
            ("exclude_input_in_output", "BOOL", b"\x01"),
            ("sampling_parameters", "BYTES",
             bytes_elements(b'{"max_tokens":"8","temperature":0.5,"stop":["a","b"],"seed":3}'))):
        r.inputs.add(name=name, datatype=datatype, shape=[1])
        r.raw_input_contents.append(value)
    r.parameters["top_k"].int64_param = 4
    seeds["generate-stream"] = r
    for name, message in seeds.items():
        write("grpc_infer_fuzzer", name, message.SerializeToString())


if __name__ == "__main__":
    main()
