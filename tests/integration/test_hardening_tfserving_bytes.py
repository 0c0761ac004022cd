"""Regression (issue 13, defect 2): TF-Serving :predict with a BYTES input and several
`instances` sized the stacked tensor at 4 bytes per element but copied each row at its real
size: long strings overflowed the heap (the process crashed) and short ones came back as one
prediction for two instances. The rows are now joined by the batcher's own concatenation."""

from __future__ import annotations

import numpy as np
import pytest

from test_binary_bytes_model import expected, text_server  # noqa: F401 (fixture)


@pytest.mark.parametrize("texts", [
    [b"banana", b"a cat"],                                  # short rows: one answer per row
    [b"a" * 20000, b"banana", b"x" * 50000 + b"aa", b""],   # long rows: overflowed the heap
])
def test_tfserving_instances_of_bytes_each_get_their_prediction(text_server, texts):  # noqa: F811
    body = {"instances": [{"text": [t.decode()]} for t in texts]}
    resp = text_server.post("/v1/models/text_stats:predict", body)
    assert resp.status_code == 200, resp.text[:500]
    got = np.array(resp.json()["predictions"], np.float32)
    np.testing.assert_array_equal(got, expected(texts))
    # The server is still up and answering.
    assert text_server.get("/v2/health/live").status_code == 200
