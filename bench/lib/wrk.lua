-- wrk script used for every HTTP/1.1 cell of bench/run.
--
-- Environment:
--   WRK_PATHS            file with one request path a line; requests rotate through them.
--                        Unset: wrk sends its pre-built request for the URL on the command line.
--   WRK_ACCEPT_ENCODING  value of an Accept-Encoding request header (unset: no header).
--   WRK_CONNECTION_CLOSE 1: every request says Connection: close, so each goes on a new
--                        connection (wrk connects again when the server closes).
--   WRK_HTTP10           1: every request is HTTP/1.0 without keep-alive, as nginx's proxy_pass
--                        sends by default: the server closes after each response.
--
-- done() prints one machine-readable line that bench/run parses:
--   RESULT requests=.. duration_us=.. bytes=.. connect=.. read=.. write=.. status=.. timeout=.. p50_us=.. p99_us=..
-- "status" counts responses outside 2xx/3xx, which bench/run reports as errors.
-- Counters are printed with %.0f: LuaJIT's %d clamps to 32 bits (2 GiB of bytes).

local encoding = os.getenv("WRK_ACCEPT_ENCODING")
if encoding and encoding ~= "" then
  wrk.headers["Accept-Encoding"] = encoding
end

if os.getenv("WRK_CONNECTION_CLOSE") == "1" then
  wrk.headers["Connection"] = "close"
end

-- wrk.format writes HTTP/1.1; an HTTP/1.0 cell rewrites the request line.
local http10 = os.getenv("WRK_HTTP10") == "1"
local function format(path)
  local formatted = wrk.format("GET", path)
  if http10 then
    formatted = formatted:gsub(" HTTP/1%.1\r\n", " HTTP/1.0\r\n", 1)
  end
  return formatted
end

local paths_file = os.getenv("WRK_PATHS")
if paths_file and paths_file ~= "" then
  local requests = {}
  local next_index = 0

  -- Requests are formatted in init(), once wrk has set this thread's Host header.
  init = function(_)
    for path in io.lines(paths_file) do
      if path ~= "" then
        requests[#requests + 1] = format(path)
      end
    end
    assert(#requests > 0, "WRK_PATHS lists no paths: " .. paths_file)
  end

  -- Defined only when rotating: with no request() wrk reuses one static request.
  request = function()
    next_index = next_index % #requests + 1
    return requests[next_index]
  end
elseif http10 then
  local formatted
  init = function(_)
    formatted = format(nil)
  end

  request = function()
    return formatted
  end
end

done = function(summary, latency, _)
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%.0f duration_us=%.0f bytes=%.0f connect=%d read=%d write=%d status=%d timeout=%d p50_us=%.0f p99_us=%.0f\n",
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
