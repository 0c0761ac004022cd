"""Writes a LoRA adapter for the demo chat model (SmolLM2-135M-Instruct) as GGUF, for the llama
backend's adapter tests: rank-8 A and B matrices on every layer's attn_q and attn_v, random from
a fixed seed, so every run writes the same file. The weights mean nothing; they are large enough
to change the greedy output, and llama.cpp applies them as it would a trained adapter's.

    .venv/bin/python -m tools.demo_models.chat_lora --base path/to/model.gguf --out tone.gguf

The layout is llama.cpp's (convert_lora_to_gguf.py): general.type "adapter", adapter.type
"lora", adapter.lora.alpha, and for each adapted weight W (ggml shape [n_in, n_out]) the pair
`<W>.lora_a` ([n_in, rank]) and `<W>.lora_b` ([rank, n_out]); the output is
W x + scale * alpha / rank * B (A x).
"""

import argparse
from pathlib import Path

import numpy as np

RANK = 8
ALPHA = 16.0
TARGETS = ("attn_q", "attn_v")


def write(base: Path, out: Path, seed: int = 20261205, spread: float = 0.08) -> Path:
    import gguf

    reader = gguf.GGUFReader(str(base))
    arch = reader.fields["general.architecture"].contents()
    shapes = {t.name: [int(n) for n in t.shape] for t in reader.tensors}
    rng = np.random.default_rng(seed)

    writer = gguf.GGUFWriter(str(out), arch)
    writer.add_type(gguf.GGUFType.ADAPTER)
    writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
    writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, ALPHA)
    layer = 0
    while f"blk.{layer}.attn_q.weight" in shapes:
        for target in TARGETS:
            name = f"blk.{layer}.{target}.weight"
            n_in, n_out = shapes[name]
            # numpy shapes are ggml's reversed.
            a = (rng.standard_normal((RANK, n_in)) * spread).astype(np.float32)
            b = (rng.standard_normal((n_out, RANK)) * spread).astype(np.float32)
            writer.add_tensor(f"{name}.lora_a", a)
            writer.add_tensor(f"{name}.lora_b", b)
        layer += 1
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, required=True, help="the chat model's .gguf")
    parser.add_argument("--out", type=Path, required=True, help="the adapter .gguf to write")
    parser.add_argument("--seed", type=int, default=20261205)
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    print(write(args.base, args.out, args.seed))


if __name__ == "__main__":
    main()
