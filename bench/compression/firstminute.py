#!/usr/bin/env python3
"""How soon is a large site served compressed, and what does the work cost serving?

Starts Peregrine on a tree (for the figures in bench/RESULTS.md, "Compression from the first
minute": bootstrap 5.3.3, mathjax 3.2.2 and @mdi/svg 7.4.47 unpacked from `npm pack`), then:

  * coverage: every second, asks each compressible file of at least --min-size bytes with
    `Accept-Encoding: br` and with `Accept-Encoding: gzip` (GET, body read) until each answer
    carries that Content-Encoding; prints when every file had both. A file is compressible when
    its answer carries `Vary: Accept-Encoding` (Peregrine sends it for every negotiable file,
    before and after its variants exist).
  * /healthz: notes when `compression.pending` reaches 0 and when `compression.final` is true.
  * load (--load): wrk runs back to back on one small file (no Accept-Encoding, so the body
    never changes) from start for --load-seconds (the final pass runs at the lowest priority
    and hardly advances while a pinned server is saturated), then once more after the final
    pass is done, with no compression work; each run's requests/s is printed with the phase it
    ran in: "first pass", "final pass", "mixed" (across the boundary) or "after".

  bench/compression/firstminute.py --exe PATH --root TREE [--load] [--load-seconds S] [--pin] [--port N]

With --pin the server runs on CPU 0 and wrk on CPU 1 (taskset). The server is started with
`--port N -q` and killed at the end.
"""
import argparse, http.client, json, os, subprocess, sys, threading, time, urllib.parse


def get(conn, path, accept):
    conn.request("GET", path, headers={"Accept-Encoding": accept} if accept else {})
    r = conn.getresponse()
    body = r.read()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, body


def health(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        status, _, body = get(c, "/healthz", None)
        return json.loads(body) if status == 200 else None
    except OSError:
        return None
    finally:
        c.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True, help="the published peregrine executable (or a .dll, run with dotnet)")
    ap.add_argument("--root", required=True)
    ap.add_argument("--port", type=int, default=18191)
    ap.add_argument("--min-size", type=int, default=2048)
    ap.add_argument("--load", action="store_true", help="run wrk on one small file throughout")
    ap.add_argument("--load-path", default=None, help="the file wrk asks for (default: the smallest file of --min-size or less)")
    ap.add_argument("--wrk-seconds", type=int, default=5)
    ap.add_argument("--load-seconds", type=float, default=60, help="how long the load runs from start")
    ap.add_argument("--pin", action="store_true", help="server on CPU 0, wrk on CPU 1")
    ap.add_argument("--limit", type=float, default=900, help="give up after this many seconds")
    a = ap.parse_args()

    files = []
    for d, _, names in os.walk(a.root):
        for n in names:
            p = os.path.join(d, n)
            size = os.path.getsize(p)
            files.append((os.path.relpath(p, a.root), size))
    small = sorted((s, f) for f, s in files if 200 <= s <= a.min_size and f.endswith(".svg"))
    load_path = a.load_path or "/" + urllib.parse.quote(small[len(small) // 2][1])
    candidates = ["/" + urllib.parse.quote(f) for f, s in files if s >= a.min_size]

    cmd = [a.exe] if not a.exe.endswith(".dll") else ["dotnet", a.exe]
    cmd += [a.root, "--port", str(a.port), "-q"]
    if a.pin:
        cmd = ["taskset", "-c", "0"] + cmd
    t0 = time.monotonic()
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = lambda: time.monotonic() - t0
    try:
        while health(a.port) is None:
            if server.poll() is not None or elapsed() > 60:
                sys.exit("server did not become ready")
            time.sleep(0.05)
        print(f"ready after {elapsed():.2f} s", flush=True)

        marks = {}
        stop = threading.Event()
        load_runs = []

        def load():
            wrk = ["wrk", "-t1", "-c8", f"-d{a.wrk_seconds}s", f"http://127.0.0.1:{a.port}{load_path}"]
            if a.pin:
                wrk = ["taskset", "-c", "1"] + wrk
            while not stop.is_set() and elapsed() + a.wrk_seconds <= a.load_seconds:
                run_wrk(wrk)

        def run_wrk(wrk):
            started, before = elapsed(), dict(marks)
            out = subprocess.run(wrk, capture_output=True, text=True).stdout
            rps = next((float(l.split()[1]) for l in out.splitlines() if l.startswith("Requests/sec")), 0.0)
            # The phase the whole run fell in; a run across a boundary is "mixed".
            if "final" in before:
                phase = "after"
            elif "first pass" in before and "final" not in marks:
                phase = "final pass"
            elif "first pass" not in marks:
                phase = "first pass"
            else:
                phase = "mixed"
            load_runs.append((round(started, 1), phase, rps))
            print(f"  wrk {started:6.1f} s  {phase:10s} {rps:10.0f} req/s", flush=True)

        loader = threading.Thread(target=load, daemon=True)
        if a.load:
            loader.start()

        conn = http.client.HTTPConnection("127.0.0.1", a.port, timeout=30)
        compressible, missing = None, None
        while elapsed() < a.limit:
            h = health(a.port) or {}
            c = h.get("compression", {})
            if c.get("pending") == 0 and "first pass" not in marks:
                marks["first pass"] = elapsed()
                print(f"first pass done (healthz pending 0) at {marks['first pass']:.1f} s", flush=True)
            if c.get("final") and "final" not in marks:
                marks["final"] = elapsed()
                print(f"final quality reached (healthz final) at {marks['final']:.1f} s: {json.dumps(c)}", flush=True)
            if compressible is None:
                compressible, missing = [], set()
                for path in candidates:
                    _, headers, _ = get(conn, path, None)
                    if "accept-encoding" in headers.get("vary", "").lower():
                        compressible.append(path)
                        missing.update({(path, "br"), (path, "gzip")})
                print(f"{len(compressible)} compressible files of {a.min_size} bytes or more (of {len(files)} files)", flush=True)
            if missing:
                for path, coding in sorted(missing):
                    _, headers, _ = get(conn, path, coding)
                    if headers.get("content-encoding") == coding:
                        missing.discard((path, coding))
                print(f"  {elapsed():6.1f} s: {len(missing)} of {2 * len(compressible)} (file, coding) pairs still unencoded", flush=True)
                if not missing:
                    marks["covered"] = elapsed()
                    print(f"every compressible file served with br and gzip at {marks['covered']:.1f} s", flush=True)
            if not missing and "final" in marks:
                break
            time.sleep(1)
        if missing:
            print(f"after {a.limit} s still unencoded: {sorted(missing)[:20]}", flush=True)
        if a.load:
            stop.set()
            loader.join()
            if "final" in marks:
                # One more run with no compression work at all.
                run_wrk(["taskset", "-c", "1"] * a.pin + ["wrk", "-t1", "-c8", f"-d{a.wrk_seconds}s", f"http://127.0.0.1:{a.port}{load_path}"])
        print(json.dumps({"marks": {k: round(v, 1) for k, v in marks.items()}, "load": load_runs}), flush=True)
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
