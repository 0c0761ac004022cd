"""Images in (issue 33): the image_to_tensor op against what users train with — PIL's
Image.open(...).convert() and torchvision's Resize, CenterCrop, ToTensor and Normalize — on
the committed image set (tests/data/images: odd sizes, gray, CMYK, palette, RGBA, 16-bit,
progressive, WebP, every EXIF orientation); the demo pipelines' answers against running
the same steps by hand; the front doors for raw images; and hostile images."""

from __future__ import annotations

import base64
import io
import json
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image, ImageOps
from torchvision import transforms

from inferd_harness import DEMO_MODELS, REPO_ROOT
from pipeline_helpers import add_pipeline, copy_demo

IMAGES = REPO_ROOT / "tests" / "data" / "images"
MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
RESNET_PARAMS = {"resize": {"shorter_side": 256}, "center_crop": [224, 224], "mean": MEAN,
                 "std": STD}


def _preprocess_pipeline(repo: Path, name: str, params: dict, dims: list[int]) -> None:
    add_pipeline(repo, name, {
        "max_batch_size": 8,
        "inputs": [{"name": "image", "datatype": "BYTES", "dims": [], "content": "image"}],
        "outputs": [{"name": "pixels", "datatype": "FP32", "dims": dims}],
        "pipeline": {"steps": [{"name": "pre", "op": "image_to_tensor",
                                "inputs": {"image": "image"}, "outputs": {"tensor": "pixels"},
                                "params": params}]},
    })


@pytest.fixture(scope="module")
def server(tmp_path_factory, request):
    from tools.demo_models.pipelines import make_digits_png, make_resnet18_top5

    repo = tmp_path_factory.mktemp("repo")
    copy_demo(repo, "resnet18")
    copy_demo(repo, "digits")
    make_digits_png(repo, 0)
    make_resnet18_top5(repo)
    _preprocess_pipeline(repo, "imagenet_pre", RESNET_PARAMS, [3, 224, 224])
    _preprocess_pipeline(repo, "imagenet_pre_exif", {**RESNET_PARAMS, "exif_orientation": "apply"},
                         [3, 224, 224])
    _preprocess_pipeline(repo, "gray_nhwc", {"color": "gray", "resize": {"size": [64, 48]},
                                             "layout": "NHWC"}, [64, 48, 1])
    _preprocess_pipeline(repo, "small_limits", {**RESNET_PARAMS, "max_pixels": 1_000_000,
                                                "max_bytes": 200_000}, [3, 224, 224])
    from inferd_harness import InferdServer  # the harness the fixtures use

    log = tmp_path_factory.mktemp("log") / "inferd.log"
    server = InferdServer(repo, log, [])
    server.start()
    yield server
    server.stop()


def _tensor(server, model: str, data: bytes) -> np.ndarray:
    """The op's output for one file, through the real Triton client (binary BYTES in)."""
    import tritonclient.http as http

    client = http.InferenceServerClient(f"127.0.0.1:{server.port}")
    image = http.InferInput("image", [1], "BYTES")
    image.set_data_from_numpy(np.array([data], dtype=object), binary_data=True)
    result = client.infer(model, [image], outputs=[http.InferRequestedOutput("pixels",
                                                                             binary_data=True)])
    return result.as_numpy("pixels")[0]


def _reference(data: bytes, exif: bool = False) -> np.ndarray:
    image = Image.open(io.BytesIO(data))
    if exif:
        image = ImageOps.exif_transpose(image)
    pipeline = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224),
                                   transforms.ToTensor(), transforms.Normalize(MEAN, STD)])
    return pipeline(image.convert("RGB")).numpy()


PARITY_FILES = sorted(p.name for p in IMAGES.iterdir() if p.suffix in (".jpg", ".png", ".webp"))


@pytest.mark.parametrize("name", PARITY_FILES)
def test_tensors_equal_pil_and_torchvision(server, name):
    data = (IMAGES / name).read_bytes()
    got = _tensor(server, "imagenet_pre", data)
    want = _reference(data)
    difference = np.abs(got - want)
    # Bit-exact: the JPEG decode is libjpeg-turbo's accurate DCT and fancy upsampling as in
    # Pillow (Debian's 2.1.5 here, Pillow 13.0.0's bundled build there), the resampling
    # Pillow's reproduced operation for operation, the float arithmetic torchvision's order.
    assert difference.max() == 0, (name, difference.max(), np.mean(difference == 0))


