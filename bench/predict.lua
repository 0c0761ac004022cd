-- wrk script: POST one fixed JSON body, count non-2xx answers, print a machine-readable result.
--
--   wrk -t1 -c16 -d10s --latency -s bench/predict.lua 'http://127.0.0.1:8080/predict?model=mlp_scorer' -- body.json
--   PREDICT_BODY=body.json wrk ... -s bench/predict.lua URL
--
-- The body file comes from the first script argument (after `--`) or $PREDICT_BODY. Its
-- Content-Type is application/json unless $PREDICT_CONTENT_TYPE says otherwise (image/jpeg);
-- $PREDICT_INFERENCE_HEADER_LENGTH, when set, is sent as Inference-Header-Content-Length
-- (a KServe binary-tensor body).
-- wrk itself only counts status >= 400 as errors; this script counts every non-2xx
-- answer (a 3xx is not a prediction either) through the response() hook, which costs a
-- little per response but keeps the error count honest. The last line of output is
--   BENCH_RESULT {"requests":..,"errors":..,"p50_us":..,...}
-- where errors = non-2xx + socket errors (connect, read, write, timeout); run_bench.py
-- parses it.

local threads = {}
non2xx = 0

local function read_file(path)
   local f, err = io.open(path, "rb")
   if not f then
      error("predict.lua: cannot open body file: " .. tostring(err))
   end
   local data = f:read("*a")
   f:close()
   return data
end

-- Runs once per thread in the main state, before the run: remembers each thread so
-- done() can collect its non-2xx count.
function setup(thread)
   table.insert(threads, thread)
end

-- Runs in each thread's own Lua state before wrk builds its (static) request.
function init(args)
   local path = args[1] or os.getenv("PREDICT_BODY")
   if not path or path == "" then
      error("predict.lua: give the body file after `--` or in PREDICT_BODY")
   end
   wrk.method = "POST"
   wrk.body = read_file(path)
   -- Raw bodies (an image) say what they are; KServe's binary extension adds its header.
   wrk.headers["Content-Type"] = os.getenv("PREDICT_CONTENT_TYPE") or "application/json"
   local header_length = os.getenv("PREDICT_INFERENCE_HEADER_LENGTH")
   if header_length and header_length ~= "" then
      wrk.headers["Inference-Header-Content-Length"] = header_length
   end
end

function response(status, headers, body)
   if status < 200 or status > 299 then
      non2xx = non2xx + 1
   end
end

function done(summary, latency, requests)
   local bad = 0
   for _, thread in ipairs(threads) do
      bad = bad + (thread:get("non2xx") or 0)
   end
   local e = summary.errors
   local socket_errors = e.connect + e.read + e.write + e.timeout
   local seconds = summary.duration / 1e6
   io.write(string.format(
      'BENCH_RESULT {"requests":%d,"duration_us":%d,"qps":%.3f,"errors":%d,"non2xx":%d,' ..
      '"socket_errors":{"connect":%d,"read":%d,"write":%d,"timeout":%d},"bytes":%d,' ..
      '"p50_us":%d,"p90_us":%d,"p99_us":%d,"mean_us":%.1f,"max_us":%d}\n',
      summary.requests, summary.duration, summary.requests / seconds, bad + socket_errors, bad,
      e.connect, e.read, e.write, e.timeout, summary.bytes,
      latency:percentile(50), latency:percentile(90), latency:percentile(99),
      latency.mean, latency.max))
end
