"""The move of src/core's files into its layers (issue 31), as a table and the rewrite it needs.

    python3 tools/core_layers_moves.py --move        git mv every file of MOVES, then rewrite
                                                      every tracked text file (below)
    python3 tools/core_layers_moves.py FILE...        rewrite only these files: a branch made
                                                      before the move runs this on its own new
                                                      or changed files after merging it

A rewrite replaces each old path (`core/model_config.h`, `src/core/tensor.cc`, a stem such as
`core/inference_path` in prose) with the new one, and a moved header's include guard with the
one its new path gives. Nothing else changes; run clang-format afterwards (an include's new
path may sort elsewhere in its block).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Old stem (under src/, without .h/.cc/_test.cc) -> new folder under src/.
MOVES: dict[str, str] = {
    # Vocabulary: tensors, data types, devices, precision, which version of which model.
    "core/data_type": "core/types",
    "core/tensor": "core/types",
    "core/bytes_tensor": "core/types",
    "core/device": "core/types",
    "core/precision": "core/types",
    "core/version_key": "core/types",
    # What a model is declared to be: config.yaml, lifecycle and traffic rules, pipeline specs.
    "core/model_config": "core/config",
    "core/config_field_reader": "core/config",
    "core/repository/lifecycle_config": "core/config",
    "core/repository/lifecycle_config_yaml": "core/config",
    "core/repository/traffic_rules": "core/config",
    "core/repository/version_policy": "core/config",
    "core/repository/version_dirs": "core/config",
    "core/pipeline/pipeline_spec": "core/config",
    "core/pipeline/pipeline_spec_parser": "core/config",
    "core/pipeline/pipeline_graph": "core/config",
    # The contract with the engines: what they are asked and the interfaces they implement.
    "core/backend": "core/backend",
    "core/async_backend_model": "core/backend",
    "core/config_completer": "core/backend",
    "core/generation": "core/backend",
    "core/infer_request": "core/backend",
    # Execution: the observer hooks ModelStats reports to.
    "core/model_observer": "core/scheduling",
    # One loaded version as it serves.
    "core/served_model": "core/model",
    "core/response_cache": "core/model",
    "core/request_validator": "core/model",
    "core/infer_callbacks": "core/model",
    # The inference service every frontend calls.
    "core/inference_path": "core/service",
    "core/infer_as_generation": "core/service",
}


def new_stem(old: str) -> str:
    return MOVES[old] + "/" + old.rsplit("/", 1)[1]


def files_of(old: str) -> list[str]:
    """The stem's files: old.h, old.cc and its tests (old_test.cc, old_precision_test.cc)."""
    folder, name = (ROOT / "src" / old).parent, old.rsplit("/", 1)[1]
    return [path.relative_to(ROOT / "src").as_posix() for path in sorted(folder.iterdir())
            if path.name in (name + ".h", name + ".cc")
            or (path.name.startswith(name + "_") and path.name.endswith("_test.cc"))]


# An old path where it stands alone: not inside a longer name, not a folder of that name.
PATTERN = re.compile(
    r"(?<![\w])(" + "|".join(re.escape(old) for old in sorted(MOVES, key=len, reverse=True)) +
    r")(?=\.h\b|\.cc\b|_\w*test\.cc\b|[^\w/]|$)", re.MULTILINE)


def guard(path: str) -> str:
    return "INFERD_" + re.sub(r"[^A-Za-z0-9]", "_", path).upper() + "_"


GUARDS = {guard(old + ".h"): guard(new_stem(old) + ".h") for old in MOVES}
GUARD_PATTERN = re.compile(r"\b(" + "|".join(re.escape(g) for g in GUARDS) + r")(?!\w)")


def rewrite(text: str) -> str:
    text = PATTERN.sub(lambda m: new_stem(m.group(1)), text)
    return GUARD_PATTERN.sub(lambda m: GUARDS[m.group(1)], text)


def rewrite_file(path: Path) -> bool:
    try:
        text = path.read_text()
    except (UnicodeDecodeError, IsADirectoryError):
        return False
    new = rewrite(text)
    if new != text:
        path.write_text(new)
        return True
    return False


def move_all() -> None:
    # A test such as pipeline_spec_parser_test.cc matches two stems; both move it alike.
    targets: dict[str, str] = {}
    for old in MOVES:
        for name in files_of(old):
            target = MOVES[old] + "/" + name.rsplit("/", 1)[1]
            assert targets.setdefault(name, target) == target, name
    for name, target in targets.items():
        (ROOT / "src" / target).parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "mv", "src/" + name, "src/" + target], cwd=ROOT, check=True)
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                             capture_output=True).stdout.decode().split("\0")
    changed = 0
    for name in tracked:
        path = ROOT / name
        skip = name in ("tools/core_layers_moves.py", "") or path.is_symlink()
        if not skip and path.is_file():
            changed += rewrite_file(path)
    print(f"moved {len(MOVES)} stems; rewrote {changed} files")


def main() -> int:
    if sys.argv[1:] == ["--move"]:
        move_all()
        return 0
    if not sys.argv[1:]:
        print(__doc__, file=sys.stderr)
        return 2
    for name in sys.argv[1:]:
        if rewrite_file(Path(name)):
            print(f"rewrote {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