@pytest.mark.parametrize("orientation", range(1, 9))
def test_exif_orientation_is_applied_as_imageops_exif_transpose(server, orientation):
    data = (IMAGES / f"exif_{orientation}.jpg").read_bytes()
    assert np.array_equal(_tensor(server, "imagenet_pre_exif", data), _reference(data, exif=True))
    # By default it is ignored, as torchvision's own image loader does.
    assert np.array_equal(_tensor(server, "imagenet_pre", data), _reference(data))


def test_gray_is_pils_l_conversion(server):
    data = (IMAGES / "odd_1001x333.jpg").read_bytes()
    got = _tensor(server, "gray_nhwc", data)
    gray = Image.open(io.BytesIO(data)).convert("L").resize((48, 64), Image.BILINEAR)
    want = (np.asarray(gray, dtype=np.float32) / np.float32(255))[..., None]
    assert np.array_equal(got, want)


def _resnet_answer(image: Image.Image) -> list[str]:
    module = torch.jit.load(str(DEMO_MODELS / "resnet18" / "1" / "model.pt")).eval()
    pixels = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224),
                                 transforms.ToTensor(), transforms.Normalize(MEAN, STD)])(image)
    with torch.inference_mode():
        probabilities = torch.softmax(module(pixels.unsqueeze(0)), dim=-1)[0]
    return probabilities.topk(5)


@pytest.mark.parametrize("sample", ["china.jpg", "flower.jpg"])
def test_resnet18_top5_answers_as_the_steps_run_by_hand(server, sample):
    import torchvision

    data = (Path(torchvision.__file__).parent.parent / "sklearn" / "datasets" / "images" /
            sample).read_bytes()
    resp = server.post("/predict?model=resnet18_top5", raw=data,
                       headers={"Content-Type": "image/jpeg"})
    assert resp.status_code == 200, resp.text
    answer = resp.json()
    scores, indices = _resnet_answer(Image.open(io.BytesIO(data)).convert("RGB"))
    categories = torchvision.models.ResNet18_Weights.IMAGENET1K_V1.meta["categories"]
    assert [entry["label"] for entry in answer["top_k"]] == [categories[i] for i in indices]
    assert answer["label"] == categories[int(indices[0])]
    np.testing.assert_allclose([entry["score"] for entry in answer["top_k"]], scores.numpy(),
                               atol=1e-5)


def test_digits_png_accuracy_equals_the_tensor_paths(server):
    accuracy = json.loads((DEMO_MODELS / "digits" / "accuracy.json").read_text())
    folder = Path(server.repository) / "digits_png" / "samples"
    files = sorted(folder.glob("*.png"))
    assert len(files) == accuracy["test_samples"]
    correct = 0
    for start in range(0, len(files), 60):
        batch = files[start:start + 60]
        body = {"input": [base64.b64encode(f.read_bytes()).decode() for f in batch]}
        resp = server.post("/predict?model=digits_png", body)
        assert resp.status_code == 200, resp.text
        for f, answer in zip(batch, resp.json()["output"]):
            correct += answer["label"] == f.stem.split("_")[1]
    assert correct / len(files) == pytest.approx(accuracy["test_accuracy"], abs=1e-12)


# --- front doors -------------------------------------------------------------------------

def _jpeg() -> bytes:
    return (IMAGES / "odd_225x224.jpg").read_bytes()


@pytest.mark.parametrize("door", ["raw_jpeg", "octet_stream", "base64", "data_url", "b64_object",
                                  "b64_list"])
