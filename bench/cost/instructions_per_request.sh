#!/usr/bin/env bash
# Instructions per request by thread and by function, counted by valgrind's callgrind while
# 3,000 requests (8 keep-alive clients) reach mlp_scorer: POST /predict, or with
# ENDPOINT=v2 the same 256 numbers as a KServe v2 POST /v2/models/mlp_scorer/infer. Instruction counts
# do not depend on what else the machine runs, so two binaries compare exactly even on a
# busy machine. Startup under valgrind takes about a minute.
#
#   bench/cost/instructions_per_request.sh [BINARY] [TOP_FUNCTIONS]
#   ENDPOINT=v2 bench/cost/instructions_per_request.sh [BINARY] [TOP_FUNCTIONS]
#
# JSON_OUT=FILE also writes the printed rows (name, instructions per request) to FILE
# (bench/cost/http_cost.sh reads it to write bench/results/<date>-http-cost.md).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$here/../.."
BIN="$(realpath "${1:-$root/build/inferd}")"; TOP="${2:-15}"
export WORK="${WORK:-/tmp/inferd-cost}"; PORT="${PORT:-18090}"; REQUESTS=3000
"$here/make_repo.sh"
cd "$WORK"
case "${ENDPOINT:-predict}" in
  predict) target="/predict?model=mlp_scorer"; body=body.json ;;
  v2) target="/v2/models/mlp_scorer/infer"; body=body_v2.json ;;
  *) echo "ENDPOINT must be predict or v2" >&2; exit 2 ;;
esac
rm -f callgrind.out*
# Without busy polling: under valgrind a polling thread's empty loops would count as work.
valgrind --tool=callgrind --callgrind-out-file=callgrind.out "$BIN" --model-repository repo \
  --http-port "$PORT" --log-level warn --access-log false --busy-poll-us 0 > valgrind.log 2>&1 &
pid=$!
# Waited for, so that the next probe (compare_instructions.sh runs four) finds the port free.
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
# Startup under valgrind loads LibTorch instrumented: minutes, more on a busy machine.
for _ in $(seq "$(( ${READY_WAIT_S:-600} * 2 ))"); do
  curl -sf -o /dev/null "localhost:$PORT/v2/health/ready" && break; sleep 0.5
done
curl -sf -o /dev/null "localhost:$PORT/v2/health/ready" || { echo "inferd not ready" >&2; exit 1; }
wrk -t1 -c8 -d3s -s "$root/bench/predict.lua" "http://127.0.0.1:$PORT$target" \
  -- "$body" > /dev/null  # warm-up: first-touch costs stay out of the count
callgrind_control -z "$pid" > /dev/null 2>&1
python3 - "$PORT" "$REQUESTS" "$target" "$body" <<'PY'
import http.client, sys, threading
port, total, target = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
body = open(sys.argv[4], "rb").read()
def client(n):
    connection = http.client.HTTPConnection("127.0.0.1", port)
    for _ in range(n):
        connection.request("POST", target, body,
                           {"Content-Type": "application/json"})
        answer = connection.getresponse()
        answer.read()
        assert answer.status == 200, answer.status
threads = [threading.Thread(target=client, args=(total // 8,)) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
PY
callgrind_control -d "$pid" > /dev/null 2>&1
dump="$(ls -t callgrind.out.* | head -1)"
echo "$BIN: instructions per request ($REQUESTS x POST $target; inclusive for threads, exclusive for functions)"
# sed -n, not head: head stops reading early, and under pipefail the SIGPIPE it leaves the
# commands before it with fails the run after the output is written.
callgrind_annotate --threshold=100 "$dump" 2>/dev/null | sed -n '/file:function/,$p' | tail -n +3 \
  | sed -n "1,$((TOP + 2))p" | python3 -c '
import json, re, sys
n = int(sys.argv[1])
rows = []
for line in sys.stdin:
    m = re.match(r"\s*([\d,]+)\s+\(\s*([\d.]+)%\)\s+(.*)", line)
    if not m: continue
    name = re.sub(r"\s*\[/.*", "", m.group(3))
    name = re.sub(r"^\?\?\?:", "", name)
    if "start_thread" in name or "clone.S" in name: continue
    count = int(m.group(1).replace(",", "")) / n
    rows.append([name, count])
    print(f"{count:>12,.0f}  {name[:110]}")
if sys.argv[2]:
    json.dump({"requests": n, "target": sys.argv[3], "rows": rows}, open(sys.argv[2], "w"))
' "$REQUESTS" "${JSON_OUT:-}" "$target"
