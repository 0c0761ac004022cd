"""src/core is built in layers (types <- config <- backend <- scheduling <- model <- repository,
pipeline <- service; memory on types): no core file may include a layer above its own or a
sibling. Each layer's CMake library links only the ones below, but with one include root an
include running back up still compiles, so this reads the includes (tools/include_graph.py).
Before issue 31, core/model_config.h included core/repository/lifecycle_config.h and
generation.h the scheduler's model_stats.h, and the four folders built into one target."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import include_graph  # noqa: E402


def test_no_core_include_runs_back_up():
    assert include_graph.violations() == []


def test_every_layer_is_a_cmake_library_linking_exactly_its_bases():
    cmake = (ROOT / "src" / "CMakeLists.txt").read_text()
    for layer, bases in include_graph.LAYERS.items():
        target = "inferd_" + layer.replace("/", "_")
        assert f"add_library({target} STATIC" in cmake, target
        links = re.findall(rf"target_link_libraries\({target}\s([^)]*)\)", cmake)
        assert len(links) == 1, f"{target}: one target_link_libraries call"
        linked = set(re.findall(r"\binferd_core_\w+", links[0]))
        assert linked == {"inferd_" + base.replace("/", "_") for base in bases}, target


def test_an_include_running_back_up_is_found(tmp_path):
    # A copy of src/core where the bottom layer includes the top one.
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "core", src / "core")
    tensor = src / "core" / "types" / "tensor.h"
    tensor.write_text(tensor.read_text().replace(
        '#include "core/types/data_type.h"',
        '#include "core/types/data_type.h"\n#include "core/service/inference_path.h"', 1))
    found = include_graph.violations(src)
    assert found == ['core/types/tensor.h: #include "core/service/inference_path.h": '
                     'core/service is built on core/types: the include runs back up']
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "include_graph.py"), "--check",
                          "--src", str(src)], capture_output=True, text=True)
    assert run.returncode == 1 and "runs back up" in run.stderr


def test_a_sibling_include_is_found(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "core", src / "core")
    budget = src / "core" / "memory" / "memory_budget.cc"
    budget.write_text('#include "core/scheduling/model_stats.h"\n' + budget.read_text())
    assert include_graph.violations(src) == [
        'core/memory/memory_budget.cc: #include "core/scheduling/model_stats.h": '
        'core/memory is not built on core/scheduling']


def test_no_http_frontend_include_runs_up_a_job():
    # transport <- routing <- handlers <- codecs <- the folder's shared files (issue 31).
    assert include_graph.http_violations() == []


def test_an_http_include_running_up_is_found(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "frontends" / "http", src / "frontends" / "http")
    codec = src / "frontends" / "http" / "codecs" / "error_shape.h"
    codec.write_text('#include "frontends/http/routing/router.h"\n' + codec.read_text())
    assert include_graph.http_violations(src) == [
        'frontends/http/codecs/error_shape.h: #include "frontends/http/routing/router.h": '
        'frontends/http/codecs is below frontends/http/routing']
