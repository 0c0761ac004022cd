"""After a large model is unloaded, the process's resident memory returns close to its level
before the load: the manager purges jemalloc's arenas (malloc_trim under glibc) after every
unload and eviction, because inferd's jemalloc is configured to keep freed pages
(src/server/allocator_config.cc). The first load of a process also grows LibTorch's own
one-time state, so the measured cycle is the second."""

from __future__ import annotations

from inferd_harness import wait_until
from lifecycle_helpers import copy_model, lifecycle


def _rss_mib(server) -> float:
    return lifecycle(server)["resident_bytes"] / 2**20


def test_resident_memory_returns_after_unloading_a_large_model(start_server, tmp_path):
    copy_model(tmp_path / "repo", "big", "resnet18")
    copy_model(tmp_path / "repo", "small", "digits")
    server = start_server(tmp_path / "repo", "--model-control", "explicit", "--load-model", "small")
    body = {"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 3, 224, 224],
                        "data": [0.0] * (3 * 224 * 224)}]}
    samples = []
    for cycle in range(2):
        before = _rss_mib(server)
        assert server.post("/v2/repository/models/big/load", raw="").status_code == 200
        for _ in range(3):
            assert server.post("/v2/models/big/infer", body).status_code == 200
        loaded = _rss_mib(server)
        growth = loaded - before
        assert growth > 30, f"resnet18 (45 MiB of weights) grew RSS by only {growth:.1f} MiB"
        assert server.post("/v2/repository/models/big/unload", raw="").status_code == 200
        # The manager's housekeeping thread frees the weights and purges the allocator after
        # the reply: wait for it. The first cycle keeps LibTorch's one-time state, so only
        # the weights' 30 MiB must go; the second must give back 80 % of what it took.
        want = loaded - 30 if cycle == 0 else before + 0.2 * growth
        after = wait_until(lambda: (rss := _rss_mib(server)) < want and rss, 10,
                           lambda: f"cycle {cycle + 1}: RSS {before:.1f} MiB before the load, "
                                   f"{loaded:.1f} loaded, {_rss_mib(server):.1f} after the "
                                   f"unload; want < {want:.1f} (earlier cycles {samples})")
        samples.append((before, loaded, after))
