"""Writes the tiny tokenizer.json files tokenize_op_test.cc loads (committed beside this
script; rerun it after changing it: the output is deterministic).

The vocabulary is not learned with WordPieceTrainer: its continuing-subword alphabet comes out
of a Rust HashMap, so two runs give different ids (and, through tied merges, different
tokens). Instead it is every character (alone and as "##c") plus every word, counted with the
tokenizer's own normalizer and pre-tokenizer, in a sorted order.

  wordpiece.json         BERT-style: lowercase + strip accents, [CLS] $A [SEP], no padding
                         or truncation declared.
  wordpiece_padded.json  the same vocabulary with padding (left, pad_id 1) and truncation
                         (max_length 6) declared in the file, as some hub tokenizers ship.

Run: .venv/bin/python tests/data/tokenizers/make_tokenizers.py
"""

import pathlib

from collections import Counter

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

HERE = pathlib.Path(__file__).resolve().parent

CORPUS = [
    "the quick brown fox jumps over the lazy dog",
    "a lovely day for a walk in the park",
    "what a terrible movie, i hated it",
    "café crème brûlée naïve résumé",
    "tokenizers turn text into numbers",
    "hello world hello there",
] * 4

SPECIALS = ["[UNK]", "[PAD]", "[CLS]", "[SEP]"]


def wordpiece() -> Tokenizer:
    normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True)
    pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    words = Counter(
        word
        for text in CORPUS
        for word, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text))
    )
    chars = sorted({c for word in words for c in word})
    tokens = SPECIALS + chars + ["##" + c for c in chars]
    # Whole words, most frequent first, ties by spelling; some words stay out so that the
    # tests see words split into pieces.
    tokens += [w for w, _ in sorted(words.items(), key=lambda kv: (-kv[1], kv[0])) if len(w) > 1][:20]
    tokenizer = Tokenizer(models.WordPiece({t: i for i, t in enumerate(tokens)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizer
    tokenizer.pre_tokenizer = pre_tokenizer
    tokenizer.decoder = decoders.WordPiece()
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    return tokenizer


def main() -> None:
    plain = wordpiece()
    plain.save(str(HERE / "wordpiece.json"))
    padded = wordpiece()
    padded.enable_padding(direction="left", pad_id=1, pad_token="[PAD]", length=6)
    padded.enable_truncation(max_length=6)
    padded.save(str(HERE / "wordpiece_padded.json"))


if __name__ == "__main__":
    main()
