-- wrk script for bench/lent/run: rotates through a mix of requests on each wrk thread.
--
-- Environment: MIX, one of
--   hit     the 3,348-byte file only (the fast path answers every request);
--   miss    nine requests for it, then one for a path that does not exist (404);
--   range   nine requests for the 31,744-byte file, then one for 1,000 bytes of it (Range);
--   ranges  the 31,744-byte file in three ranges, one request each, as a download
--           accelerator fetches it;
--   misses  the missing path only (no request is the fast path's).
-- Requests are formatted in init(), once wrk has set the thread's Host header.
local mix = os.getenv("MIX") or "miss"
local requests = {}

init = function(_)
  local small, large = "/f-3348.bin", "/f-31744.bin"
  if mix == "hit" then
    requests[1] = wrk.format("GET", small)
  elseif mix == "misses" then
    requests[1] = wrk.format("GET", "/missing.bin")
  elseif mix == "miss" then
    for _ = 1, 9 do requests[#requests + 1] = wrk.format("GET", small) end
    requests[#requests + 1] = wrk.format("GET", "/missing.bin")
  elseif mix == "range" then
    for _ = 1, 9 do requests[#requests + 1] = wrk.format("GET", large) end
    requests[#requests + 1] = wrk.format("GET", large, { ["Range"] = "bytes=100-1099" })
  elseif mix == "ranges" then
    for _, range in ipairs({ "bytes=0-10239", "bytes=10240-20479", "bytes=20480-" }) do
      requests[#requests + 1] = wrk.format("GET", large, { ["Range"] = range })
    end
  else
    error("MIX must be hit, miss, range, ranges or misses, not " .. mix)
  end
end

local next_index = 0
request = function()
  next_index = next_index % #requests + 1
  return requests[next_index]
end

done = function(summary, _, _)
  local e = summary.errors
  io.write(string.format("RESULT requests=%.0f duration_us=%.0f errors=%d\n", summary.requests, summary.duration,
    e.connect + e.read + e.write + e.timeout))
end
