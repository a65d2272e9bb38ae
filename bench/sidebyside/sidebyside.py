#!/usr/bin/env python3
"""Servers side by side: N instances on two roots, started, killed (SIGKILL) and restarted among
each other at random, while readers fetch every file from every live instance and check its bytes.

Every root holds a 10 MB file (sent from disk, from the instance's private copy), a 300 KB file
and a page. All instances share one temp folder (TMPDIR), as servers on one host share /tmp.
Reports responses, whole ones, wrong or cut ones, 5xx and connection errors; exits 1 on any
answer that is not a whole 200. Only 127.0.0.1 is contacted; the run is bounded by --seconds.

  bench/sidebyside/run --exe out/peregrine [--instances 4] [--seconds 60] [--seed 1]
"""
import argparse
import hashlib
import http.client
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

FILES = {"big.bin": 10_000_000, "mid.bin": 300_000}


def make_root(folder, seed):
    rng = random.Random(seed)
    os.makedirs(folder)
    digests = {}
    for name, size in FILES.items():
        data = rng.randbytes(size)
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
        digests[name] = hashlib.sha256(data).hexdigest()
    page = f"<!doctype html><title>root {seed}</title>".encode()
    with open(os.path.join(folder, "index.html"), "wb") as f:
        f.write(page)
    digests["index.html"] = hashlib.sha256(page).hexdigest()
    return digests


class Instance:
    def __init__(self, exe, root, env):
        self.root = root
        self.killed = False  # set, under the readers' lock, before the signal is sent
        self.proc = subprocess.Popen([exe, root, "-p", "0"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)
        self.port = None
        deadline = time.monotonic() + 20
        for line in self.proc.stdout:
            m = re.search(r"Peregrine serving .* at http://127\.0\.0\.1:(\d+)/", line)
            if m:
                self.port = int(m.group(1))
                break
            if time.monotonic() > deadline:
                break
        if self.port is None:
            self.proc.kill()
            raise SystemExit(f"instance on {root} printed no address")
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for _ in self.proc.stdout:
            pass

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--instances", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--readers", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="sidebyside-")
    tmp = os.path.join(work, "tmp")
    os.makedirs(tmp)
    env = dict(os.environ, TMPDIR=tmp)
    env = {k: v for k, v in env.items() if not k.startswith("PEREGRINE_")} | {"TMPDIR": tmp}
    roots = [os.path.join(work, "a"), os.path.join(work, "b")]
    digests = {root: make_root(root, i + 1) for i, root in enumerate(roots)}

    rng = random.Random(args.seed)
    lock = threading.Lock()
    live = [Instance(args.exe, roots[i % 2], env) for i in range(args.instances)]
    counts = {"responses": 0, "whole": 0, "wrong": 0, "5xx": 0, "other": 0, "errors": 0, "killed mid-response": 0}
    examples = []
    stop = threading.Event()

    def reader(seed):
        r = random.Random(seed)
        while not stop.is_set():
            with lock:
                if not live:
                    continue
                inst = r.choice(live)
            name = r.choice(list(digests[inst.root]))
            try:
                conn = http.client.HTTPConnection("127.0.0.1", inst.port, timeout=10)
                conn.request("GET", "/" + name)
                resp = conn.getresponse()
                body = resp.read()
                conn.close()
            except Exception as e:  # the instance may have been killed under the request
                with lock:
                    if inst.killed:
                        counts["killed mid-response"] += 1
                    else:
                        counts["errors"] += 1
                        examples.append(f"{name} on :{inst.port}: {e!r}")
                continue
            with lock:
                if inst.killed:
                    counts["killed mid-response"] += 1
                    continue
                counts["responses"] += 1
                if resp.status == 200 and hashlib.sha256(body).hexdigest() == digests[inst.root][name]:
                    counts["whole"] += 1
                elif resp.status >= 500:
                    counts["5xx"] += 1
                    examples.append(f"{name} on :{inst.port}: {resp.status}")
                elif resp.status == 200:
                    counts["wrong"] += 1
                    examples.append(f"{name} on :{inst.port}: 200 with {len(body)} bytes, not the file's")
                else:
                    counts["other"] += 1
                    examples.append(f"{name} on :{inst.port}: {resp.status}")

    threads = [threading.Thread(target=reader, args=(args.seed * 100 + i,)) for i in range(args.readers)]
    for t in threads:
        t.start()
    events = 0
    end = time.monotonic() + args.seconds
    try:
        while time.monotonic() < end:
            time.sleep(rng.uniform(0.5, 2.0))
            with lock:
                victim = rng.choice(live) if live else None
                if victim:
                    live.remove(victim)
                    victim.killed = True
            if victim:
                victim.kill()
            fresh = Instance(args.exe, rng.choice(roots), env)
            with lock:
                live.append(fresh)
            events += 1
    finally:
        stop.set()
        for t in threads:
            t.join()
        for inst in live:
            inst.kill()
    folders = [d for d in os.listdir(tmp) if d.startswith("peregrine-copies-")]
    print(f"instances {args.instances}, {events} kill-and-start events in {args.seconds:.0f} s, {args.readers} readers")
    for k, v in counts.items():
        print(f"  {k}: {v}")
    print(f"  copy folders left after the last kill: {len(folders)} (removed by the next server that starts)")
    for e in examples[:10]:
        print("  e.g. " + e)
    shutil.rmtree(work, ignore_errors=True)
    bad = counts["wrong"] + counts["5xx"] + counts["other"] + counts["errors"]
    sys.exit(1 if bad or counts["whole"] == 0 else 0)


if __name__ == "__main__":
    main()
