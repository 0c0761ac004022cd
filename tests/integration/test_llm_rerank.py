"""POST /v1/rerank through the llama backend: a cross-encoder reranker (a tiny BERT with a
classification head, written by tools/demo_models/tiny_reranker.py) scores each (query,
document) pair exactly as llama.cpp does (through llama-cpp-python, rank pooling, the pair
built as llama.cpp's server builds it), results sorted by score, top_n and return_documents
honoured, bounded inputs, and clear refusals for models that are not rerankers. Plain
requests: the openai client has no rerank call."""

from __future__ import annotations

import pytest
import requests

from llama_server_process import llama_server, needs_llama_server
from llm_helpers import SETTINGS, add_llm

MODEL = "reranker"
PLAIN = "chat_only"  # a llama model that does not rerank, loaded lazily
EMBEDDER = "embedder"  # embeddings with mean pooling, lazily: not a reranker either
QUERY = "what is the capital of france"
DOCUMENTS = ["paris is the capital of france", "berlin is the capital of germany",
             "the quick brown fox jumps over the lazy dog", "the weather today is sunny",
             "python code"]
CONFIG = f"""\
backend: llama
parameters:
  embeddings: true
  pooling: rank
  context_length: 512
  parallel: 1
  batch_size: {SETTINGS['batch_size']}
  threads: {SETTINGS['threads']}
  flash_attention: off
"""


@pytest.fixture(scope="module")
def gguf(tmp_path_factory):
    from tools.demo_models.tiny_reranker import write

    return write(tmp_path_factory.mktemp("reranker") / "tiny-reranker.gguf")


@pytest.fixture(scope="module")
def server(tmp_path_factory, gguf):
    from inferd_harness import InferdServer

    repo = tmp_path_factory.mktemp("rerank_repo")
    (repo / MODEL / "1").mkdir(parents=True)
    (repo / MODEL / "config.yaml").write_text(CONFIG)
    (repo / MODEL / "1" / "model.gguf").symlink_to(gguf)
    add_llm(repo, PLAIN, parallel=1, lazy=True)
    add_llm(repo, EMBEDDER, parallel=1, lazy=True, extra={"embeddings": "true", "pooling": "mean"})
    server = InferdServer(repo, repo.parent / "inferd.log", name="rerank_server").start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def reference(gguf):
    """llama.cpp's rank pooling through llama-cpp-python, at the server's settings."""
    import llama_cpp

    return llama_cpp.Llama(model_path=str(gguf), embedding=True,
                           pooling_type=llama_cpp.LLAMA_POOLING_TYPE_RANK,
                           n_ctx=SETTINGS["batch_size"], n_batch=SETTINGS["batch_size"],
                           n_ubatch=SETTINGS["batch_size"], n_threads=SETTINGS["threads"],
                           n_threads_batch=SETTINGS["threads"], flash_attn=False, verbose=False)


def pair_tokens(llm, query: str, document: str) -> list[int]:
    """The pair as llama.cpp's server builds it (format_prompt_rerank, no rerank template):
    [BOS] query [EOS] [SEP] document [EOS], each where the vocabulary asks for it."""
    import llama_cpp

    vocab = llama_cpp.llama_model_get_vocab(llm._model.model)
    eos = llama_cpp.llama_vocab_eos(vocab)
    if eos == llama_cpp.LLAMA_TOKEN_NULL:
        eos = llama_cpp.llama_vocab_sep(vocab)
    tokens = []
    if llama_cpp.llama_vocab_get_add_bos(vocab):
        tokens.append(llama_cpp.llama_vocab_bos(vocab))
    tokens += llm.tokenize(query.encode(), add_bos=False, special=False)
    if llama_cpp.llama_vocab_get_add_eos(vocab):
        tokens.append(eos)
    if llama_cpp.llama_vocab_get_add_sep(vocab):
        tokens.append(llama_cpp.llama_vocab_sep(vocab))
    tokens += llm.tokenize(document.encode(), add_bos=False, special=False)
    if llama_cpp.llama_vocab_get_add_eos(vocab):
        tokens.append(eos)
    return tokens


def reference_score(llm, tokens: list[int]) -> float:
    """One pair's score: the first classifier output of rank pooling, what llama.cpp's server
    reports (send_rerank reads embd[0])."""
    import llama_cpp

    llm._batch.reset()
    llm._batch.add_sequence(tokens, 0, True)
    llm._ctx.kv_cache_clear()
    llm._ctx.decode(llm._batch)
    return float(llama_cpp.llama_get_embeddings_seq(llm._ctx.ctx, 0)[0])


def rerank(server, path="/v1/rerank", **body):
    return server.post(path, {"model": MODEL, "query": QUERY, "documents": DOCUMENTS, **body})


