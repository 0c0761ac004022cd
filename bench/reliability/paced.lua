-- wrk script for the soak: POST one fixed body, with each connection pausing PACED_DELAY_MS
-- between its requests (wrk's delay() hook), so that N connections offer a steady rate
-- below capacity. Counts every non-2xx answer. The last line of output is
--   SOAK_RESULT {"requests":..,"errors":..,"non2xx":..,"p50_us":..,"p99_us":..,...}
--
--   PACED_BODY=body.json PACED_DELAY_MS=5 wrk -t1 -c150 -d30s -s bench/reliability/paced.lua URL

local threads = {}
non2xx = 0
local delay_ms = tonumber(os.getenv("PACED_DELAY_MS") or "0")

function setup(thread)
   table.insert(threads, thread)
end

function init(args)
   local f = assert(io.open(os.getenv("PACED_BODY"), "rb"))
   wrk.method = "POST"
   wrk.body = f:read("*a")
   f:close()
   wrk.headers["Content-Type"] = "application/json"
end

if delay_ms > 0 then
   function delay()
      return delay_ms
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
   io.write(string.format(
      'SOAK_RESULT {"requests":%d,"duration_us":%d,"errors":%d,"non2xx":%d,' ..
      '"socket_errors":%d,"p50_us":%d,"p99_us":%d,"max_us":%d}\n',
      summary.requests, summary.duration, bad + e.connect + e.read + e.write + e.timeout, bad,
      e.connect + e.read + e.write + e.timeout, latency:percentile(50),
      latency:percentile(99), latency.max))
end
