-- wrk script that checks every body: run with as many threads as connections (-tN -cN), so each
-- thread has one connection and each response answers the last request it made.
--
--   wrk -t8 -c8 -d60s -s bench/bucket/check.lua URL -- PATHS TREE
--
-- PATHS lists the site's paths, one a line. Every file of the site begins "/PATH RELEASE\n"
-- (bench/bucket/common.py, site()), and TREE/RELEASE/PATH holds the bytes uploaded for it. A 200
-- is right when its head names the path asked for and the whole body equals that file; anything
-- else is wrong. Statuses other than 200 and socket errors are counted apart.

local paths, count, tree, cache, last, index = {}, 0, nil, {}, nil, 0
ok, wrong, bad = 0, 0, 0
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  tree = args[2]
  for line in io.lines(args[1]) do
    count = count + 1
    paths[count] = line
  end
  math.randomseed(os.time() + count + #threads + tonumber(tostring({}):match("0x(%x+)"), 16) % 1000)
  index = math.random(count)
end

function request()
  index = index % count + 1
  last = paths[index]
  return wrk.format("GET", "/" .. last)
end

function response(status, headers, body)
  if status ~= 200 then
    bad = bad + 1
    return
  end
  local path, release = body:match("^/([^\n ]+) ([^\n ]+)\n")
  if path == nil or path ~= last then
    wrong = wrong + 1
    return
  end
  local key = release .. "/" .. path
  local expected = cache[key]
  if expected == nil then
    local f = io.open(tree .. "/" .. key, "rb")
    if f ~= nil then
      expected = f:read("*a")
      f:close()
      cache[key] = expected
    end
  end
  if expected ~= nil and expected == body then
    ok = ok + 1
  else
    wrong = wrong + 1
  end
end

function done(summary, latency, requests)
  local o, w, b = 0, 0, 0
  for _, t in ipairs(threads) do
    o = o + t:get("ok")
    w = w + t:get("wrong")
    b = b + t:get("bad")
  end
  local e = summary.errors
  io.write(string.format("checked: requests=%d ok=%d wrong=%d non200=%d connect=%d read=%d write=%d timeout=%d\n",
    summary.requests, o, w, b, e.connect, e.read, e.write, e.timeout))
end
