"""The split of src/frontends/http by job (issue 31), as a table and the rewrite it needs.

    python3 tools/http_folders_moves.py --move       git mv every file of MOVES, then rewrite
                                                      every tracked text file (below)
    python3 tools/http_folders_moves.py FILE...      rewrite only these files: a branch made
                                                      before the move runs this on its own new
                                                      or changed files after merging it

A rewrite replaces each old path (`frontends/http/router.h`, `src/frontends/http/router.cc`,
a stem such as `frontends/http/router` in prose) with the new one, and a moved header's
include guard with the one its new path gives. Nothing else changes; run clang-format
afterwards (an include's new path may sort elsewhere in its block). The core's split into
layers was made the same way (git history: tools/core_layers_moves.py).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Old stem (under src/, without .h/.cc/_test.cc) -> new folder under src/. What stays in
# frontends/http/ itself is what every part uses: http_types (replies, responders, the request
# view), session_request (the access-log record a responder exposes) and handler_context (what
# handlers share).
MOVES: dict[str, str] = {
    # transport/: the socket side: the Beast server, a connection's session and its streamed
    # replies, the streams open at shutdown.
    "frontends/http/http_server": "frontends/http/transport",
    "frontends/http/http_session": "frontends/http/transport",
    "frontends/http/http_session_stream": "frontends/http/transport",
    "frontends/http/response_head": "frontends/http/transport",
    "frontends/http/open_streams": "frontends/http/transport",
    # routing/: which handler answers: the one route table, its patterns, access classes.
    "frontends/http/router": "frontends/http/routing",
    "frontends/http/http_routes": "frontends/http/routing",
    "frontends/http/route_pattern": "frontends/http/routing",
    "frontends/http/route_access": "frontends/http/routing",
    "frontends/http/route_table": "frontends/http/routing",
    "frontends/http/access_reply": "frontends/http/routing",
    # codecs/: bodies in and out: JSON/binary tensors, multipart, OpenAI/Anthropic/KServe-
    # generate requests and replies, the shared field rules, the error shape per path, query
    # strings.
    "frontends/http/kserve_codec": "frontends/http/codecs",
    "frontends/http/json_tensor_codec": "frontends/http/codecs",
    "frontends/http/binary_tensor_reader": "frontends/http/codecs",
    "frontends/http/infer_body": "frontends/http/codecs",
    "frontends/http/multipart_form": "frontends/http/codecs",
    "frontends/http/generation_codec": "frontends/http/codecs",
    "frontends/http/generation_codec_tools": "frontends/http/codecs",
    "frontends/http/generation_chat_messages": "frontends/http/codecs",
    "frontends/http/generation_json": "frontends/http/codecs",
    "frontends/http/generation_reply": "frontends/http/codecs",
    "frontends/http/generation_stream": "frontends/http/codecs",
    "frontends/http/anthropic_codec": "frontends/http/codecs",
    "frontends/http/embedding_codec": "frontends/http/codecs",
    "frontends/http/rerank_codec": "frontends/http/codecs",
    "frontends/http/openai_error": "frontends/http/codecs",
    "frontends/http/request_fields": "frontends/http/codecs",
    "frontends/http/lora_field": "frontends/http/codecs",
    "frontends/http/predict_raw_input": "frontends/http/codecs",
    "frontends/http/predict_answer": "frontends/http/codecs",
    "frontends/http/error_shape": "frontends/http/codecs",
    "frontends/http/query_string": "frontends/http/codecs",
    # handlers/: one function per endpoint: decode with a codec, call the inference service or
    # the manager, encode.
    "frontends/http/anthropic_handler": "frontends/http/handlers",
    "frontends/http/dashboard_handler": "frontends/http/handlers",
    "frontends/http/generation_handlers": "frontends/http/handlers",
    "frontends/http/kserve_handlers": "frontends/http/handlers",
    "frontends/http/logging_handler": "frontends/http/handlers",
    "frontends/http/metrics_handler": "frontends/http/handlers",
    "frontends/http/model_config_handler": "frontends/http/handlers",
    "frontends/http/plain_predict_handler": "frontends/http/handlers",
    "frontends/http/repository_handlers": "frontends/http/handlers",
    "frontends/http/rerank_handler": "frontends/http/handlers",
    "frontends/http/shared_memory_handlers": "frontends/http/handlers",
    "frontends/http/stats_handler": "frontends/http/handlers",
    "frontends/http/tfserving_handler": "frontends/http/handlers",
    "frontends/http/static_files": "frontends/http/handlers",
    "frontends/http/generation_stats": "frontends/http/handlers",
    "frontends/http/lifecycle_stats": "frontends/http/handlers",
    "frontends/http/openai_request_prologue": "frontends/http/handlers",
    "frontends/http/index_row": "frontends/http/handlers",
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
        skip = name in ("tools/http_folders_moves.py", "") or path.is_symlink()
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
