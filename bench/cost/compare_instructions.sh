#!/usr/bin/env bash
# Two inferd binaries side by side under bench/cost/instructions_per_request.sh, for each of
# POST /predict and POST /v2/models/mlp_scorer/infer, one after the other in the same run.
# Writes a Markdown report with the per-request instruction counts of the rows both runs
# share (threads inclusive, functions exclusive), and keeps the probes' raw output beside it.
#
#   bench/cost/compare_instructions.sh OLD_BINARY NEW_BINARY REPORT.md [TOP_FUNCTIONS]
#
# Callgrind counts instructions, which do not depend on what else the machine runs, so the
# comparison holds on a busy shared machine (each probe takes a few minutes under valgrind).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OLD="$(realpath "$1")"; NEW="$(realpath "$2")"; REPORT="$3"; TOP="${4:-25}"
raw="${REPORT%.md}.raw.txt"
# Each probe's output is kept as REPORT.<endpoint>.<old|new>.txt; one already there is reused
# (delete it to measure again).
: > "$raw"
for endpoint in predict v2; do
  for which in old new; do
    binary="$OLD"; [ "$which" = new ] && binary="$NEW"
    probe="${REPORT%.md}.$endpoint.$which.txt"
    [ -s "$probe" ] || ENDPOINT="$endpoint" "$here/instructions_per_request.sh" "$binary" "$TOP" \
      > "$probe"
    { echo "### $endpoint $which"; cat "$probe"; } >> "$raw"
  done
done
python3 - "$raw" "$REPORT" "$OLD" "$NEW" "$TOP" <<'PY'
import re, sys
raw, report, old, new, top = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
runs, key = {}, None
for line in open(raw):
    if line.startswith("### "):
        key = tuple(line[4:].split())
        runs[key] = {}
        continue
    m = re.match(r"\s*([\d,]+)\s+(.*\S)", line)
    if key and m and not line.startswith("/"):
        runs[key][m.group(2)] = int(m.group(1).replace(",", ""))
out = ["# Instructions per request: old and new binary side by side", "",
       f"Written by `bench/cost/compare_instructions.sh OLD NEW {report} {top}` "
       "(callgrind; 3,000 requests from 8 keep-alive clients to mlp_scorer after a 3 s warm-up;",
       "threads inclusive, functions exclusive; raw probe output in "
       f"`{raw.split('/')[-1]}`).", "", f"- old: `{old}`", f"- new: `{new}`", ""]
for endpoint, path in (("predict", "POST /predict?model=mlp_scorer"),
                       ("v2", "POST /v2/models/mlp_scorer/infer")):
    a, b = runs.get((endpoint, "old"), {}), runs.get((endpoint, "new"), {})
    out += [f"## {path}", "", "| | old | new | new - old |", "|---|---:|---:|---:|"]
    for name in [n for n in a if n in b]:
        out.append(f"| `{name[:90]}` | {a[name]:,} | {b[name]:,} | {b[name] - a[name]:+,} |")
    only = [n for n in list(a) + list(b) if (n in a) != (n in b)]
    if only:
        out += ["", "In the top list of one run only: " +
                ", ".join(f"`{n[:60]}` ({'old' if n in a else 'new'} {a.get(n, b.get(n)):,})"
                          for n in only)]
    out.append("")
open(report, "w").write("\n".join(out))
print(f"wrote {report}")
PY
