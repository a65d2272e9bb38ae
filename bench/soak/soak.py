#!/usr/bin/env python3
"""Mixed load for a while against a server, with a writer churning part of its tree.

  soak.py PORT PID TREE SECONDS [RATE]

HTTP/1.1: plain, conditional (If-None-Match with the ETag last seen), ranged and br requests
over keep-alive connections at RATE requests a second in all (default 200); HTTP/2: h2load runs
of 400 requests every 10 s. A writer rewrites, renames, creates and deletes files under
TREE/churn. Every 10 s one line: RSS, threads, open fds of PID, requests and p99 latency in the
window, 5xx and socket errors so far. At the end: drift from minute 2 to the end.
"""
import urllib.request
import asyncio, os, random, subprocess, sys, threading, time, urllib.parse

port, pid, tree, seconds = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
rate = int(sys.argv[5]) if len(sys.argv) > 5 else 200
stable = [p for p in (os.path.relpath(os.path.join(d, f), tree) for d, _, fs in os.walk(tree) for f in fs) if not p.startswith('churn')]
latencies, errors, statuses = [], {'5xx': 0, 'socket': 0, 'h2': 0, 'h2 5xx': 0}, {}
etags = {}

def proc(field):
    for line in open(f'/proc/{pid}/status'):
        if line.startswith(field):
            return int(line.split()[1])

def writer(stop):
    churn = os.path.join(tree, 'churn')
    os.makedirs(churn, exist_ok=True)
    i = 0
    while not stop.is_set():
        name = os.path.join(churn, f'f{i % 50}.txt')
        with open(name + '.tmp', 'w') as f:
            f.write(f'version {i} ' * random.randint(10, 5000))
        os.replace(name + '.tmp', name)
        if i % 7 == 0:
            try: os.remove(os.path.join(churn, f'f{(i * 3) % 50}.txt'))
            except FileNotFoundError: pass
        i += 1
        time.sleep(0.1)

async def request(r, w, path, headers):
    w.write(f'GET /{urllib.parse.quote(path)} HTTP/1.1\r\nHost: x\r\n{headers}\r\n'.encode())
    head = await asyncio.wait_for(r.readuntil(b'\r\n\r\n'), 10)
    lines = head.decode('latin-1').split('\r\n')
    status = int(lines[0].split()[1])
    fields = {l.split(':', 1)[0].lower(): l.split(':', 1)[1].strip() for l in lines[1:] if ':' in l}
    await r.readexactly(int(fields.get('content-length', 0)))
    return status, fields

async def client(deadline, per_second):
    r = w = None
    while time.time() < deadline:
        t = time.perf_counter()
        path = random.choice(stable if random.random() < 0.8 else [f'churn/f{random.randrange(50)}.txt'])
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
    while not stop.wait(10):
        out = subprocess.run(['h2load', '-n', '400', '-c', '2', '-m', '4', *urls], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith('requests:'):
                errors['h2'] += int(line.split(',')[4].split()[0])
            if line.startswith('status codes:'):
                errors['h2 5xx'] += int(line.split(',')[3].split()[0])

def gc_heap_kib():
    # The server's /metrics (the soak starts it with --metrics): the GC heap after the last collection.
    text = urllib.request.urlopen(f'http://127.0.0.1:{port}/metrics', timeout=5).read().decode()
    line = next(l for l in text.splitlines() if l.startswith('dotnet_gc_heap_size_bytes '))
    return int(line.split()[1]) // 1024

async def main():
    stop = threading.Event()
    threading.Thread(target=writer, args=(stop,), daemon=True).start()
    threading.Thread(target=h2, args=(stop,), daemon=True).start()
    start = time.time()
    deadline = start + seconds
    tasks = [asyncio.create_task(client(deadline, rate / 8)) for _ in range(8)]
    samples = []
    print('| t (s) | RSS (KiB) | threads | fds | requests | p99 (ms) | 5xx | socket errors | h2 failed requests | h2 5xx | GC heap (KiB) |')
    print('|---|---|---|---|---|---|---|---|---|---|---|')
    while time.time() < deadline:
        await asyncio.sleep(10)
        now = time.time()
        window = sorted(ms for at, ms in latencies if at > now - 10)
        p99 = window[int(len(window) * 0.99)] if window else float('nan')
        s = (round(now - start), proc('VmRSS:'), len(os.listdir(f'/proc/{pid}/task')), len(os.listdir(f'/proc/{pid}/fd')), len(window), p99, gc_heap_kib())
        samples.append(s)
        print(f'| {s[0]} | {s[1]} | {s[2]} | {s[3]} | {s[4]} | {s[5]:.1f} | {errors["5xx"]} | {errors["socket"]} | {errors["h2"]} | {errors["h2 5xx"]} | {s[6]} |', flush=True)
    stop.set()
    await asyncio.gather(*tasks)
    two = next((s for s in samples if s[0] >= 120), samples[0])
    last = samples[-1]
    drift = lambda i: (last[i] - two[i]) * 100 / two[i]
    print(f'\ndrift from t={two[0]} s to t={last[0]} s: RSS {drift(1):+.1f}%, threads {drift(2):+.1f}%, fds {drift(3):+.1f}%, GC heap {drift(6):+.1f}%')
    print(f'statuses {dict(sorted(statuses.items()))}; 5xx {errors["5xx"]}, socket errors {errors["socket"]}, h2 failed requests {errors["h2"]}, h2 5xx {errors["h2 5xx"]}')

asyncio.run(main())
