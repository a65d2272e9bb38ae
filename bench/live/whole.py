#!/usr/bin/env python3
"""Whole versions under writers: every body a reader receives must be one whole version of its file.

whole.py cp     [--secs 15] [--readers 4] [--every 0.05] [--exe AOT]
whole.py churn  [--secs 30] [--readers 8] [--exe AOT]

cp: `cp` onto an existing 2 MB file and a 200 KB file in place (cp opens with O_TRUNC and
rewrites), alternating between two versions of each, every --every seconds, while readers fetch
both files. churn: 16 files of 13-200 KB rewritten in place, truncated and rewritten, replaced by
rename, deleted and recreated, in a loop, under --readers readers; also measures how long each
new, changed or deleted file takes to show (a watcher thread polls each change until it shows).

Every 200 must carry a body equal to a version that was written (by SHA-256), with its full
Content-Length. Reported per outcome: whole (200, a known version), WRONG (200, bytes of no
version: must be 0), 404 (churn deletes files), 503 (a file sent from disk with no copy of its
published version, Watch.MaxCopiedFileSize / Watch.CopyBudget, while a writer is at it: the
answer says to retry), cut (the connection closed before the body's end: a response read from
such an original is aborted when the file changes under it), errors. Then how many whole
responses carried each version (cp: v0 and v1 of each file; churn: how many distinct versions
were served), which shows that the new versions are published, not only the first.
Starts the server itself (JIT build of src/Peregrine.Server, or the Native AOT executable given
by --exe; --no-compression) on a fresh tree under /tmp; not part of CI.
"""

import argparse
import hashlib
import http.client
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "bench", "Scale"))
from live import server_dll  # noqa: E402  (the same Release build of the server)


EXE = None  # --exe: the AOT executable to run instead of the JIT build


