"""`op: tokenize` end to end: op-only pipelines (tokenize alone) answer the token ids Python's
`tokenizers` 0.23.2 gives for WordPiece, byte-level BPE and Unigram tokenizer.json files
trained here, and Python `sentencepiece` 0.2.3 gives for SentencePiece unigram and BPE .model
files trained here (the server runs Debian's libsentencepiece 0.1.97), over
tests/data/text_corpus.jsonl (accents in NFC and NFD, CJK, emoji with ZWJ,
RTL, control characters, empty and whitespace-only strings, strings past max_length).
Text that is not UTF-8 (sent as binary BYTES) and text over max_text_bytes are 400s naming
the element and the limit, and the server answers afterwards. The demo pipeline
(tools/demo_models/text_pipeline.py) answers a sentence on /predict with its labels."""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path

import numpy as np
import pytest
import sentencepiece as spm
from tokenizers import (Tokenizer, models, normalizers, pre_tokenizers, processors, trainers)

from inferd_harness import InferdServer
from pipeline_helpers import add_pipeline, copy_demo, index_by_name, output
from tools.demo_models.text_pipeline import make_text_classifier_pipeline

HEADER = "Inference-Header-Content-Length"
MAX_LENGTH = 64
CORPUS = [json.loads(line)["text"]
          for line in (Path(__file__).resolve().parents[1] / "data" / "text_corpus.jsonl")
          .read_text(encoding="utf-8").splitlines()]
TRAINING = CORPUS + [
    "the quick brown fox jumps over the lazy dog",
    "a lovely day for a walk in the park with friends",
    "what a terrible movie, i hated every minute of it",
    "tokenizers turn text into numbers that models can read",
] * 20


