"""The text_classifier_pipeline demo (called by tools/demo_models/pipelines.py): a sentence
in, text_classifier's two labels out, through `op: tokenize` with a WordPiece tokenizer.json
made here.

The tokenizer is BERT's recipe (BertNormalizer lowercasing and stripping accents,
BertPreTokenizer, WordPiece, "[CLS] $A [SEP]") over a vocabulary built deterministically
from the docstrings of a fixed list of standard-library modules. It is not learned with
WordPieceTrainer: that trainer's subword alphabet comes out of a Rust HashMap, so two runs give
different files. The vocabulary is every character seen (alone and as "##c"), then the most
frequent "##" word endings and whole words, ties broken by spelling. text_classifier's weights are
random, so its labels are names, not judgements.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
from collections import Counter
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

VOCAB_SIZE = 8000
MAX_LENGTH = 128  # text_classifier's token_ids are [128]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# Offline text that every Python 3.11 has: the docstrings of these modules' functions and
# classes, in name order.
CORPUS_MODULES = ("argparse", "asyncio", "builtins", "collections", "concurrent.futures",
                  "configparser", "csv", "dataclasses", "datetime", "decimal", "email.message",
                  "enum", "fractions", "functools", "http.client", "http.server", "inspect",
                  "io", "ipaddress", "itertools", "json", "logging", "mailbox", "os", "pathlib",
                  "pickle", "pydoc", "re", "shutil", "socket", "sqlite3", "statistics",
                  "string", "subprocess", "tarfile", "textwrap", "threading", "typing",
                  "unittest", "urllib.parse", "xml.dom.minidom", "zipfile")
SAMPLES = {
    "lovely_day.txt": "What a lovely day!",
    "terrible_movie.txt": "That was a terrible movie; I want my money back.",
    "cafe.txt": "The café on the corner serves a fine crème brûlée.",
    "parsing.txt": "The parser reads each argument from the command line and returns a namespace.",
}


def _corpus() -> list[str]:
    texts = []
    for name in CORPUS_MODULES:
        module = importlib.import_module(name)
        for _, obj in sorted(vars(module).items()):
            if inspect.isfunction(obj) or inspect.isclass(obj):
                doc = inspect.getdoc(obj)
                if doc:
                    texts.append(doc)
    return texts


def make_tokenizer() -> Tokenizer:
    normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True)
    pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    words: Counter[str] = Counter()
    for text in _corpus():
        words.update(w for w, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text)))
    chars = sorted({c for word in words for c in word})
    tokens = SPECIALS + chars + ["##" + c for c in chars]
    # Word endings (the last 2..4 characters of longer words) let unseen words split into
    # pieces rather than [UNK] or single characters.
    endings: Counter[str] = Counter()
    for word, count in words.items():
        for n in (2, 3, 4):
            if len(word) > n + 1:
                endings["##" + word[-n:]] += count
    by_count = lambda counter: [t for t, _ in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))]
    room = VOCAB_SIZE - len(tokens)
    tokens += by_count(endings)[: room // 4]
    seen = set(tokens)
    tokens += [w for w in by_count(words) if len(w) > 1 and w not in seen][: VOCAB_SIZE - len(tokens)]
    tokenizer = Tokenizer(models.WordPiece({t: i for i, t in enumerate(tokens)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizer
    tokenizer.pre_tokenizer = pre_tokenizer
    tokenizer.decoder = decoders.WordPiece()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", tokens.index("[CLS]")), ("[SEP]", tokens.index("[SEP]"))],
    )
    return tokenizer


CONFIG = f"""\
# text_classifier_pipeline: a sentence in, text_classifier's two labels out:
# WordPiece tokenizer (1/tokenizer.json) -> text_classifier -> softmax -> top 2 labels.
backend: pipeline
max_batch_size: 16
inputs:
  - {{name: text, datatype: BYTES, dims: [], content: text}}
outputs:
  - {{name: labels, datatype: BYTES, dims: [2]}}
  - {{name: scores, datatype: FP32, dims: [2]}}
pipeline:
  steps:
    - name: tokenize
      op: tokenize
      inputs: {{text: text}}
      outputs: {{ids: token_ids}}
      params: {{tokenizer: tokenizer.json, max_length: {MAX_LENGTH}}}
    - {{name: classify, model: text_classifier, inputs: {{token_ids: token_ids}},
       outputs: {{logits: logits}}}}
    - {{name: probabilities, op: softmax, inputs: {{x: logits}}, outputs: {{y: probabilities}}}}
    - {{name: top, op: top_k, inputs: {{x: probabilities}},
       outputs: {{labels: labels, scores: scores}}, params: {{k: 2, labels: labels.txt}}}}
  answer: {{labels: labels, scores: scores}}
"""


def make_text_classifier_pipeline(out: Path) -> None:
    folder = Path(out) / "text_classifier_pipeline"
    (folder / "1").mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(CONFIG, encoding="utf-8")
    (folder / "1" / "labels.txt").write_text("negative\npositive\n", encoding="utf-8")
    # Made twice: the file must not depend on the run.
    first, second = make_tokenizer().to_str(), make_tokenizer().to_str()
    digest = hashlib.sha256(first.encode()).hexdigest()
    if digest != hashlib.sha256(second.encode()).hexdigest():
        raise RuntimeError("the demo tokenizer differs between two runs")
    (folder / "1" / "tokenizer.json").write_text(first, encoding="utf-8")
    samples = folder / "samples"
    samples.mkdir(exist_ok=True)
    for name, text in SAMPLES.items():
        (samples / name).write_text(text, encoding="utf-8")
    vocab = Tokenizer.from_str(first).get_vocab_size()
    print(f"  text_classifier_pipeline: WordPiece vocabulary {vocab}, sha256 {digest[:16]}")


if __name__ == "__main__":
    import sys

    make_text_classifier_pipeline(Path(sys.argv[1] if len(sys.argv) > 1 else "build/demo-pipelines"))
