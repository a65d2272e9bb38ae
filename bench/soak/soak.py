#!/usr/bin/env python3
"""Mixed load for a while against a server, with a writer churning part of its tree, sampling
the server's memory every 10 s.

  soak.py PORT PID TREE SECONDS [RATE] [--wrk-connections 50 --wrk-paths FILE]
          [--churn-files 50 --churn-interval 0.05] [--h2-every 10 --h2-requests 400]
          [--reference 300]

Load, all on 127.0.0.1, every part bounded by SECONDS:
- HTTP/1.1, RATE requests a second in all (default 200) over 8 keep-alive connections: plain,
  conditional (If-None-Match with the ETag last seen), ranged (bytes=0-99) and br, a quarter each.
- With --wrk-connections N: wrk (bench/lib/wrk.lua) at full speed on N connections over the
  paths in --wrk-paths (Accept-Encoding: br, gzip), in 60 s runs back to back.
- A writer rewriting --churn-files files under TREE/churn every --churn-interval seconds (half in
  place, half by rename; one in seven deleted and made again), and with --churn-client a client
  fetching them in a loop over one keep-alive connection (404 for a file between delete and
  re-creation is expected).
- HTTP/2: h2load runs of --h2-requests requests (2 connections, 4 streams each) every --h2-every
  seconds.

Every 10 s one row: RSS, anonymous and file-backed resident memory (/proc/PID/status), threads,
open fds, the GC heap after the last collection and the GC's committed bytes (from the server's
/metrics, so start it with --metrics), requests in the window, p99 of the 8-connection client,
5xx and socket errors so far, and the anonymous memory split by owner (smaps.py: the GC's
regions, malloc's arenas, thread stacks, the rest). At the end: RSS at --reference seconds (default 300) against the
end, the sample from then on farthest from the end, each owner's range, GC heap drift, and
every error count. wrk's timeouts are reported apart: on a shared 2-core
machine they come from contention as often as from the server, and are to be checked, not
counted as product errors.
"""
import argparse, smaps, asyncio, os, random, re, statistics, subprocess, sys, threading, time, urllib.parse, urllib.request, http.client

ap = argparse.ArgumentParser()
ap.add_argument('port', type=int)
ap.add_argument('pid', type=int)
ap.add_argument('tree')
ap.add_argument('seconds', type=int)
ap.add_argument('rate', type=int, nargs='?', default=200)
ap.add_argument('--wrk-connections', type=int, default=0)
ap.add_argument('--wrk-paths', default=None)
ap.add_argument('--churn-files', type=int, default=50)
ap.add_argument('--churn-interval', type=float, default=0.1)
ap.add_argument('--h2-every', type=float, default=10)
ap.add_argument('--h2-requests', type=int, default=400)
ap.add_argument('--reference', type=int, default=300)
ap.add_argument('--churn-client', action='store_true')
a = ap.parse_args()
port, pid, tree, seconds, rate = a.port, a.pid, a.tree, a.seconds, a.rate
here = os.path.dirname(os.path.abspath(__file__))

stable = [p for p in (os.path.relpath(os.path.join(d, f), tree) for d, _, fs in os.walk(tree) for f in fs) if not p.startswith('churn')]
latencies, statuses = [], {}
errors = {'5xx': 0, 'socket': 0, 'h2': 0, 'h2 5xx': 0, 'churn 5xx': 0, 'churn socket': 0, 'wrk status': 0, 'wrk timeout': 0, 'wrk socket': 0}
counts = {'wrk': 0, 'churn': 0, 'h2': 0}
etags = {}
deadline = time.time() + seconds


def status_fields(*names):
    values = {}
    for line in open(f'/proc/{pid}/status'):
        key = line.split(':', 1)[0]
        if key in names:
            values[key] = int(line.split()[1])
    return [values.get(n, 0) for n in names]


def writer(stop):
    churn = os.path.join(tree, 'churn')
    os.makedirs(churn, exist_ok=True)
    i = 0
    while not stop.is_set() and time.time() < deadline:
        started = time.time()
        for k in range(a.churn_files):
            name = os.path.join(churn, f'f{k}.txt')
            body = (f'version {i} file {k} ' * random.randint(10, 2000)).encode()
            if k % 2:
                with open(name + '.tmp', 'wb') as f:
                    f.write(body)
                os.replace(name + '.tmp', name)
            else:
                with open(name, 'wb') as f:  # in place: O_TRUNC, same inode
                    f.write(body)
        if i % 7 == 0:
            try: os.remove(os.path.join(churn, f'f{(i * 3) % a.churn_files}.txt'))
            except FileNotFoundError: pass
        i += 1
        time.sleep(max(0, a.churn_interval - (time.time() - started)))