def wordpiece() -> Tokenizer:
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(TRAINING, trainers.WordPieceTrainer(
        vocab_size=400, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"], show_progress=False))
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    return tok


def byte_level_bpe() -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.train_from_iterator(TRAINING, trainers.BpeTrainer(
        vocab_size=500, special_tokens=["<pad>", "<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", 1), ("</s>", 2)])
    return tok


def unigram() -> Tokenizer:
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.train_from_iterator(TRAINING, trainers.UnigramTrainer(
        vocab_size=1200, special_tokens=["<pad>", "<unk>", "</s>"], unk_token="<unk>",
        show_progress=False))
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", special_tokens=[("</s>", 2)])
    return tok


KINDS = {"wordpiece": wordpiece, "bpe": byte_level_bpe, "unigram": unigram}


def sentencepiece_model(model_type: str) -> bytes:
    """A .model from Python sentencepiece's trainer (one thread: deterministic), with the
    default nmt_nfkc normalization; UNK 0, BOS 1, EOS 2, PAD 3."""
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(TRAINING), model_writer=model, model_type=model_type,
        vocab_size=1000, character_coverage=1.0, num_threads=1, minloglevel=2,
        hard_vocab_limit=False, pad_id=3)
    return model.getvalue()


# name: (model type, params); "spm_unigram_bos" serves the unigram model with BOS and EOS.
SPM_KINDS = {"spm_unigram": ("unigram", {}), "spm_bpe": ("bpe", {}),
             "spm_unigram_bos": ("unigram", {"add_bos": True, "add_eos": True})}


def tokenize_pipeline(name: str, params: dict, tokenizer: str = "tokenizer.json") -> dict:
    return {
        "max_batch_size": 16,
        "inputs": [{"name": "text", "datatype": "BYTES", "dims": [], "content": "text"}],
        "outputs": [{"name": "ids", "datatype": "INT64", "dims": [MAX_LENGTH]},
                    {"name": "attention_mask", "datatype": "INT64", "dims": [MAX_LENGTH]}],
        "pipeline": {"steps": [{
            "name": "tokenize", "op": "tokenize", "inputs": {"text": "text"},
            "outputs": {"ids": "ids", "attention_mask": "attention_mask"},
            "params": {"tokenizer": tokenizer, "max_length": MAX_LENGTH, **params}}]},
    }


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    repo = tmp_path_factory.mktemp("pipeline_text") / "repo"
    repo.mkdir()
    files = {}
    for kind, make in KINDS.items():
        folder = add_pipeline(repo, f"tok_{kind}", tokenize_pipeline(kind, {}))
        files[kind] = folder / "1" / "tokenizer.json"
        make().save(str(files[kind]))
    spm_models = {kind: sentencepiece_model(kind) for kind in ("unigram", "bpe")}
    for name, (kind, params) in SPM_KINDS.items():
        folder = add_pipeline(repo, f"tok_{name}", tokenize_pipeline(name, params, "spm.model"))
        files[name] = folder / "1" / "spm.model"
        files[name].write_bytes(spm_models[kind])
    broken = add_pipeline(repo, "tok_spm_broken", tokenize_pipeline("broken", {}, "broken.model"))
    (broken / "1" / "broken.model").write_bytes(b"\x0a\xffnot a SentencePiece model")
    limited = add_pipeline(repo, "tok_limited", tokenize_pipeline("limited", {"max_text_bytes": 100}))
    (limited / "1" / "tokenizer.json").write_bytes(files["wordpiece"].read_bytes())
    copy_demo(repo, "text_classifier")
    make_text_classifier_pipeline(repo)
    log = tmp_path_factory.mktemp("pipeline_text_log") / "inferd.log"
    srv = InferdServer(repo, log, name="pipeline_text").start()
    srv.tokenizer_files = files
    yield srv
    srv.stop()


def expected(tokenizer_file: Path, text: str) -> tuple[list[int], list[int]]:
    """Python's encode with the op's max_length as truncation, padded with 0 and mask 0."""
    tok = Tokenizer.from_file(str(tokenizer_file))
    tok.enable_truncation(MAX_LENGTH)
    enc = tok.encode(text)
    pad = MAX_LENGTH - len(enc.ids)
    return enc.ids + [0] * pad, enc.attention_mask + [0] * pad


def expected_spm(model_file: Path, text: str, params: dict) -> tuple[list[int], list[int]]:
    """Python sentencepiece's encode, its pieces cut to fit MAX_LENGTH beside BOS/EOS, padded
    with the model's pad piece and mask 0."""
    sp = spm.SentencePieceProcessor(model_file=str(model_file))
    bos, eos = params.get("add_bos", False), params.get("add_eos", False)
    pieces = sp.encode(text)[:MAX_LENGTH - bos - eos]
    ids = [sp.bos_id()] * bos + pieces + [sp.eos_id()] * eos
    pad = MAX_LENGTH - len(ids)
    return ids + [sp.pad_id()] * pad, [1] * len(ids) + [0] * pad


def infer(server, model: str, texts: list[str]):
    body = {"inputs": [{"name": "text", "datatype": "BYTES", "shape": [len(texts)], "data": texts}]}
    return server.post(f"/v2/models/{model}/infer", body)


@pytest.mark.parametrize("kind", list(KINDS))
def test_ids_match_python_tokenizers_over_the_corpus(server, kind):
    mismatches = []
    for start in range(0, len(CORPUS), 16):
        texts = CORPUS[start:start + 16]
        resp = infer(server, f"tok_{kind}", texts)
        assert resp.status_code == 200, resp.text
        ids = np.array(output(resp.json(), "ids")["data"]).reshape(len(texts), MAX_LENGTH)
        mask = np.array(output(resp.json(), "attention_mask")["data"]).reshape(len(texts), MAX_LENGTH)
        for row, text in enumerate(texts):
            want_ids, want_mask = expected(server.tokenizer_files[kind], text)
            if ids[row].tolist() != want_ids or mask[row].tolist() != want_mask:
                mismatches.append((text, ids[row].tolist(), want_ids))
    assert not mismatches, f"{len(mismatches)} of {len(CORPUS)} differ, first: {mismatches[0]}"


def equal_score_tie(model_file: Path, got: list[int], want: list[int]) -> bool:
    """Two segmentations of the same text with the same total score: a unigram tie, which
    libsentencepiece 0.1.97 (the server's) and 0.2.3 (Python's) break differently."""
    sp = spm.SentencePieceProcessor(model_file=str(model_file))
    got = [i for i in got if i != sp.pad_id()]
    want = [i for i in want if i != sp.pad_id()]
    return (len(got) == len(want) and sp.decode(got) == sp.decode(want)
            and abs(sum(map(sp.get_score, got)) - sum(map(sp.get_score, want))) < 1e-4)


@pytest.mark.parametrize("name", list(SPM_KINDS))
def test_ids_match_python_sentencepiece_over_the_corpus(server, name):
    mismatches, ties, tokens = [], [], 0
    for start in range(0, len(CORPUS), 16):
        texts = CORPUS[start:start + 16]
        resp = infer(server, f"tok_{name}", texts)
        assert resp.status_code == 200, resp.text
        ids = np.array(output(resp.json(), "ids")["data"]).reshape(len(texts), MAX_LENGTH)
        mask = np.array(output(resp.json(), "attention_mask")["data"]).reshape(len(texts), MAX_LENGTH)
        for row, text in enumerate(texts):
            want_ids, want_mask = expected_spm(server.tokenizer_files[name], text, SPM_KINDS[name][1])
            tokens += sum(want_mask)
            if mask[row].tolist() != want_mask:
                mismatches.append((text, ids[row].tolist(), want_ids))
            elif ids[row].tolist() != want_ids:
                if equal_score_tie(server.tokenizer_files[name], ids[row].tolist(), want_ids):
                    ties.append(text)
                else:
                    mismatches.append((text, ids[row].tolist(), want_ids))
    assert not mismatches, f"{len(mismatches)} of {len(CORPUS)} differ, first: {mismatches[0]}"
    # Measured: one tie, in the unigram models, on 200 repeated emoji (13 pieces "😀"*15 and
    # "😀"*16 in another order). More would mean a real difference hiding behind ties.
    assert len(ties) <= (1 if SPM_KINDS[name][0] == "unigram" else 0), ties
    print(f"{name}: {len(CORPUS) - len(ties)} of {len(CORPUS)} strings identical, "
          f"{len(ties)} equal-score ties; {tokens} tokens")


def test_sentencepiece_invalid_utf8_is_a_400_naming_the_element(server):
    body, headers = binary_bytes_request([b"fine", b"ok", b"caf\xc3"])
    resp = server.post("/v2/models/tok_spm_unigram/infer", raw=body, headers=headers)
    assert resp.status_code == 400, resp.text
    assert "element 2: not UTF-8 (byte 3)" in resp.text
    assert infer(server, "tok_spm_unigram", ["still here"]).status_code == 200


def test_a_broken_sentencepiece_model_is_refused_at_load_naming_the_file(server):
    row = index_by_name(server)["tok_spm_broken"]
    assert row["state"] == "UNAVAILABLE", row
    assert "params.tokenizer: cannot load SentencePiece model" in row["reason"], row
    assert "broken.model" in row["reason"], row


def test_corpus_exercises_truncation_and_empty_text(server):
    # The parity test means something only if the corpus reaches both ends.
    tok = Tokenizer.from_file(str(server.tokenizer_files["wordpiece"]))
    lengths = [len(tok.encode(t).ids) for t in CORPUS]
    assert max(lengths) > MAX_LENGTH and min(lengths) == 2


def binary_bytes_request(texts: list[bytes]) -> tuple[bytes, dict]:
    blob = b"".join(struct.pack("<I", len(t)) + t for t in texts)
    head = json.dumps({"inputs": [{"name": "text", "datatype": "BYTES", "shape": [len(texts)],
                                   "parameters": {"binary_data_size": len(blob)}}]}).encode()
    return head + blob, {HEADER: str(len(head))}


def test_invalid_utf8_is_a_400_naming_the_element_then_the_server_answers(server):
    body, headers = binary_bytes_request([b"fine", b"ab\xffcd"])
    resp = server.post("/v2/models/tok_wordpiece/infer", raw=body, headers=headers)
    assert resp.status_code == 400, resp.text
    assert "element 1: not UTF-8 (byte 2)" in resp.text
    assert "step 'tokenize'" in resp.text  # the runtime names the step, not the input
    resp = infer(server, "tok_wordpiece", ["still here"])
    assert resp.status_code == 200, resp.text


def test_text_over_max_text_bytes_is_a_400_naming_the_limit(server):
    resp = infer(server, "tok_limited", ["x" * 100])
    assert resp.status_code == 200, resp.text
    resp = infer(server, "tok_limited", ["short", "y" * 101])
    assert resp.status_code == 400, resp.text
    assert "element 1: 101 bytes" in resp.text and "max_text_bytes" in resp.text
    assert server.get("/v2/health/ready").status_code == 200
    assert infer(server, "tok_limited", ["ok"]).status_code == 200


def test_demo_pipeline_answers_a_sentence_on_predict(server):
    resp = server.post("/predict?model=text_classifier_pipeline", {"input": "what a lovely day"})
    assert resp.status_code == 200, resp.text
    labels = {"negative", "positive"}
    text = resp.text
    assert all(f'"{label}"' in text for label in labels), text
    # The same answer as tokenizing in Python and running text_classifier through the server.
    tok = Tokenizer.from_file(
        str(server.repository / "text_classifier_pipeline" / "1" / "tokenizer.json"))
    tok.enable_truncation(128)
    ids = tok.encode("what a lovely day").ids
    ids += [0] * (128 - len(ids))
    resp = server.post("/v2/models/text_classifier/infer", {"inputs": [
        {"name": "token_ids", "datatype": "INT64", "shape": [1, 128], "data": ids}]})
    assert resp.status_code == 200, resp.text
    logits = np.array(output(resp.json(), "logits")["data"], np.float64)
    probs = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    best = ["negative", "positive"][int(np.argmax(probs))]
    kserve = server.post("/v2/models/text_classifier_pipeline/infer", {"inputs": [
        {"name": "text", "datatype": "BYTES", "shape": [1], "data": ["what a lovely day"]}]})
    assert kserve.status_code == 200, kserve.text
    assert output(kserve.json(), "labels")["data"][0] == best
    np.testing.assert_allclose(output(kserve.json(), "scores")["data"], sorted(probs)[::-1],
                               atol=1e-5)
