"""Writes the tiny tokenizer files tokenize_op_test.cc and tests/fuzz/tokenizer_fuzzer.cc load
(committed beside this script; rerun it after changing it: the output is deterministic).

The vocabulary is not learned with WordPieceTrainer: its continuing-subword alphabet comes out
of a Rust HashMap, so two runs give different ids (and, through tied merges, different
tokens). Instead it is every character (alone and as "##c") plus every word, counted with the
tokenizer's own normalizer and pre-tokenizer, in a sorted order.

  wordpiece.json         BERT-style: lowercase + strip accents, [CLS] $A [SEP], no padding
                         or truncation declared.
  wordpiece_padded.json  the same vocabulary with padding (left, pad_id 1) and truncation
                         (max_length 6) declared in the file, as some hub tokenizers ship.
  spm_unigram.model      SentencePiece unigram (Python sentencepiece 0.2.3's trainer, one
                         thread: the same bytes every run), UNK 0, BOS 1, EOS 2, PAD 3.
  spm_bpe.model          SentencePiece BPE without BOS or pad pieces (UNK 0, EOS 1).
  Both use the identity normalization (no NFKC table: the files stay a few kB).

Run: .venv/bin/python tests/data/tokenizers/make_tokenizers.py
"""

import pathlib

import io
from collections import Counter

import sentencepiece as spm

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


def sentencepiece_model(model_type: str, vocab_size: int, **ids) -> bytes:
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(CORPUS), model_writer=model, model_type=model_type,
        vocab_size=vocab_size, character_coverage=1.0, num_threads=1, minloglevel=2,
        hard_vocab_limit=False, normalization_rule_name="identity", **ids)
    return model.getvalue()


def main() -> None:
    plain = wordpiece()
    plain.save(str(HERE / "wordpiece.json"))
    padded = wordpiece()
    padded.enable_padding(direction="left", pad_id=1, pad_token="[PAD]", length=6)
    padded.enable_truncation(max_length=6)
    padded.save(str(HERE / "wordpiece_padded.json"))
    (HERE / "spm_unigram.model").write_bytes(
        sentencepiece_model("unigram", 60, unk_id=0, bos_id=1, eos_id=2, pad_id=3))
    (HERE / "spm_bpe.model").write_bytes(
        sentencepiece_model("bpe", 60, unk_id=0, bos_id=-1, eos_id=1, pad_id=-1))


if __name__ == "__main__":
    main()
