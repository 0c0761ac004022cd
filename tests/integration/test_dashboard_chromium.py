"""GET /dashboard in a real browser: Debian's headless chromium driven through its
chromedriver (selenium). The page loads with no console errors, lists the demo models with
their states, its QPS and p99 charts update while load runs, and a screenshot is kept in
test-artifacts/dashboard.png."""

from __future__ import annotations

import re
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from inferd_harness import DEMO_MODEL_NAMES, REPO_ROOT, make_repository
from observability_tools import send_load

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
ARTIFACTS = REPO_ROOT / "test-artifacts"
DASHBOARD_BUILD = REPO_ROOT / "build" / "dashboard"


@pytest.fixture
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    if not (DASHBOARD_BUILD / "index.html").is_file():
        pytest.fail(f"the dashboard is not built at {DASHBOARD_BUILD}: run scripts/setup")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1400,1300"]:
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def console_errors(driver) -> list[dict]:
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def wait_until(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def test_dashboard_shows_models_and_live_charts_without_console_errors(start_server, tmp_path,
                                                                       browser):
    # The demo models, plus one that fails to load so the page shows a reason.
    repo = make_repository(tmp_path / "repo", {n: n for n in DEMO_MODEL_NAMES})
    (repo / "broken").mkdir()
    (repo / "broken" / "config.yaml").write_text("backend: torch\nmax_batch_size: nope\n")
    server = start_server(repo)

    browser.get(f"{server.url}/dashboard?interval_ms=500")
    rows = wait_until(
        lambda: browser.execute_script(
            "return [...document.querySelectorAll('#models-table tbody tr')]"
            ".map(r => [r.dataset.model, r.cells[2].textContent])"),
        20, "the models table")
    states = dict(rows)
    for name in DEMO_MODEL_NAMES:
        assert states.get(name) == "READY", rows
    assert states.get("broken") == "UNAVAILABLE", rows
    assert browser.find_element("id", "models-ready").text == "4 / 5"

    def points() -> int:
        return browser.execute_script(
            "const c = window.inferdDashboard.charts['qps-chart'];"
            "return c ? c.plot.data[0].length : 0;")

    before = points()
    # Load for a few seconds; the page polls every 0.5 s.
    stop = threading.Event()

    def load():
        while not stop.is_set():
            send_load(server.url, "digits", 20, clients=2)
            send_load(server.url, "mlp_scorer", 20, clients=2)

    loader = threading.Thread(target=load)
    loader.start()
    try:
        qps = wait_until(lambda: float(browser.find_element("id", "total-qps").text.replace("–", "0") or 0) > 0
                         and browser.find_element("id", "total-qps").text, 20, "QPS above 0")
        wait_until(lambda: points() >= before + 4, 20, "the QPS chart to gain points")
        p99 = wait_until(lambda: browser.find_element("id", "total-p99").text.endswith("ms")
                         and browser.find_element("id", "total-p99").text, 20, "a p99 value")
        series_max = browser.execute_script(
            "const d = window.inferdDashboard.charts['qps-chart'].plot.data;"
            "return Math.max(...d.slice(1).flat().filter(v => v !== null));")
        assert series_max > 0
        digits_row = browser.execute_script(
            "const r = document.querySelector('#models-table tr[data-model=digits]');"
            "return r.cells[3].textContent;")
        assert digits_row != "–"
    finally:
        stop.set()
        loader.join()

    # An error shows in the recent errors with its reason.
    requests.post(f"{server.url}/v2/models/digits/infer", data="{bad json", timeout=10)
    wait_until(lambda: "POST /v2/models/digits/infer" in
               browser.find_element("id", "errors-table").text, 10,
               "the error in the recent errors")
    # The cpu device's memory in use against its budget (the default: 80 % of the machine's).
    memory = browser.find_element("css selector", "#memory [data-device=cpu]").text
    assert re.search(r"of [\d.]+ [KMG]iB \(\d+ %\)", memory), memory

    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "dashboard.png"
    browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    assert console_errors(browser) == [], console_errors(browser)
    print(f"dashboard: QPS {qps}, p99 {p99}; screenshot {shot}")


def test_dashboard_assets_and_data_endpoint(demo_server):
    page = demo_server.get("/dashboard")
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html")
    assert demo_server.get("/dashboard/app.js").headers["Content-Type"].startswith("text/javascript")
    assert demo_server.get("/dashboard/uPlot.iife.min.js").status_code == 200
    missing = demo_server.get("/dashboard/nothing.js")
    assert missing.status_code == 404 and "nothing.js" in missing.json()["error"]
    assert demo_server.get("/dashboard/..%2Fdemo-models").status_code == 404
    data = demo_server.get("/dashboard/data").json()
    assert sorted(m["name"] for m in data["models"]) == sorted(DEMO_MODEL_NAMES)
    names = {f["name"] for f in data["metrics"]}
    assert {"inferd_requests_total", "inferd_request_duration_seconds",
            "process_resident_memory_bytes"} <= names
    assert demo_server.post("/dashboard/data", {}).status_code == 405


def test_dashboard_shows_a_language_models_tokens_and_sequences(start_server, tmp_path, browser):
    from llm_helpers import add_llm

    repo = tmp_path / "repo"
    add_llm(repo, "smollm2", parallel=2)
    server = start_server(repo)
    browser.get(f"{server.url}/dashboard?interval_ms=500")
    wait_until(lambda: browser.execute_script(
        "return !document.getElementById('llm-section').hidden"), 20, "the language models table")
    body = {"model": "smollm2", "prompt": "1, 2, 3,", "max_tokens": 8, "temperature": 0}
    for _ in range(3):
        assert requests.post(f"{server.url}/v1/completions", json=body, timeout=60).ok

    def row():
        return browser.execute_script(
            "const r = document.querySelector('#llm-table tr[data-model=smollm2]');"
            "return r ? [...r.cells].map(c => c.textContent) : null;")

    # The mean time to first token of the three requests, and their sequences gone.
    cells = wait_until(lambda: (r := row()) and r[3] != "0.0 ms" and r[5] == "0 / 2" and r, 20,
                       "the model's row after the requests")
    assert cells[0] == "smollm2"
    assert float(cells[3].split()[0]) > 0, cells
    assert cells[5] == "0 / 2" and cells[6] == "0", cells
    assert re.fullmatch(r"\d+ / 1024 tokens", cells[7]), cells
    # Output tokens per second between two polls while a longer request decodes.
    long_body = dict(body, max_tokens=120, prompt="1, 2, 3, 4,")
    with ThreadPoolExecutor(max_workers=1) as pool:
        running = pool.submit(requests.post, f"{server.url}/v1/completions", json=long_body,
                              timeout=300)
        busy = wait_until(lambda: (r := row()) and r[1] not in ("–", "0.0") and r, 30,
                          "output tokens per second above 0")
        assert running.result().ok
    assert float(busy[1]) > 0, busy
    assert console_errors(browser) == [], console_errors(browser)
