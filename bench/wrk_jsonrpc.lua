-- JSON-RPC load for wrk: POSTs one request body with a fresh id each time and checks every answer.
--
--   wrk -t1 -c8 -d5s --latency -H 'Accept: ...' -s bench/wrk_jsonrpc.lua URL -- BODY [SESSION ...]
--
-- BODY is a JSON-RPC request object without its "id" (the id is put in front of its first
-- member). The headers come from wrk's -H. Each SESSION is an Mcp-Session-Id from an
-- initialize done beforehand; requests take them in turn, so each session carries about one
-- connection's share of the load. Answers that are not 2xx, and JSON-RPC errors or tool
-- results flagged isError, are counted; done() prints one "RESULT key=value ..." line for the
-- benchmark to read, and the first bad answer after "FIRST_BAD".

local threads = {}

function setup(thread)
  thread:set("thread_number", #threads + 1)
  table.insert(threads, thread)
end

local rest, sessions, headers, sent = nil, {}, {}, 0
bad_status, rpc_errors, first_bad = 0, 0, nil

function init(args)
  rest = string.sub(args[1], 2)
  for i = 2, #args do
    sessions[#sessions + 1] = args[i]
  end
  for name, value in pairs(wrk.headers) do
    headers[name] = value
  end
end

function request()
  sent = sent + 1
  -- Unique across the threads of this process: the thread number above the counter.
  local id = thread_number * 1000000000 + sent
  if #sessions > 0 then
    headers["Mcp-Session-Id"] = sessions[sent % #sessions + 1]
  end
  return wrk.format("POST", nil, headers, '{"id":' .. id .. "," .. rest)
end

local function bad(kind, status, body)
  if first_bad == nil then
    first_bad = kind .. " " .. status .. ": " .. string.sub(body or "", 1, 300)
  end
end

function response(status, _, body)
  if status < 200 or status > 299 then
    bad_status = bad_status + 1
    bad("HTTP", status, body)
  elseif string.find(body, '"error"%s*:') or string.find(body, '"isError"%s*:%s*true') then
    rpc_errors = rpc_errors + 1
    bad("JSON-RPC error", status, body)
  end
end

function done(summary, latency, _)
  local statuses, errors, sample = 0, 0, nil
  for _, thread in ipairs(threads) do
    statuses = statuses + thread:get("bad_status")
    errors = errors + thread:get("rpc_errors")
    sample = sample or thread:get("first_bad")
  end
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d duration_us=%d p50_us=%d p99_us=%d max_us=%d bad_status=%d " ..
    "rpc_errors=%d socket_errors=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency.max, statuses, errors, e.connect + e.read + e.write + e.timeout))
  if sample then
    io.write("FIRST_BAD " .. string.gsub(sample, "\n", " ") .. "\n")
  end
end