def churn_client(stop):
    conn = None
    k = 0
    while not stop.is_set() and time.time() < deadline:
        try:
            if conn is None:
                conn = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
            conn.request('GET', f'/churn/f{k % a.churn_files}.txt', headers={'Accept-Encoding': 'br, gzip' if k % 2 else 'identity'})
            r = conn.getresponse()
            r.read()
            counts['churn'] += 1
            statuses[r.status] = statuses.get(r.status, 0) + 1
            if r.status >= 500: errors['churn 5xx'] += 1
            if r.getheader('connection', '').lower() == 'close':
                conn.close(); conn = None
        except Exception:
            errors['churn socket'] += 1
            if conn: conn.close()
            conn = None
        k += 1


def wrk(stop):
    env = dict(os.environ, WRK_PATHS=a.wrk_paths, WRK_ACCEPT_ENCODING='br, gzip')
    script = os.path.join(here, '..', 'lib', 'wrk.lua')
    while not stop.is_set():
        left = int(deadline - time.time())
        if left < 2: break
        out = subprocess.run(['wrk', '-t1', f'-c{a.wrk_connections}', f'-d{min(60, left)}s', '--timeout', '5s', '-s', script, f'http://127.0.0.1:{port}/'],
                             capture_output=True, text=True, env=env, timeout=min(60, left) + 30).stdout
        m = re.search(r'RESULT (.*)', out)
        if not m: continue
        f = dict(kv.split('=') for kv in m.group(1).split())
        counts['wrk'] += int(f['requests'])
        errors['wrk status'] += int(f['status'])
        errors['wrk timeout'] += int(f['timeout'])
        errors['wrk socket'] += int(f['connect']) + int(f['read']) + int(f['write'])


async def request(r, w, path, headers):
    w.write(f'GET /{urllib.parse.quote(path)} HTTP/1.1\r\nHost: x\r\n{headers}\r\n'.encode())
    head = await asyncio.wait_for(r.readuntil(b'\r\n\r\n'), 10)
    lines = head.decode('latin-1').split('\r\n')
    status = int(lines[0].split()[1])
    fields = {l.split(':', 1)[0].lower(): l.split(':', 1)[1].strip() for l in lines[1:] if ':' in l}
    await asyncio.wait_for(r.readexactly(int(fields.get('content-length', 0))), 10)
    return status, fields


async def client(per_second):
    r = w = None
    while time.time() < deadline:
        t = time.perf_counter()
        path = random.choice(stable if random.random() < 0.8 else [f'churn/f{random.randrange(a.churn_files)}.txt'])
        kind = random.randrange(4)
        headers = ['', f'If-None-Match: {etags.get(path, chr(34) + "x" + chr(34))}\r\n', 'Range: bytes=0-99\r\n', 'Accept-Encoding: br\r\n'][kind]
        try:
            if w is None:
                r, w = await asyncio.open_connection('127.0.0.1', port)
            status, fields = await request(r, w, path, headers)
            if 'etag' in fields: etags[path] = fields['etag']
            if fields.get('connection', '').lower() == 'close':
                w.close()
                r = w = None
            statuses[status] = statuses.get(status, 0) + 1
            if status >= 500: errors['5xx'] += 1
            latencies.append((time.time(), (time.perf_counter() - t) * 1000))
        except Exception:
            errors['socket'] += 1
            if w: w.close()
            r = w = None
        await asyncio.sleep(max(0, 1 / per_second - (time.perf_counter() - t)))


def h2(stop):
    urls = [f'http://127.0.0.1:{port}/{urllib.parse.quote(p)}' for p in random.sample(stable, min(8, len(stable)))]
    while not stop.wait(a.h2_every) and time.time() < deadline - 5:
        out = subprocess.run(['h2load', '-n', str(a.h2_requests), '-c', '2', '-m', '4', '-H', 'Accept-Encoding: br', *urls],
                             capture_output=True, text=True, timeout=60).stdout
        for line in out.splitlines():
            if line.startswith('requests:'):
                counts['h2'] += int(line.split(',')[2].split()[0])
                errors['h2'] += int(line.split(',')[4].split()[0])
            if line.startswith('status codes:'):
                errors['h2 5xx'] += int(line.split(',')[3].split()[0])


def metrics():
    # The server's /metrics (started with --metrics): the GC heap after the last collection.
    text = urllib.request.urlopen(f'http://127.0.0.1:{port}/metrics', timeout=10).read().decode()
    def value(name):
        line = next((l for l in text.splitlines() if l.startswith(name + ' ')), None)
        return int(float(line.split()[1])) // 1024 if line else -1
    return value('dotnet_gc_heap_size_bytes'), value('dotnet_gc_committed_bytes')


