"""Writes a tiny BERT cross-encoder reranker as GGUF, for the llama backend's rerank tests:
two layers of width 64, a WordPiece vocabulary of lowercase words and letters, and the
classification head llama.cpp reads for rank pooling (`cls` then `cls.output`, one label).
Random weights from a fixed seed, so every run writes the same file; the scores mean nothing,
but llama.cpp computes them the same way as for a real reranker.

    .venv/bin/python -m tools.demo_models.tiny_reranker --out build/tiny-reranker.gguf
"""

import argparse
from pathlib import Path

import numpy as np

EMBED = 64
HEADS = 4
LAYERS = 2
FFN = 128
CONTEXT = 512
POOLING_RANK = 4  # llama_pooling_type LLAMA_POOLING_TYPE_RANK

WORDS = ["the", "a", "is", "of", "and", "in", "to", "what", "capital", "france", "paris",
         "berlin", "germany", "city", "river", "fox", "dog", "quick", "brown", "lazy", "jumps",
         "over", "cat", "python", "code", "function", "weather", "today", "sunny", "rain"]
CHARS = list("abcdefghijklmnopqrstuvwxyz0123456789.,?!'-")


def vocabulary() -> list[str]:
    # llama.cpp's WordPiece marks a word's first piece with U+2581 and a continuation with
    # nothing (convert_hf_to_gguf turns "##x" into "x" and "x" into "\u2581x").
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tokens = special + ["\u2581" + w for w in WORDS]
    tokens += ["\u2581" + c for c in CHARS if c not in WORDS] + CHARS
    return tokens


def write(out: Path) -> Path:
    import gguf

    rng = np.random.default_rng(20261205)
    tokens = vocabulary()

    def weight(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    writer = gguf.GGUFWriter(str(out), "bert")
    writer.add_name("tiny-reranker")
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(EMBED)
    writer.add_feed_forward_length(FFN)
    writer.add_block_count(LAYERS)
    writer.add_head_count(HEADS)
    writer.add_layer_norm_eps(1e-12)
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType.RANK)
    writer.add_tokenizer_model("bert")
    writer.add_token_list(tokens)
    writer.add_token_types([gguf.TokenType.CONTROL] * 5 + [gguf.TokenType.NORMAL] *
                           (len(tokens) - 5))
    writer.add_token_type_count(2)
    writer.add_pad_token_id(0)
    writer.add_unk_token_id(1)
    writer.add_bos_token_id(2)  # [CLS]
    writer.add_sep_token_id(3)
    writer.add_eos_token_id(3)  # [SEP] ends each text of the pair
    writer.add_mask_token_id(4)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(True)
    writer.add_add_sep_token(True)

    ones = lambda n: np.ones(n, np.float32)  # noqa: E731
    writer.add_tensor("token_embd.weight", weight(len(tokens), EMBED))
    writer.add_tensor("token_types.weight", weight(2, EMBED))
    writer.add_tensor("position_embd.weight", weight(CONTEXT, EMBED, scale=0.05))
    writer.add_tensor("token_embd_norm.weight", ones(EMBED))
    writer.add_tensor("token_embd_norm.bias", weight(EMBED, scale=0.01))
    for i in range(LAYERS):
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"blk.{i}.{name}.weight", weight(EMBED, EMBED))
            writer.add_tensor(f"blk.{i}.{name}.bias", weight(EMBED, scale=0.01))
        writer.add_tensor(f"blk.{i}.attn_output_norm.weight", ones(EMBED))
        writer.add_tensor(f"blk.{i}.attn_output_norm.bias", weight(EMBED, scale=0.01))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", weight(FFN, EMBED))
        writer.add_tensor(f"blk.{i}.ffn_up.bias", weight(FFN, scale=0.01))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", weight(EMBED, FFN))
        writer.add_tensor(f"blk.{i}.ffn_down.bias", weight(EMBED, scale=0.01))
        writer.add_tensor(f"blk.{i}.layer_output_norm.weight", ones(EMBED))
        writer.add_tensor(f"blk.{i}.layer_output_norm.bias", weight(EMBED, scale=0.01))
    writer.add_tensor("cls.weight", weight(EMBED, EMBED))
    writer.add_tensor("cls.bias", weight(EMBED, scale=0.01))
    writer.add_tensor("cls.output.weight", weight(1, EMBED, scale=1.0))
    writer.add_tensor("cls.output.bias", np.zeros(1, np.float32))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True, help="the .gguf file to write")
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    print(write(args.out))


if __name__ == "__main__":
    main()
