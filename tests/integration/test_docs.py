"""The README and docs/ stay true: the README's first requests answer 200 on the demo as
scripts/serve runs it, every relative link points at a file that exists, and the benchmark
tables are what bench/headline.py writes from the committed results (not typed by hand), and
the figures quoted in prose are what bench/doc_figures.py computes from their result files."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from inferd_harness import DEMO_MODELS, REPO_ROOT

DOCUMENTS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _try_it_commands() -> list[str]:
    """The shell commands of the README's "Try it" block, continuation lines joined."""
    text = (REPO_ROOT / "README.md").read_text()
    section = text.split("## Try it", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [c.strip() for c in block.replace("\\\n", " ").splitlines() if c.strip()]


def test_the_readme_first_requests_answer_on_the_served_demo(start_server):
    # As scripts/serve starts it: the demo repository with /predict's default model.
    server = start_server(DEMO_MODELS, "--default-model", "mlp_scorer")
    commands = _try_it_commands()
    assert len(commands) >= 5, commands
    for command in commands:
        assert command.startswith("curl "), command
        run = (command.replace("localhost:8080", f"127.0.0.1:{server.port}")
               .replace("build/demo-models", str(DEMO_MODELS))
               .replace("curl ", "curl -w '\\n%{http_code}' ", 1))
        done = subprocess.run(["bash", "-c", run], cwd=REPO_ROOT, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, (command, done.stderr)
        body, _, status = done.stdout.rpartition("\n")
        assert status == "200", (command, status, body[:500])


def _section_commands(heading: str) -> list[str]:
    text = (REPO_ROOT / "README.md").read_text()
    block = text.split(heading, 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return [c.strip() for c in block.replace("\\\n", " ").splitlines() if c.strip()]


def test_the_readme_pipeline_requests_answer_with_labels(start_server, tmp_path):
    # As scripts/serve serves them: the demo models and the demo pipelines in one repository.
    pipelines = DEMO_MODELS.parent / "demo-pipelines"
    assert pipelines.is_dir(), f"{pipelines} is missing: scripts/setup writes it"
    repo = tmp_path / "repo"
    repo.mkdir()
    for source in (DEMO_MODELS, pipelines):
        for folder in source.iterdir():
            if (folder / "config.yaml").is_file():
                (repo / folder.name).symlink_to(folder.resolve())
    server = start_server(repo)
    commands = _section_commands("## Raw inputs: pipelines")
    assert len(commands) == 3, commands
    for command in commands:
        run = (command.replace("localhost:8080", f"127.0.0.1:{server.port}")
               .replace("build/demo-pipelines", str(pipelines))
               .replace("curl ", "curl -w '\\n%{http_code}' ", 1))
        done = subprocess.run(["bash", "-c", run], cwd=REPO_ROOT, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, (command, done.stderr)
        body, _, status = done.stdout.rpartition("\n")
        assert status == "200", (command, status, body[:500])
        answer = json.loads(body)
        assert answer["label"] == answer["top_k"][0]["label"], answer
        assert 0 <= answer["score"] <= 1, answer


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_every_relative_link_resolves(document):
    missing = []
    for target in _LINK.findall(document.read_text()):
        if target.startswith(("http://", "https://", "mailto:", "#")):
            continue
        path = target.split("#", 1)[0]
        if not (document.parent / path).exists():
            missing.append(target)
    assert missing == [], f"{document.name} links to files that do not exist: {missing}"


def test_benchmark_tables_are_what_bench_headline_writes():
    done = subprocess.run([sys.executable, str(REPO_ROOT / "bench" / "headline.py"), "--check"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_benchmark_figures_in_prose_are_what_their_result_files_say():
    # Issue 34: ratios typed by hand outside the generated tables drifted (1.38× where the
    # JSON gives 1.374). bench/doc_figures.py lists each such figure with its result file.
    done = subprocess.run([sys.executable, str(REPO_ROOT / "bench" / "doc_figures.py"), "--check"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
