#!/usr/bin/env python3
"""Slow and many clients against one server on 127.0.0.1 (bench/slowclients/run starts it).

  clients.py slowloris PORT N SECONDS     N connections sending a head one byte per second;
                                          meanwhile a fresh request every second, timed
  clients.py idle PORT PID N              N keep-alive connections, one request each, then idle;
                                          the server's RSS (VmRSS of PID) before and after
  clients.py halfsent PORT                a head half sent, then silence: when and how it is closed
  clients.py churn PORT SECONDS           open, send half a head or nothing, drop; in a loop;
                                          meanwhile a fresh request every second, timed
  clients.py slowread PORT PATH N SECONDS N clients reading a large file at 1 KiB/s
"""
import asyncio, sys, time, socket

def rss_kib(pid):
    for line in open(f'/proc/{pid}/status'):
        if line.startswith('VmRSS:'):
            return int(line.split()[1])

async def fresh(port, path='/index.html'):
    t = time.perf_counter()
    r, w = await asyncio.open_connection('127.0.0.1', port)
    w.write(f'GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'.encode())
    data = await asyncio.wait_for(r.read(), 10)
    w.close()
    return (time.perf_counter() - t) * 1000, data.split(b'\r\n', 1)[0].decode()

async def probe(port, seconds, label):
    times, statuses = [], set()
    end = time.time() + seconds
    while time.time() < end:
        try:
            ms, status = await fresh(port)
            times.append(ms); statuses.add(status)
        except Exception as e:
            statuses.add(type(e).__name__)
        await asyncio.sleep(1)
    times.sort()
    print(f'{label}: fresh requests {len(times)}, statuses {sorted(statuses)}, '
          f'median {times[len(times)//2]:.1f} ms, max {times[-1]:.1f} ms' if times else f'{label}: no answers {statuses}')
    return times

async def slowloris(port, n, seconds):
    head = b'GET /index.html HTTP/1.1\r\nHost: x\r\nX-Slow: ' + b'a' * 200 + b'\r\n\r\n'
    conns, closed = [], 0
    for i in range(n):
        try:
            conns.append(await asyncio.open_connection('127.0.0.1', port))
        except OSError as e:
            print('connect failed at', i, e); break
    print(f'slowloris: {len(conns)} connections open')
    async def drip(r, w):
        nonlocal closed
        for b in head:
            try:
                w.write(bytes([b])); await w.drain()
            except Exception:
                closed += 1; return
            await asyncio.sleep(1)
    tasks = [asyncio.create_task(drip(r, w)) for r, w in conns]
    await probe(port, seconds, f'during {len(conns)} slowloris connections')
    print(f'slowloris: {closed} of {len(conns)} closed by the server within {seconds} s')
    for t in tasks: t.cancel()
    for r, w in conns: w.close()

async def idle(port, pid, n):
    before = rss_kib(pid)
    conns = []
    for start in range(0, n, 500):
        batch = []
        for _ in range(min(500, n - start)):
            r, w = await asyncio.open_connection('127.0.0.1', port)
            w.write(b'GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n')
            batch.append((r, w))
        await asyncio.gather(*(read_response(r) for r, _ in batch))
        conns += batch
    await asyncio.sleep(5)
    after = rss_kib(pid)
    print(f'idle: {n} keep-alive connections; server RSS {before} KiB -> {after} KiB; '
          f'{(after - before) * 1024 / n:.0f} bytes per connection')
    ms, status = await fresh(port)
    print(f'idle: a fresh request meanwhile: {status} in {ms:.1f} ms')
    for r, w in conns: w.close()

async def read_response(r):
    head = await asyncio.wait_for(r.readuntil(b'\r\n\r\n'), 30)
    length = int([l for l in head.split(b'\r\n') if l.lower().startswith(b'content-length:')][0].split(b':')[1])
    await r.readexactly(length)

async def halfsent(port):
    r, w = await asyncio.open_connection('127.0.0.1', port)
    w.write(b'GET /index.html HTTP/1.1\r\nHost: x\r\n')
    await w.drain()
    t = time.perf_counter()
    data = await asyncio.wait_for(r.read(), 120)
    status = data.split(b'\r\n', 1)[0].decode() or 'nothing'
    print(f'halfsent: closed after {time.perf_counter() - t:.1f} s with {status}')

async def churn(port, seconds):
    count = 0
    async def loop():
        nonlocal count
        end = time.time() + seconds
        while time.time() < end:
            try:
                r, w = await asyncio.open_connection('127.0.0.1', port)
                if count % 2:
                    w.write(b'GET /index.html HTTP/1.1\r\nHo')
                s = w.get_extra_info('socket')
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b'\x01\x00\x00\x00\x00\x00\x00\x00')
                w.close()
                count += 1
            except OSError:
                await asyncio.sleep(0.01)
    tasks = [asyncio.create_task(loop()) for _ in range(4)]
    await probe(port, seconds, 'during connect-and-drop churn')
    await asyncio.gather(*tasks)
    print(f'churn: {count} connections opened and dropped (half with a partial head, reset)')

async def slowread(port, path, n, seconds):
    async def reader():
        r, w = await asyncio.open_connection('127.0.0.1', port, limit=1024)
        s = w.get_extra_info('socket')
        w.write(f'GET {path} HTTP/1.1\r\nHost: x\r\n\r\n'.encode())
        got = 0
        end = time.time() + seconds
        try:
            while time.time() < end:
                chunk = await r.read(1024)
                if not chunk: return got, 'closed by server'
                got += len(chunk)
                await asyncio.sleep(1)
            return got, 'still open'
        except Exception as e:
            return got, type(e).__name__
    tasks = [asyncio.create_task(reader()) for _ in range(n)]
    await probe(port, seconds, f'during {n} slow readers of {path}')
    results = await asyncio.gather(*tasks)
    outcomes = {}
    for got, how in results: outcomes[how] = outcomes.get(how, 0) + 1
    print(f'slowread: {outcomes}')

cmd = sys.argv[1]
a = sys.argv[2:]
if cmd == 'slowloris': asyncio.run(slowloris(int(a[0]), int(a[1]), int(a[2])))
elif cmd == 'idle': asyncio.run(idle(int(a[0]), int(a[1]), int(a[2])))
elif cmd == 'halfsent': asyncio.run(halfsent(int(a[0])))
elif cmd == 'churn': asyncio.run(churn(int(a[0]), int(a[1])))
elif cmd == 'slowread': asyncio.run(slowread(int(a[0]), a[1], int(a[2]), int(a[3])))
else: print(__doc__); sys.exit(2)
