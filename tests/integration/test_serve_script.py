"""scripts/serve, the README's first command: it sets the demo up (already done here, so it
only checks) and serves the demo repository; flags given to it override its defaults."""

import json
import signal
import subprocess
import time

import requests

from inferd_harness import REPO_ROOT, free_port


def test_serve_script_serves_the_demo_and_takes_flags(tmp_path):
    http_port, grpc_port = free_port(), free_port()
    log = open(tmp_path / "serve.log", "wb")
    proc = subprocess.Popen([str(REPO_ROOT / "scripts" / "serve"), "--http-port", str(http_port),
                             "--grpc-port", str(grpc_port)],
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{http_port}"
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()[-2000:]
            try:
                if requests.get(url + "/v2/health/ready", timeout=2).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            time.sleep(0.5)
        else:
            raise AssertionError("scripts/serve never became ready")
        # --default-model mlp_scorer: /predict needs no ?model=.
        answer = requests.post(url + "/predict", data=json.dumps({"input": [0.5] * 256}),
                               timeout=10)
        assert answer.status_code == 200, answer.text
        assert len(answer.json()["output"]) == 1
        # The chat model, loaded on this first request.
        chat = requests.post(url + "/v1/chat/completions", timeout=120, json={
            "model": "smollm2", "max_tokens": 8,
            "messages": [{"role": "user", "content": "Hi!"}]})
        assert chat.status_code == 200, chat.text
        assert chat.json()["choices"][0]["message"]["content"]
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        log.close()