async def main():
    stop = threading.Event()
    workers = [threading.Thread(target=writer, args=(stop,), daemon=True), threading.Thread(target=h2, args=(stop,), daemon=True)]
    if a.churn_client:
        workers.append(threading.Thread(target=churn_client, args=(stop,), daemon=True))
    if a.wrk_connections:
        workers.append(threading.Thread(target=wrk, args=(stop,), daemon=True))
    for t in workers: t.start()
    start = time.time()
    tasks = [asyncio.create_task(client(rate / 8)) for _ in range(8)]
    samples = []
    print('| t (s) | RSS (KiB) | anon (KiB) | file (KiB) | threads | fds | GC heap (KiB) | GC committed (KiB) | requests | p99 (ms) | 5xx | socket errors | wrk requests | wrk non-2xx/3xx | wrk timeouts | churn requests | h2 requests | h2 failed | h2 5xx | anon: GC (KiB) | anon: malloc (KiB) | anon: stacks (KiB) | anon: other (KiB) |')
    print('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|')
    while time.time() < deadline - 1:
        await asyncio.sleep(min(10, max(0.5, deadline - time.time() - 1)))
        now = time.time()
        window = sorted(ms for at, ms in latencies if at > now - 10)
        p99 = window[int(len(window) * 0.99)] if window else float('nan')
        rss, anon, file_ = status_fields('VmRSS', 'RssAnon', 'RssFile')
        try:
            heap, committed = metrics()
        except Exception:
            heap, committed = -1, -1
        parts = smaps.breakdown(pid)
        s = (round(now - start), rss, anon, file_, len(os.listdir(f'/proc/{pid}/task')), len(os.listdir(f'/proc/{pid}/fd')), heap, committed, len(window), p99,
             parts['gc'], parts['malloc'], parts['stacks'], parts['other'])
        samples.append(s)
        print(f'| {s[0]} | {s[1]} | {s[2]} | {s[3]} | {s[4]} | {s[5]} | {s[6]} | {s[7]} | {s[8]} | {s[9]:.1f} | {errors["5xx"] + errors["churn 5xx"]} | {errors["socket"] + errors["churn socket"]} '
              f'| {counts["wrk"]} | {errors["wrk status"]} | {errors["wrk timeout"]} | {counts["churn"]} | {counts["h2"]} | {errors["h2"]} | {errors["h2 5xx"]} '
              f'| {s[10]} | {s[11]} | {s[12]} | {s[13]} |', flush=True)
    stop.set()
    await asyncio.gather(*tasks)
    for t in workers: t.join(timeout=90)
    ref = next((s for s in samples if s[0] >= a.reference), samples[0])
    last = samples[-1]
    drift = lambda i: (last[i] - ref[i]) * 100 / ref[i] if ref[i] > 0 else float('nan')
    print(f'\nfrom t={ref[0]} s to t={last[0]} s: RSS {ref[1]} -> {last[1]} KiB ({drift(1):+.1f}%), anon {drift(2):+.1f}%, threads {drift(4):+.1f}%, fds {drift(5):+.1f}%, '
          f'GC heap {ref[6]} -> {last[6]} KiB ({drift(6):+.1f}%), GC committed {drift(7):+.1f}%')
    # Single samples move with each collection (the GC's committed bytes swing by ~10 MiB
    # between collections), so the minute from --reference and the last minute are compared
    # too, by their medians.
    first = [s[1] for s in samples if ref[0] <= s[0] < ref[0] + 60]
    final = [s[1] for s in samples if s[0] > last[0] - 60]
    m0, m1 = statistics.median(first), statistics.median(final)
    print(f'RSS, median of the minute from t={ref[0]} s against the last minute: {m0:.0f} -> {m1:.0f} KiB ({(m1 - m0) * 100 / m0:+.1f}%); '
          f'RSS from t={ref[0]} s: min {min(s[1] for s in samples if s[0] >= ref[0])} KiB, max {max(s[1] for s in samples if s[0] >= ref[0])} KiB')
    after = [s for s in samples if s[0] >= ref[0]]
    worst = max(after, key=lambda s: abs(s[1] - last[1]))
    print(f'RSS, every sample from t={ref[0]} s against the last: the farthest is t={worst[0]} s, {worst[1]} KiB ({(worst[1] - last[1]) * 100 / last[1]:+.1f}%)')
    for i, name in ((10, 'GC'), (11, 'malloc'), (12, 'stacks'), (13, 'other')):
        print(f'anonymous memory, {name}, from t={ref[0]} s: min {min(s[i] for s in after)} KiB, max {max(s[i] for s in after)} KiB, at the end {last[i]} KiB')
    heaps = [s[6] for s in samples if s[0] >= ref[0] and s[6] >= 0]
    if heaps:
        print(f'GC heap from t={ref[0]} s: min {min(heaps)} KiB, max {max(heaps)} KiB')
    print(f'requests: 8-connection client {sum(statuses.values()) - counts["churn"]}, wrk {counts["wrk"]}, churn client {counts["churn"]}, h2 {counts["h2"]}')
    print(f'statuses (8-connection and churn clients) {dict(sorted(statuses.items()))}')
    print(f'errors: 5xx {errors["5xx"]}, socket {errors["socket"]}, churn 5xx {errors["churn 5xx"]}, churn socket {errors["churn socket"]}, '
          f'wrk non-2xx/3xx {errors["wrk status"]}, wrk socket {errors["wrk socket"]}, wrk timeouts {errors["wrk timeout"]}, '
          f'h2 failed {errors["h2"]}, h2 5xx {errors["h2 5xx"]}')

asyncio.run(main())
