"""A KServe v2 HTTP client for inferd (and any Open Inference Protocol server), on the
standard library's http.client: one keep-alive connection per Client, JSON or binary tensors.

A Client is not thread-safe: give each thread its own (they are cheap)."""

from __future__ import annotations

import http.client
import json
import os
import ssl
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Sequence
from urllib.parse import quote

from .tensors import Tensor

HEADER_LENGTH = "Inference-Header-Content-Length"


class InferdError(Exception):
    """An error answer: `status` is the HTTP status, `message` the server's explanation."""

    def __init__(self, status: int, message: str):
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


@dataclass
class InferResult:
    model_name: str
    model_version: str
    id: str
    outputs: dict[str, Tensor] = field(default_factory=dict)

    def as_numpy(self, name: str):
        return self.outputs[name].as_numpy()


class Client:
    """`Client("localhost:8080")`; every method raises InferdError on an error answer.

    `api_key` (default: the INFERD_API_KEY environment variable) is sent as
    `Authorization: Bearer <key>` when the server has API keys (docs/security.md). An
    `https://` url speaks TLS, trusting the certificate authorities in `ca_file` (default: the
    system's)."""

    def __init__(self, url: str = "localhost:8080", timeout: float = 60.0,
                 api_key: str | None = None, ca_file: str | None = None):
        self._tls = url.startswith("https://")
        url = url.removeprefix("http://").removeprefix("https://")
        host, _, port = url.partition(":")
        self._host, self._port, self._timeout = host, int(port or 8080), timeout
        self._conn: http.client.HTTPConnection | None = None
        key = api_key if api_key is not None else os.environ.get("INFERD_API_KEY")
        self._auth = {"Authorization": f"Bearer {key}"} if key else {}
        self._ssl = ssl.create_default_context(cafile=ca_file) if self._tls else None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- transport ------------------------------------------------------------------------

    def _request(self, method: str, path: str, body: bytes | None = None,
                 headers: Mapping[str, str] | None = None) -> tuple[int, dict, bytes]:
        for attempt in range(2):  # a keep-alive connection the server closed: reconnect once
            if self._conn is None:
                if self._tls:
                    self._conn = http.client.HTTPSConnection(
                        self._host, self._port, timeout=self._timeout, context=self._ssl)
                else:
                    self._conn = http.client.HTTPConnection(self._host, self._port,
                                                            timeout=self._timeout)
            try:
                self._conn.request(method, path, body=body,
                                   headers={**self._auth, **dict(headers or {})})
                response = self._conn.getresponse()
                data = response.read()
                if response.getheader("Connection", "").lower() == "close":
                    self.close()
                return response.status, {k.lower(): v for k, v in response.getheaders()}, data
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")

    def _json(self, method: str, path: str, body: Any = None, ok=(200,)) -> Any:
        payload = None if body is None else json.dumps(body).encode()
        status, _, data = self._request(method, path, payload,
                                        {"Content-Type": "application/json"} if payload else None)
        if status not in ok:
            raise InferdError(status, _error_message(data))
        return json.loads(data) if data else None

    # --- health, metadata, repository -----------------------------------------------------

    def is_live(self) -> bool:
        return self._request("GET", "/v2/health/live")[0] == 200

    def is_ready(self) -> bool:
        return self._request("GET", "/v2/health/ready")[0] == 200

    def is_model_ready(self, model: str, version: str | None = None) -> bool:
        return self._request("GET", _model_path(model, version) + "/ready")[0] == 200

    def server_metadata(self) -> dict:
        return self._json("GET", "/v2")

    def model_metadata(self, model: str, version: str | None = None) -> dict:
        return self._json("GET", _model_path(model, version))

    def repository_index(self) -> list[dict]:
        return self._json("POST", "/v2/repository/index", {})

    def load_model(self, model: str) -> None:
        self._json("POST", f"/v2/repository/models/{quote(model, safe='')}/load", {})

    def unload_model(self, model: str) -> None:
        self._json("POST", f"/v2/repository/models/{quote(model, safe='')}/unload", {})

    def statistics(self, model: str | None = None, version: str | None = None) -> dict:
        path = "/v2/models/stats" if model is None else _model_path(model, version) + "/stats"
        return self._json("GET", path)

    # --- inference ------------------------------------------------------------------------

    def infer(self, model: str, inputs: Mapping[str, Any] | Sequence[Tensor],
              outputs: Sequence[str] | None = None, *, version: str | None = None,
              binary: bool = True, request_id: str | None = None,
              parameters: Mapping[str, Any] | None = None,
              datatypes: Mapping[str, str] | None = None) -> InferResult:
        """Runs `model`. `inputs` maps input names to numpy arrays or nested lists (lists need
        their datatype in `datatypes`), or is a list of Tensor. With `binary` (the default)
        tensors travel as raw bytes after a JSON header (the binary tensor extension)."""
        tensors = list(inputs) if not isinstance(inputs, Mapping) else [
            Tensor.from_value(name, value, (datatypes or {}).get(name))
            for name, value in inputs.items()]
        header: dict[str, Any] = {"inputs": []}
        if request_id:
            header["id"] = request_id
        params = dict(parameters or {})
        if binary and not outputs:
            params["binary_data_output"] = True
        if params:
            header["parameters"] = params
        blobs = []
        for t in tensors:
            entry: dict[str, Any] = {"name": t.name, "datatype": t.datatype, "shape": t.shape}
            if binary:
                blob = t.to_binary()
                entry["parameters"] = {"binary_data_size": len(blob)}
                blobs.append(blob)
            else:
                entry["data"] = t.to_json_data()
            header["inputs"].append(entry)
        if outputs:
            header["outputs"] = [{"name": n, "parameters": {"binary_data": binary}}
                                 for n in outputs]
        head = json.dumps(header).encode()
        headers = {"Content-Type": "application/octet-stream" if binary else "application/json"}
        if binary:
            headers[HEADER_LENGTH] = str(len(head))
        status, reply_headers, data = self._request(
            "POST", _model_path(model, version) + "/infer", head + b"".join(blobs), headers)
        if status != 200:
            raise InferdError(status, _error_message(data))
        return _parse_infer_reply(reply_headers, data)


    # --- language models ------------------------------------------------------------------

    def generate(self, model: str, prompt: str, *, max_tokens: int | None = None,
                 temperature: float | None = None, seed: int | None = None,
                 version: str | None = None) -> dict[str, Any]:
        """Completes `prompt` in one reply (the KServe generate extension): a dict with
        text_output, finish_reason and usage (prompt_tokens, completion_tokens)."""
        parameters = {key: value for key, value in (("max_tokens", max_tokens),
                                                    ("temperature", temperature),
                                                    ("seed", seed)) if value is not None}
        body = json.dumps({"text_input": prompt, "parameters": parameters}).encode()
        status, _, data = self._request("POST", _model_path(model, version) + "/generate", body,
                                        {"Content-Type": "application/json"})
        if status != 200:
            raise InferdError(status, _error_message(data))
        return json.loads(data)

    def chat(self, model: str, messages: Sequence[Mapping[str, str]], *,
             max_tokens: int | None = None, temperature: float | None = None,
             seed: int | None = None) -> Iterator[str]:
        """Streams the assistant's reply to `messages` (OpenAI chat format) piece by piece."""
        body: dict[str, Any] = {"model": model, "messages": list(messages), "stream": True}
        for key, value in (("max_tokens", max_tokens), ("temperature", temperature),
                           ("seed", seed)):
            if value is not None:
                body[key] = value
        # A connection of its own (TLS and the API key as the client's): the reply is read
        # while it is generated.
        if self._tls:
            conn = http.client.HTTPSConnection(self._host, self._port, timeout=self._timeout,
                                               context=self._ssl)
        else:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
        try:
            conn.request("POST", "/v1/chat/completions", body=json.dumps(body).encode(),
                         headers={**self._auth, "Content-Type": "application/json"})
            response = conn.getresponse()
            if response.status != 200:
                data = response.read()
                try:
                    message = json.loads(data)["error"]["message"]
                except (ValueError, KeyError, TypeError):
                    message = data.decode(errors="replace")
                raise InferdError(response.status, message)
            for raw in response:
                line = raw.decode().strip()
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                event = json.loads(line[len("data: "):])
                if "error" in event:
                    raise InferdError(500, event["error"].get("message", str(event["error"])))
                for choice in event.get("choices", []):
                    piece = choice.get("delta", {}).get("content")
                    if piece:
                        yield piece
        finally:
            conn.close()


def _model_path(model: str, version: str | None) -> str:
    path = f"/v2/models/{quote(model, safe='')}"
    return path + (f"/versions/{quote(str(version), safe='')}" if version else "")


def _error_message(data: bytes) -> str:
    try:
        return json.loads(data)["error"]
    except (ValueError, KeyError, TypeError):
        return data.decode(errors="replace")


def _parse_infer_reply(headers: Mapping[str, str], data: bytes) -> InferResult:
    length = int(headers.get(HEADER_LENGTH.lower(), len(data)))
    reply = json.loads(data[:length])
    binary, offset = data[length:], 0
    result = InferResult(reply.get("model_name", ""), reply.get("model_version", ""),
                         reply.get("id", ""))
    for out in reply.get("outputs", []):
        size = (out.get("parameters") or {}).get("binary_data_size")
        if size is not None:
            tensor = Tensor.from_binary(out["name"], out["datatype"], out["shape"],
                                        binary[offset:offset + size])
            offset += size
        else:
            values = out["data"]
            if out["datatype"] == "BYTES":
                values = [v.encode() for v in values]
            tensor = Tensor(out["name"], out["datatype"], out["shape"], values)
        result.outputs[out["name"]] = tensor
    return result
