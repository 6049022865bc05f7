-- wrk script: POST /plants with a new id on every request, then one JSON line of results.
-- Arguments (after --): <token> <first id> <threads>. Thread i of n sends first+i, first+i+n, …
local threads = {}

function setup(thread)
  thread:set("index", #threads)
  table.insert(threads, thread)
end

function init(args)
  headers = {
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. args[1],
  }
  nextId = tonumber(args[2]) + index
  stride = tonumber(args[3])
end

function request()
  local id = nextId
  nextId = nextId + stride
  local body = string.format('{"id":%d,"name":"Monstera deliciosa","tag":"indoor"}', id)
  return wrk.format("POST", "/plants", headers, body)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"durationUs":%d,"bytes":%d,"non2xx":%d,"connectErrors":%d,"readErrors":%d,' ..
      '"writeErrors":%d,"timeouts":%d,"p50Us":%d,"p90Us":%d,"p99Us":%d,"maxUs":%d,"meanUs":%.1f}\n',
    summary.requests, summary.duration, summary.bytes, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean
  ))
end
