"""Shared pieces of the access-control tests: an API key file with fresh random keys, and a
throw-away certificate authority plus server certificate made with the openssl CLI (no key is
ever committed)."""

from __future__ import annotations

import secrets
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml


@dataclass
class Keys:
    path: Path
    ops: str        # management
    watcher: str    # monitoring
    app: str        # inference, no tenant
    alice: str      # inference, tenant alice (rate 1 per 100 s, burst 2, only mlp_scorer)
    bob: str        # inference, tenant bob (no limits)

    def header(self, key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}"}


def write_keys(directory: Path) -> Keys:
    keys = Keys(directory / "keys.yaml", *(secrets.token_hex(24) for _ in range(5)))
    # alice's key is given by its digest only, as an operator who keeps no secret in the
    # file would.
    import hashlib
    document = {
        "keys": [
            {"name": "ops", "key": keys.ops, "roles": ["management"]},
            {"name": "watcher", "key": keys.watcher, "roles": ["monitoring"]},
            {"name": "app", "key": keys.app, "roles": ["inference"]},
            {"name": "alice-app", "sha256": hashlib.sha256(keys.alice.encode()).hexdigest(),
             "roles": ["inference"], "tenant": "alice"},
            {"name": "bob-app", "key": keys.bob, "roles": ["inference"], "tenant": "bob"},
        ],
        "tenants": {
            # One request per 100 s after a burst of two: the third request within the test
            # is always over the limit, however slow the machine.
            "alice": {"requests_per_second": 0.01, "burst": 2, "models": ["mlp_scorer"]},
            "bob": {},
        },
    }
    keys.path.write_text(yaml.safe_dump(document))
    keys.path.chmod(0o600)
    return keys


@dataclass
class Certificates:
    ca: Path
    cert: Path
    key: Path


def make_certificates(directory: Path) -> Certificates:
    """A CA and a server certificate for 127.0.0.1 and localhost, signed by it."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca = directory / "ca.key", directory / "ca.pem"
    key, csr, cert = directory / "server.key", directory / "server.csr", directory / "server.pem"
    ext = directory / "server.ext"
    ext.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                   "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
                   "extendedKeyUsage=serverAuth\n")

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(ca_key), "-out", str(ca),
        "-days", "2", "-subj", "/CN=inferd test CA")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr),
        "-subj", "/CN=127.0.0.1")
    run("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key),
        "-CAcreateserial", "-out", str(cert), "-days", "2", "-extfile", str(ext))
    return Certificates(ca, cert, key)
