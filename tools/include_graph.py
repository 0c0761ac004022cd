"""The include graph between src/core's folders, and the check that it runs one way only.

    python3 tools/include_graph.py           folder -> folder edges, with their include counts
    python3 tools/include_graph.py --check   fails (exit 1) when a core file includes a layer
                                             that is not below its own, or an HTTP frontend
                                             file a job above its own (HTTP_LAYERS)

Every `#include "core/..."` line of a file under src/core counts once. The layers are a CMake
library each (src/CMakeLists.txt, "The core's layers"), linked to the layers in LAYERS below;
a link does not stop a header from being included, so this check does, and ctest runs it
(core_layers) as does tests/integration/test_core_layers.py. Keep LAYERS and the CMake links
the same.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"

# Each layer of the core and the layers it is built on (its CMake target links exactly these),
# bottom to top. A file may include its own layer and everything its layers are built on,
# transitively; never a layer above, nor a sibling (memory and scheduling know nothing of each
# other, nor do repository and pipeline).
LAYERS: dict[str, tuple[str, ...]] = {
    "core/types": (),
    "core/config": ("core/types",),
    "core/backend": ("core/config",),
    "core/memory": ("core/types",),
    "core/scheduling": ("core/backend",),
    "core/model": ("core/scheduling",),
    "core/repository": ("core/model", "core/memory"),
    "core/pipeline": ("core/model",),
    "core/service": ("core/repository", "core/pipeline"),
}
# Helpers for the core's unit tests (a fake backend, temporary folders): built on the backend
# interface, and included only by *_test.cc files and by each other.
TEST_SUPPORT = "core/testing"
TEST_SUPPORT_BASE = ("core/backend",)

# The HTTP frontend split by job, top to bottom: transport (sockets, sessions) <- routing (the
# route table, access classification) <- handlers <- codecs (JSON and binary bodies) <- the
# folder's own files, the vocabulary all of them share (http_types, session_request,
# handler_context). One library (inferd_http), so only this check holds the direction.
HTTP_LAYERS: dict[str, tuple[str, ...]] = {
    "frontends/http": (),
    "frontends/http/codecs": ("frontends/http",),
    "frontends/http/handlers": ("frontends/http/codecs",),
    "frontends/http/routing": ("frontends/http/handlers",),
    "frontends/http/transport": ("frontends/http/routing",),
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"(core/[^"]+)"', re.MULTILINE)
HTTP_INCLUDE = re.compile(r'^\s*#\s*include\s+"(frontends/http/[^"]+)"', re.MULTILINE)


def core_files(src: Path = SRC) -> list[Path]:
    return sorted(p for p in (src / "core").rglob("*") if p.suffix in (".h", ".cc"))


def folder_of(path: str) -> str:
    return path.rsplit("/", 1)[0]


def includes(src: Path = SRC):
    """(including file, its folder, included path) for every core include of a core file."""
    for path in core_files(src):
        name = path.relative_to(src).as_posix()
        for included in INCLUDE.findall(path.read_text(errors="replace")):
            yield name, folder_of(name), included


def edges(src: Path = SRC) -> Counter:
    return Counter((folder, folder_of(included)) for _, folder, included in includes(src))


def below(layer: str, layers: dict[str, tuple[str, ...]] = LAYERS) -> set[str]:
    """The layers `layer` is built on, transitively (not itself)."""
    seen: set[str] = set()
    todo = list(layers[layer])
    while todo:
        base = todo.pop()
        if base not in seen:
            seen.add(base)
            todo.extend(layers[base])
    return seen


def http_violations(src: Path = SRC) -> list[str]:
    """One line per HTTP frontend file outside every job and per include that runs up."""
    found = []
    for path in sorted((src / "frontends" / "http").rglob("*")):
        if path.suffix not in (".h", ".cc"):
            continue
        name = path.relative_to(src).as_posix()
        folder = folder_of(name)
        if folder not in HTTP_LAYERS:
            found.append(f"{name}: in no job (tools/include_graph.py HTTP_LAYERS)")
            continue
        allowed = {folder} | below(folder, HTTP_LAYERS)
        for included in HTTP_INCLUDE.findall(path.read_text(errors="replace")):
            target = folder_of(included)
            if target not in allowed:
                found.append(f"{name}: #include \"{included}\": {folder} is below {target}")
    return found


def violations(src: Path = SRC) -> list[str]:
    """One line per core file outside every layer and per include that runs up or sideways."""
    found = []
    for path in core_files(src):
        folder = folder_of(path.relative_to(src).as_posix())
        if folder not in LAYERS and folder != TEST_SUPPORT:
            found.append(f"{path.relative_to(src)}: in no layer (tools/include_graph.py LAYERS)")
    for name, folder, included in includes(src):
        target = folder_of(included)
        if folder == TEST_SUPPORT:
            allowed = {TEST_SUPPORT}
            for base in TEST_SUPPORT_BASE:
                allowed |= {base} | below(base)
        elif folder in LAYERS:
            allowed = {folder} | below(folder)
            if name.endswith("_test.cc"):
                allowed.add(TEST_SUPPORT)
        else:
            continue  # reported above
        if target not in allowed:
            if target == TEST_SUPPORT:
                why = "test support, for *_test.cc files only"
            elif target in LAYERS and folder in LAYERS and folder in below(target):
                why = f"{target} is built on {folder}: the include runs back up"
            else:
                why = f"{folder} is not built on {target}"
            found.append(f"{name}: #include \"{included}\": {why}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="fail when an include runs against the layers")
    parser.add_argument("--src", type=Path, default=SRC, help="the source root (default: src/)")
    args = parser.parse_args()
    if args.check:
        found = violations(args.src)
        http_found = http_violations(args.src)
        for line in found + http_found:
            print(line, file=sys.stderr)
        if found:
            print(f"{len(found)} include(s) against the core's layers", file=sys.stderr)
        if http_found:
            print(f"{len(http_found)} include(s) against the HTTP frontend's jobs",
                  file=sys.stderr)
        if found or http_found:
            return 1
        print(f"core layers: {len(LAYERS)} layers, every include runs down; "
              f"HTTP frontend: {len(HTTP_LAYERS)} jobs, every include runs down")
        return 0
    graph = edges(args.src)
    for (source, target), count in sorted(graph.items()):
        print(f"{source:18} -> {target:18} {count:4}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