def start(root: str) -> tuple[subprocess.Popen, int]:
    program = [os.path.abspath(EXE)] if EXE else ["dotnet", server_dll()]
    server = subprocess.Popen(program + [root, "--port", "0", "--no-compression"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    port, indexed = None, False
    while port is None or not indexed:
        line = server.stdout.readline()
        if not line:
            sys.exit("the server exited before it was ready")
        indexed |= "Indexed" in line
        if m := re.search(r"http://127\.0\.0\.1:(\d+)", line):
            port = int(m.group(1))
    threading.Thread(target=lambda: [None for _ in server.stdout], daemon=True).start()
    return server, port


def blob(seed: str, size: int) -> bytes:
    out = bytearray()
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(f"{seed}/{counter}".encode()).digest()
        counter += 1
    return bytes(out[:size])


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: dict[str, int] = {}
        self.examples: list[str] = []
        self.versions: dict[tuple[str, str], int] = {}

    def served(self, path: str, digest: str) -> None:
        with self.lock:
            self.versions[(path, digest)] = self.versions.get((path, digest), 0) + 1

    def add(self, outcome: str, detail: str = "") -> None:
        with self.lock:
            self.counts[outcome] = self.counts.get(outcome, 0) + 1
            if outcome in ("WRONG", "error") and len(self.examples) < 5:
                self.examples.append(f"{outcome}: {detail}")


def reader(port: int, paths: list[str], known: dict[str, set[str]], known_lock: threading.Lock, tally: Tally, stop: threading.Event) -> None:
    conn = None
    rng = random.Random()
    while not stop.is_set():
        path = rng.choice(paths)
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("GET", path)
            response = conn.getresponse()
            status = response.status
            length = response.getheader("Content-Length")
            try:
                body = response.read()
            except http.client.IncompleteRead:
                tally.add("cut")
                conn.close()
                conn = None
                continue
            if status == 200:
                if length is not None and int(length) != len(body):
                    tally.add("cut")
                    continue
                digest = hashlib.sha256(body).hexdigest()
                with known_lock:
                    ok = digest in known[path]
                tally.add("whole" if ok else "WRONG", f"{path}: {len(body)} bytes, ETag {response.getheader('ETag')}")
                if ok:
                    tally.served(path, digest)
            elif status in (404, 503):
                tally.add(str(status))
            else:
                tally.add("error", f"{path}: status {status}")
            if response.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = None
        except (ConnectionError, http.client.HTTPException, OSError) as ex:
            tally.add("cut" if isinstance(ex, (ConnectionResetError, http.client.RemoteDisconnected, BrokenPipeError)) else "error", f"{path}: {ex!r}")
            if conn is not None:
                conn.close()
            conn = None


def run_cp(args: argparse.Namespace) -> None:
    root = tempfile.mkdtemp(prefix="peregrine-whole-")
    sources = tempfile.mkdtemp(prefix="peregrine-whole-src-")
    files = {"/big.bin": 2 * 1024 * 1024, "/small.bin": 200 * 1024}
    known: dict[str, set[str]] = {}
    versions: dict[str, list[str]] = {}
    labels: dict[str, str] = {}
    for path, size in files.items():
        known[path] = set()
        versions[path] = []
        for v in range(2):
            data = blob(f"{path}/{v}", size)
            source = os.path.join(sources, f"{path[1:]}.{v}")
            with open(source, "wb") as f:
                f.write(data)
            known[path].add(hashlib.sha256(data).hexdigest())
            labels[hashlib.sha256(data).hexdigest()] = f"v{v}"
            versions[path].append(source)
        shutil.copyfile(versions[path][0], root + path)
    server, port = start(root)
    tally, stop, lock = Tally(), threading.Event(), threading.Lock()
    threads = [threading.Thread(target=reader, args=(port, list(files), known, lock, tally, stop)) for _ in range(args.readers)]
    for t in threads:
        t.start()
    copies = 0
    deadline = time.monotonic() + args.secs
    try:
        while time.monotonic() < deadline:
            for path in files:
                subprocess.run(["cp", versions[path][copies % 2], root + path], check=True)
            copies += 1
            time.sleep(args.every)
    finally:
        stop.set()
        for t in threads:
            t.join()
        server.terminate()
        server.wait()
        shutil.rmtree(root)
        shutil.rmtree(sources)
    report(tally, f"cp in place: {copies} copies of each file over {args.secs} s, {args.readers} readers")
    print("  whole responses by version: " + ", ".join(
        f"{path} {labels[digest]} {count}" for (path, digest), count in sorted(tally.versions.items(), key=lambda kv: (kv[0][0], labels[kv[0][1]]))))


def run_churn(args: argparse.Namespace) -> None:
    root = tempfile.mkdtemp(prefix="peregrine-churn-")
    count = 16
    sizes = [13 * 1024 + i * (187 * 1024) // (count - 1) for i in range(count)]
    paths = [f"/f{i:02d}.bin" for i in range(count)]
    known: dict[str, set[str]] = {p: set() for p in paths}
    lock = threading.Lock()

    def version(i: int, generation: int) -> bytes:
        data = blob(f"{i}/{generation}", sizes[i] if generation % 3 else sizes[i] // 2)
        with lock:
            known[paths[i]].add(hashlib.sha256(data).hexdigest())
        return data

    for i in range(count):
        with open(root + paths[i], "wb") as f:
            f.write(version(i, 0))
    server, port = start(root)
    tally, stop = Tally(), threading.Event()
    threads = [threading.Thread(target=reader, args=(port, paths, known, lock, tally, stop)) for _ in range(args.readers)]
    for t in threads:
        t.start()

    visibility: list[float] = []
    late: list[str] = []

    def watch(path: str, expect: bytes | None, since: float, token: int) -> None:
        # How long until the change shows: the expected bytes, or a 404 for a deletion. A later
        # change to the same file ends the wait (the file moved on), counted as neither.
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        digest = hashlib.sha256(expect).hexdigest() if expect is not None else None
        while time.monotonic() - since < 5 and not stop.is_set():
            try:
                conn.request("GET", path)
                response = conn.getresponse()
                body = response.read()
            except (ConnectionError, http.client.HTTPException, OSError):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                continue
            if (expect is None and response.status == 404) or (expect is not None and response.status == 200 and hashlib.sha256(body).hexdigest() == digest):
                visibility.append(time.monotonic() - since)
                return
            if generation_of[path] != token:
                return
            time.sleep(0.005)
        if not stop.is_set() and generation_of[path] == token:
            late.append(path)

    generation_of = {p: 0 for p in paths}
    rng = random.Random(1)
    generation = 0
    deadline = time.monotonic() + args.secs
    watchers: list[threading.Thread] = []
    try:
        while time.monotonic() < deadline:
            generation += 1
            i = rng.randrange(count)
            path = paths[i]
            full = root + path
            kind = generation % 4
            if kind == 0:
                data = version(i, generation)
                with open(full, "r+b" if os.path.exists(full) else "wb") as f:
                    f.write(data)
                    f.truncate()
            elif kind == 1:
                data = version(i, generation)
                with open(full, "wb") as f:
                    f.write(data[: len(data) // 2])
                    f.flush()
                    time.sleep(0.002)
                    f.write(data[len(data) // 2:])
            elif kind == 2:
                data = version(i, generation)
                with open(full + ".tmp", "wb") as f:
                    f.write(data)
                os.rename(full + ".tmp", full)
            else:
                data = None
                if os.path.exists(full):
                    os.unlink(full)
            generation_of[path] = generation
            # Sample one change in four for visibility, so the watchers do not outnumber the readers.
            if generation % 4 == 1 or kind == 3:
                t = threading.Thread(target=watch, args=(path, data, time.monotonic(), generation))
                t.start()
                watchers.append(t)
            time.sleep(0.01)
    finally:
        stop.set()
        for t in threads + watchers:
            t.join()
        server.terminate()
        server.wait()
        shutil.rmtree(root)
    seen = sorted(visibility)
    extra = (f"; {generation} changes; visible after median {statistics.median(seen) * 1000:.0f} ms, "
             f"max {seen[-1] * 1000:.0f} ms ({len(seen)} sampled), later than 5 s: {len(late)}") if seen else ""
    report(tally, f"churn: {count} files, {args.readers} readers, {args.secs} s{extra}")
    written = sum(len(v) for v in known.values())
    print(f"  versions served whole: {len(tally.versions)} of {written} written")


def report(tally: Tally, title: str) -> None:
    total = sum(tally.counts.values())
    print(title)
    print(f"  responses {total}: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.counts.items())))
    for example in tally.examples:
        print("  " + example)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["cp", "churn"])
    parser.add_argument("--secs", type=float)
    parser.add_argument("--readers", type=int)
    parser.add_argument("--every", type=float, default=0.05)
    parser.add_argument("--exe", help="run this Native AOT executable instead of the JIT build of src/")
    args = parser.parse_args()
    global EXE
    EXE = args.exe
    if args.mode == "cp":
        args.secs = args.secs or 15
        args.readers = args.readers or 4
        run_cp(args)
    else:
        args.secs = args.secs or 30
        args.readers = args.readers or 8
        run_churn(args)


if __name__ == "__main__":
    main()
