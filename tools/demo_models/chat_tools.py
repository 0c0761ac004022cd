"""Writes the demo chat model (SmolLM2-135M-Instruct) again with a chat template that knows tools:
Qwen2.5's (Hermes-style `<tool_call>{"name", "arguments"}</tool_call>`, tools listed in the
system turn, `tool` results as `<tool_response>`), as llama.cpp ships it in the same source
release the llama backend compiles (third_party/llama.cpp-<version>/models/templates, unpacked
by scripts/setup-llama-source). For the tests of a template's own tool-call format
(src/backends/llama/chat_tool_format.h). The weights and every other key are the demo model's,
unchanged; SmolLM2 speaks ChatML, as Qwen2.5 does, so the template's <|im_start|> and
<|im_end|> are the vocabulary's own special tokens.

    .venv/bin/python -m tools.demo_models.chat_tools --base path/to/model.gguf --out tools.gguf
"""

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = "Qwen-Qwen2.5-7B-Instruct.jinja"


def default_template() -> Path:
    found = sorted(ROOT.glob(f"third_party/llama.cpp-*/models/templates/{TEMPLATE}"))
    if not found:
        raise FileNotFoundError(
            f"{TEMPLATE} is not under third_party/: run scripts/setup-llama-source"
        )
    return found[-1]


def write(base: Path, out: Path, template: Path | None = None) -> Path:
    import gguf
    from gguf.scripts.gguf_new_metadata import MetadataDetails, copy_with_new_metadata

    source = (template or default_template()).read_text()
    reader = gguf.GGUFReader(str(base), "r")
    arch = reader.fields[gguf.Keys.General.ARCHITECTURE].contents()
    writer = gguf.GGUFWriter(str(out), arch=arch, endianess=reader.endianess)
    alignment = reader.fields.get(gguf.Keys.General.ALIGNMENT)
    if alignment is not None:
        writer.data_alignment = int(alignment.contents())
    new = {gguf.Keys.Tokenizer.CHAT_TEMPLATE: MetadataDetails(gguf.GGUFValueType.STRING, source)}
    copy_with_new_metadata(reader, writer, new, [])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, required=True, help="the chat model's .gguf")
    parser.add_argument("--out", type=Path, required=True, help="the .gguf to write")
    parser.add_argument(
        "--template", type=Path, help=f"a Jinja template (default: llama.cpp's {TEMPLATE})"
    )
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    print(write(args.base, args.out, args.template))


if __name__ == "__main__":
    main()