def test_scores_equal_llama_cpps_and_are_sorted(server, reference):
    response = rerank(server)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["model"] == MODEL and body["object"] == "list"
    pairs = [pair_tokens(reference, QUERY, d) for d in DOCUMENTS]
    # The tiny vocabulary's [CLS] query [SEP] [SEP] document [SEP] (bos 2, eos = sep 3).
    assert pairs[0][0] == 2 and pairs[0][-1] == 3 and pairs[0].count(3) == 3
    want = [reference_score(reference, tokens) for tokens in pairs]
    tokens = sum(len(p) for p in pairs)
    assert body["usage"] == {"prompt_tokens": tokens, "total_tokens": tokens}
    results = body["results"]
    assert sorted(r["index"] for r in results) == list(range(len(DOCUMENTS)))
    for result in results:
        assert abs(result["relevance_score"] - want[result["index"]]) < 1e-4, (result, want)
        assert "document" not in result
    scores = [r["relevance_score"] for r in results]
    assert scores == sorted(scores, reverse=True)
    assert len(set(scores)) > 1  # the documents score differently
    # The same scores at the other two paths llama.cpp's server answers.
    for path in ("/rerank", "/v2/rerank"):
        assert rerank(server, path).json()["results"] == results


def test_top_n_and_return_documents(server):
    full = rerank(server).json()["results"]
    top = rerank(server, top_n=2, return_documents=True).json()["results"]
    assert [r["index"] for r in top] == [r["index"] for r in full[:2]]
    for result in top:
        assert result["document"] == {"text": DOCUMENTS[result["index"]]}
    # top_n beyond the documents is every document.
    assert len(rerank(server, top_n=100).json()["results"]) == len(DOCUMENTS)


def test_bounds_and_refusals_name_the_field(server):
    cases = [
        ({"documents": ["x"] * 513}, "documents", "1 to 512"),
        ({"documents": []}, "documents", "1 to 512"),
        ({"documents": ["ok", ""]}, "documents", "documents[1] is empty"),
        ({"documents": [{"text": "x"}]}, "documents", "must be a string"),
        ({"documents": ["paris " * 600]}, "documents", "tokens per pair (parameters.ubatch_size)"),
        ({"query": ""}, "query", "'query' is empty"),
        ({"query": None}, "query", "'query' is required"),
        ({"query": "q" * ((1 << 20) + 1)}, "query", "bytes"),
        ({"query": "q" * (1 << 20)}, "documents", "bytes"),  # together past 1 MiB
        ({"top_n": 0}, "top_n", "positive integer"),
        ({"return_documents": "yes"}, "return_documents", "true or false"),
        ({"rank_fields": ["text"]}, "rank_fields", "not supported"),
        ({"model": ""}, "model", "'model' is required"),
    ]
    for body, field, message in cases:
        response = rerank(server, **body)
        assert response.status_code == 400, (body, response.text)
        error = response.json()["error"]
        assert message in error["message"], (body, error)
        assert error["param"] == field, (body, error)
    assert server.get("/v1/rerank").status_code == 405


def test_models_that_do_not_rerank_are_refused_from_their_config(server):
    for name, message in ((PLAIN, "parameters.pooling: rank"), (EMBEDDER, "is not a reranker")):
        response = rerank(server, model=name)
        assert response.status_code == 400, response.text
        assert message in response.json()["error"]["message"]
        # Refused from its config: never loaded for it.
        assert server.get(f"/v2/models/{name}/ready").status_code != 200
    assert rerank(server, model="nope").status_code == 404
    # A reranker does not embed.
    response = server.post("/v1/embeddings", {"model": MODEL, "input": "hi"})
    assert response.status_code == 400 and "is a reranker" in response.json()["error"]["message"]
    generation = server.get(f"/v2/models/{MODEL}/stats").json()["model_stats"][0]["generation"]
    assert generation["rerank_requests"] >= 1 and generation["rerank_tokens"] > 0


def test_an_encoder_does_not_generate(server):
    # BERT's attention is not causal: decoding with it would give noise, so it is refused.
    response = server.post("/v1/completions", {"model": MODEL, "prompt": "paris", "max_tokens": 3})
    assert response.status_code == 400, response.text
    assert "not causal" in response.json()["error"]["message"]


@needs_llama_server
def test_scores_equal_llama_servers_own(server, gguf, tmp_path):
    """The issue's bar: the same GGUF file in llama.cpp's own server (`--rerank`) scores each
    document within 1e-4 of inferd's, and both order them alike."""
    args = ["-m", str(gguf), "--rerank", "-c", "512", "-np", "1",
            "-t", str(SETTINGS["threads"]), "-tb", str(SETTINGS["threads"]),
            "-b", str(SETTINGS["batch_size"]), "-ub", str(SETTINGS["batch_size"]), "-fa", "off"]
    with llama_server(args, tmp_path / "llama-server.log") as url:
        theirs = requests.post(url + "/v1/rerank",
                               json={"model": MODEL, "query": QUERY, "documents": DOCUMENTS},
                               timeout=120)
        assert theirs.status_code == 200, theirs.text
    ours = rerank(server).json()["results"]
    their_scores = {r["index"]: r["relevance_score"] for r in theirs.json()["results"]}
    assert sorted(their_scores) == list(range(len(DOCUMENTS)))
    for result in ours:
        assert abs(result["relevance_score"] - their_scores[result["index"]]) < 1e-4, (
            result, their_scores)
    assert [r["index"] for r in ours] == sorted(their_scores, key=their_scores.get, reverse=True)