def test_every_door_gives_the_same_answer(server, door):
    data = _jpeg()
    encoded = base64.b64encode(data).decode()
    want = server.post("/predict?model=resnet18_top5", raw=data,
                       headers={"Content-Type": "image/jpeg"}).json()
    if door == "octet_stream":
        resp = server.post("/predict?model=resnet18_top5", raw=data,
                           headers={"Content-Type": "application/octet-stream"})
    elif door == "base64":
        resp = server.post("/predict?model=resnet18_top5", {"input": encoded})
    elif door == "data_url":
        resp = server.post("/predict?model=resnet18_top5",
                           {"input": "data:image/jpeg;base64," + encoded})
    elif door == "b64_object":
        resp = server.post("/predict?model=resnet18_top5", {"input": {"b64": encoded}})
    elif door == "b64_list":
        resp = server.post("/predict?model=resnet18_top5", {"input": [encoded, encoded]})
        assert resp.status_code == 200, resp.text
        rows = resp.json()["output"]
        assert len(rows) == 2
        for row in rows:  # a batch of two: the same labels, scores to float rounding
            assert [e["label"] for e in row["top_k"]] == [e["label"] for e in want["top_k"]]
            np.testing.assert_allclose([e["score"] for e in row["top_k"]],
                                       [e["score"] for e in want["top_k"]], rtol=1e-4)
        return
    else:
        resp = server.post("/predict?model=resnet18_top5", raw=data,
                           headers={"Content-Type": "image/jpeg"})
    assert resp.status_code == 200, resp.text
    assert resp.json() == want


@pytest.mark.parametrize("model, body, content_type, fragment", [
    ("resnet18_top5", b"some text", "text/plain", "takes an image"),
    ("resnet18", b"\xff\xd8\xff", "image/jpeg", "takes FP32 tensors"),
    ("resnet18_top5", json.dumps({"input": "not base64!"}).encode(), "application/json",
     "is not base64"),
    # Any other media type is read as JSON (curl -d sends application/x-www-form-urlencoded).
    ("resnet18_top5", b"<html/>", "text/html", "JSON"),
])
def test_a_wrong_kind_of_body_is_a_400_saying_what_to_send(server, model, body, content_type,
                                                          fragment):
    resp = server.post(f"/predict?model={model}", raw=body, headers={"Content-Type": content_type})
    assert resp.status_code == 400, resp.text
    assert fragment in resp.json()["error"], resp.text


# --- hostile images ----------------------------------------------------------------------

def _png(width: int, height: int, rows: bytes | None = None) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    raw = rows if rows is not None else b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0,
                                                             0, 0)) +
            chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def _jpeg_claiming(width: int, height: int) -> bytes:
    """A real JPEG whose SOF0 header is rewritten to claim another size."""
    data = bytearray(_jpeg())
    at = 2
    while data[at + 1] != 0xC0:  # walk the segments to the baseline frame header (SOF0)
        at += 2 + struct.unpack_from(">H", data, at + 2)[0]
    struct.pack_into(">HH", data, at + 5, height, width)
    return bytes(data)


HOSTILE = {
    "not an image": (b"GIF89a" + b"\x00" * 64, "not a JPEG, PNG or WebP image"),
    "truncated JPEG": (_jpeg()[: len(_jpeg()) // 2], "corrupt or truncated"),
    "corrupt JPEG": (b"\xff\xd8\xff\xdb" + bytes(range(256)) * 8, "not a readable JPEG"),
    "JPEG header 65000x65000": (_jpeg_claiming(65000, 65000), "pixels"),
    "PNG bomb header": (_png(60000, 60000, rows=b"\x00" * 10), "pixels"),
    "100000x1 PNG": (_png(100000, 1), "max_side"),
    # Small enough to decode, but shorter side 256 would make it 2,560,000 x 256.
    "10000x1 PNG resized": (_png(10000, 1), "max_pixels"),
    "over max_bytes": (b"\xff\xd8\xff" + b"\x00" * 300_000, "max_bytes"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_images_are_a_400_and_the_server_keeps_serving(server, case):
    data, fragment = HOSTILE[case]
    resp = server.post("/predict?model=small_limits", raw=data,
                       headers={"Content-Type": "image/png"})
    assert resp.status_code == 400, (case, resp.status_code, resp.text[:300])
    message = resp.json()["error"]
    assert fragment in message and "element 0" in message, (case, message)
    ok = server.post("/predict?model=resnet18_top5", raw=_jpeg(),
                     headers={"Content-Type": "image/jpeg"})
    assert ok.status_code == 200, ok.text
