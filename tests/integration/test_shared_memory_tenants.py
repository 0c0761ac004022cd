"""Shared-memory regions belong to the tenant that registered them (issue 30, "shared memory
has no owner"): another tenant cannot read inputs from them, write outputs into them, see
them in status or unregister them, over HTTP and gRPC. A name another tenant uses looks
exactly like an unknown one, and names are per tenant, so two tenants' clients that both
call their region "io" never collide. Keys without a tenant are one owner of their own."""

from __future__ import annotations

import os

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
import tritonclient.utils.shared_memory as shm
import yaml
from tritonclient.utils import InferenceServerException

from inferd_harness import ATOL

ROWS, FEATURES = 4, 256
REGION_BYTES = 1 << 16


def features(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((ROWS, FEATURES)).astype(np.float32)


@pytest.fixture
def keyed(tmp_path, start_server, small_repository):
    """A server whose tenants alice and bob each have a key that may infer and register, and
    an untenanted management key (ops) and inference key (app)."""
    import secrets
    keys = {name: secrets.token_hex(24) for name in ("alice", "bob", "ops", "app")}
    document = {
        "keys": [
            {"name": "alice-key", "key": keys["alice"], "roles": ["inference", "management"],
             "tenant": "alice"},
            {"name": "bob-key", "key": keys["bob"], "roles": ["inference", "management"],
             "tenant": "bob"},
            {"name": "ops", "key": keys["ops"], "roles": ["management"]},
            {"name": "app", "key": keys["app"], "roles": ["inference"]},
        ],
        "tenants": {"alice": {}, "bob": {}},
    }
    path = tmp_path / "keys.yaml"
    path.write_text(yaml.safe_dump(document))
    path.chmod(0o600)
    server = start_server(small_repository, "--api-keys-file", str(path))
    return server, keys


@pytest.fixture
def objects():
    """Two 64 KiB shared-memory objects (alice's and bob's), unlinked afterwards."""
    made = []
    for who in ("a", "b"):
        key = f"/inferd_it_{who}_{os.getpid()}_{np.random.default_rng().integers(1 << 30)}"
        made.append((key, shm.create_shared_memory_region(f"it_{who}", key, REGION_BYTES)))
    yield made
    for _, handle in made:
        shm.destroy_shared_memory_region(handle)


class Caller:
    """One key's client of one protocol: the tritonclient calls with its credentials."""

    def __init__(self, protocol: str, server, key: str):
        self.module = httpclient if protocol == "http" else grpcclient
        address = f"127.0.0.1:{server.port if protocol == 'http' else server.grpc_port}"
        self.client = self.module.InferenceServerClient(address)
        self.protocol = protocol
        # Copied into every call: tritonclient adds its own headers to the dict it is given.
        self.headers = {"authorization": f"Bearer {key}"}

    def register(self, name: str, key: str, offset: int = 0) -> None:
        self.client.register_system_shared_memory(name, key, REGION_BYTES - offset,
                                                  offset=offset, headers=dict(self.headers))

    def status(self, name: str = "") -> list[tuple[str, str]]:
        """(name, key) of each region the caller sees."""
        status = self.client.get_system_shared_memory_status(name, headers=dict(self.headers))
        if self.protocol == "http":
            return [(r["name"], r["key"]) for r in status]
        return [(r.name, r.key) for r in status.regions.values()]

    def unregister(self, name: str = "") -> None:
        self.client.unregister_system_shared_memory(name, headers=dict(self.headers))

    def infer(self, x: np.ndarray, input_region: str | None = None,
              output_region: str | None = None, output_offset: int = 0):
        inp = self.module.InferInput("features", list(x.shape), "FP32")
        if input_region is None:
            inp.set_data_from_numpy(x)
        else:
            inp.set_shared_memory(input_region, x.nbytes)
        out = self.module.InferRequestedOutput("score")
        if output_region is not None:
            out.set_shared_memory(output_region, ROWS * 4, offset=output_offset)
        return self.client.infer("mlp_scorer", [inp], outputs=[out], headers=dict(self.headers))

    def close(self):
        self.client.close()


def refusal(call) -> tuple[str, str]:
    with pytest.raises(InferenceServerException) as error:
        call()
    return error.value.status(), error.value.message()


def assert_looks_unknown(call_for, taken: str) -> None:
    """`call_for(name)` is refused for the other tenant's region `taken` exactly as for a name
    nobody registered: the same status, the same message but for the name."""
    code_taken, message_taken = refusal(lambda: call_for(taken))
    code_unknown, message_unknown = refusal(lambda: call_for("nowhere"))
    assert code_taken == code_unknown
    assert message_taken.replace(f"'{taken}'", "'R'") == \
        message_unknown.replace("'nowhere'", "'R'"), (message_taken, message_unknown)
    assert "not registered" in message_taken or "no shared-memory region" in message_taken


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_a_tenant_cannot_reach_another_tenants_region(protocol, keyed, objects, torch_ref):
    server, keys = keyed
    alice, bob, ops, app = (Caller(protocol, server, keys[who])
                            for who in ("alice", "bob", "ops", "app"))
    (a_key, a_handle), (b_key, b_handle) = objects
    x, y = features(31), features(32)
    shm.set_shared_memory_region(a_handle, [x])
    shm.set_shared_memory_region(b_handle, [y])
    alice.register("io", a_key)
    assert alice.status() == [("io", a_key)]

    # Status: bob, and the untenanted keys, see none of alice's regions.
    assert bob.status() == [] and ops.status() == []
    assert_looks_unknown(bob.status, "io")

    # Infer: bob can neither read alice's input nor write his output into her region.
    assert_looks_unknown(lambda name: bob.infer(x, input_region=name), "io")
    assert_looks_unknown(lambda name: bob.infer(y, output_region=name, output_offset=x.nbytes),
                         "io")
    assert_looks_unknown(lambda name: app.infer(x, input_region=name), "io")
    untouched = shm.get_contents_as_numpy(a_handle, np.float32, [ROWS], offset=x.nbytes)
    assert not untouched.any()

    # Unregister, of the name and of everything, leaves alice's region registered.
    bob.unregister("io")
    bob.unregister()
    ops.unregister()
    assert alice.status() == [("io", a_key)]

    # Names are per tenant: bob's own "io" is another region.
    bob.register("io", b_key)
    assert bob.status() == [("io", b_key)] and alice.status() == [("io", a_key)]
    expected_x, expected_y = torch_ref.run("mlp_scorer", x), torch_ref.run("mlp_scorer", y)
    np.testing.assert_allclose(bob.infer(y, input_region="io").as_numpy("score"), expected_y,
                               atol=ATOL)
    # Alice still reads and writes her own region.
    alice.infer(x, input_region="io", output_region="io", output_offset=x.nbytes)
    got = shm.get_contents_as_numpy(a_handle, np.float32, list(expected_x.shape),
                                    offset=x.nbytes)
    np.testing.assert_allclose(got, expected_x, atol=ATOL)
    assert not shm.get_contents_as_numpy(b_handle, np.float32, [ROWS], offset=y.nbytes).any()

    alice.unregister()
    assert alice.status() == [] and bob.status() == [("io", b_key)]
    for caller in (alice, bob, ops, app):
        caller.close()


def test_a_stream_message_cannot_name_another_tenants_region(keyed, objects):
    """ModelStreamInfer decodes its tensors as ModelInfer does: with the caller's regions."""
    import grpc
    from tools.grpc_stubs import pb, pb_grpc

    server, keys = keyed
    (a_key, a_handle), _ = objects
    x = features(33)
    shm.set_shared_memory_region(a_handle, [x])
    Caller("http", server, keys["alice"]).register("io", a_key)

    def request(region: str) -> "pb.ModelInferRequest":
        message = pb.ModelInferRequest(model_name="mlp_scorer", id=region)
        tensor = message.inputs.add(name="features", datatype="FP32", shape=list(x.shape))
        tensor.parameters["shared_memory_region"].string_param = region
        tensor.parameters["shared_memory_byte_size"].int64_param = x.nbytes
        return message

    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        for who, served in (("bob", False), ("alice", True)):
            answers = list(stub.ModelStreamInfer(
                iter([request("io")]), metadata=[("authorization", f"Bearer {keys[who]}")],
                timeout=30))
            assert len(answers) == 1
            if served:
                assert answers[0].error_message == "" and answers[0].infer_response.outputs
            else:
                assert "'io' is not registered" in answers[0].error_message
