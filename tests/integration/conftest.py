"""Fixtures for the black-box tests of the inferd binary.

- `demo_server`: one inferd on build/demo-models for the whole session.
- `start_server`: starts extra servers for one test (bad repositories, SIGTERM, flags) and
  stops them at teardown.
- `torch_ref`: the demo models run in this process with PyTorch.
- `llm_server`: one inferd serving the demo chat model (SmolLM2, 16 sequences) per module.

When a test fails, the logs of the servers it used are added to its report.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The repository root, for the modules the tests share with the tools (tools.grpc_stubs).
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from inferd_harness import (DEMO_MODELS, INFERD_BINARY, InferdServer, TorchReference,
                            make_repository)
from llm_helpers import LLM_MODEL, add_llm

_LOG_TAIL_CHARS = 20000


@pytest.fixture(scope="session")
def demo_server(tmp_path_factory):
    if not INFERD_BINARY.is_file():
        pytest.fail(f"inferd binary not found at {INFERD_BINARY}: build it first "
                    "(or set INFERD_BINARY)")
    if not (DEMO_MODELS / "mlp_scorer" / "config.yaml").is_file():
        pytest.fail(f"demo model repository not found at {DEMO_MODELS} (or set INFERD_DEMO_MODELS)")
    log = tmp_path_factory.mktemp("demo_server") / "inferd.log"
    server = InferdServer(DEMO_MODELS, log, name="demo_server").start()
    yield server
    server.stop()


class ServerStarter:
    """Starts servers for one test; every one is stopped at the test's teardown."""

    def __init__(self, tmp_path: Path):
        self.tmp_path = tmp_path
        self.servers: list[InferdServer] = []

    def __call__(self, repository: Path | None, *args: str, env: dict | None = None,
                 port_flag: bool = True, tls_ca: Path | None = None) -> InferdServer:
        index = len(self.servers)
        server = InferdServer(repository, self.tmp_path / f"inferd-{index}.log", list(args),
                              env=env, port_flag=port_flag, name=f"server #{index}",
                              tls_ca=tls_ca)
        self.servers.append(server)
        return server.start()

    def stop_all(self):
        for server in self.servers:
            server.stop()


@pytest.fixture
def start_server(tmp_path):
    starter = ServerStarter(tmp_path)
    yield starter
    starter.stop_all()


@pytest.fixture(scope="session")
def torch_ref():
    return TorchReference()


@pytest.fixture
def small_repository(tmp_path):
    """mlp_scorer and digits only: starts in well under a second."""
    return make_repository(tmp_path / "repo", {"mlp_scorer": "mlp_scorer", "digits": "digits"})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.failed:
        return
    servers = []
    for value in getattr(item, "funcargs", {}).values():
        if isinstance(value, InferdServer):
            servers.append(value)
        elif isinstance(value, ServerStarter):
            servers.extend(value.servers)
    for server in servers:
        log = server.log()
        if len(log) > _LOG_TAIL_CHARS:
            log = "...\n" + log[-_LOG_TAIL_CHARS:]
        report.sections.append((f"inferd log ({server.name}, {server.log_path})", log))


@pytest.fixture(scope="module")
def llm_server(tmp_path_factory):
    repo = tmp_path_factory.mktemp("llm_repo")
    add_llm(repo, LLM_MODEL, parallel=16)
    server = InferdServer(repo, repo.parent / "inferd.log", name="llm_server").start()
    yield server
    server.stop()
