#!/usr/bin/env python3
"""The checks of tests/arm64-smoke/run that need more than curl: a running server at URL, its
root at ROOT (a folder the checks may change). Each check prints one line and exits non-zero on
the first failure; every wait and every socket has a time bound.

    checks.py bytes URL ROOT          every file of ROOT, byte for byte
    checks.py pipelined URL ROOT      three requests in one write, three whole answers in order
    checks.py live URL ROOT           a file added, changed and removed is served so within 30 s
    checks.py rewrite URL ROOT        a 20 MB file rewritten in place while fetched: whole 200s only
"""
import hashlib
import http.client
import os
import random
import socket
import sys
import threading
import time
import urllib.parse

BOUND = 30.0


def fail(message):
    print(f"arm64-smoke: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def get(url, path, timeout=BOUND):
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        connection.request("GET", urllib.parse.quote(path), headers={"Accept-Encoding": "identity"})
        response = connection.getresponse()
        return response.status, response.read(), dict((k.lower(), v) for k, v in response.getheaders())
    finally:
        connection.close()


def eventually(condition, what):
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    fail(f"not within {BOUND:.0f} s: {what}")


def check_bytes(url, root):
    count = 0
    for folder, folders, files in os.walk(root):
        # Dot-files are not served (docs/serving.md, "Safety"); precompressed sidecars are
        # variants, not files of their own.
        folders[:] = [f for f in folders if not f.startswith(".")]
        for name in files:
            if name.startswith(".") or name.endswith((".br", ".gz", ".zst")):
                continue
            relative = os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")
            with open(os.path.join(folder, name), "rb") as f:
                want = f.read()
            status, body, _ = get(url, "/" + relative)
            if status != 200 or body != want:
                fail(f"GET /{relative}: {status}, {len(body)} bytes where {len(want)} were on disk")
            count += 1
    if count == 0:
        fail(f"no files under {root}")
    print(f"arm64-smoke: {count} files byte for byte")


def check_pipelined(url, root):
    names = sorted(n for n in os.listdir(root) if os.path.isfile(os.path.join(root, n)) and not n.startswith(".") and not n.endswith((".br", ".gz", ".zst")))[:3]
    if len(names) < 3:
        fail("fewer than three files at the root to pipeline")
    parts = urllib.parse.urlsplit(url)
    requests = b"".join(
        f"GET /{n} HTTP/1.1\r\nHost: {parts.netloc}\r\nAccept-Encoding: identity\r\n{'Connection: close' if i == 2 else 'X-Pipelined: yes'}\r\n\r\n".encode()
        for i, n in enumerate(names))
    received = b""
    with socket.create_connection((parts.hostname, parts.port), timeout=BOUND) as s:
        s.sendall(requests)
        while chunk := s.recv(65536):
            received += chunk
    for name in names:
        head, separator, rest = received.partition(b"\r\n\r\n")
        if not separator or not head.startswith(b"HTTP/1.1 200"):
            fail(f"pipelined GET /{name}: no 200 in order ({head[:40]!r})")
        fields = dict(line.split(b":", 1) for line in head.split(b"\r\n")[1:])
        length = int({k.strip().lower(): v for k, v in fields.items()}[b"content-length"])
        with open(os.path.join(root, name), "rb") as f:
            if rest[:length] != f.read():
                fail(f"pipelined GET /{name}: not the file's bytes")
        received = rest[length:]
    if received:
        fail(f"{len(received)} bytes after the third pipelined answer")
    print(f"arm64-smoke: three pipelined requests on one connection, three whole answers in order")


def check_live(url, root):
    path = os.path.join(root, "live-check.txt")
    with open(path, "w") as f:
        f.write("first")
    eventually(lambda: get(url, "/live-check.txt")[:2] == (200, b"first"), "a new file served")
    with open(path, "w") as f:
        f.write("second, longer")
    eventually(lambda: get(url, "/live-check.txt")[:2] == (200, b"second, longer"), "a changed file served new")
    os.remove(path)
    eventually(lambda: get(url, "/live-check.txt")[0] == 404, "a removed file answered 404")
    print("arm64-smoke: a file added, changed and removed, served so")


def check_rewrite(url, root):
    size = 20 * 1024 * 1024
    rng = random.Random(66)
    versions = [rng.randbytes(size + 123), rng.randbytes(size - 77)]
    labels = {hashlib.sha256(v).hexdigest(): f"whole v{i}" for i, v in enumerate(versions)}
    path = os.path.join(root, "big.bin")
    with open(path, "wb") as f:
        f.write(versions[0])
    eventually(lambda: get(url, "/big.bin")[0] == 200, "the 20 MB file served")

    outcomes = {}
    after_last = {}  # what was answered after the last rewrite
    answered = threading.Semaphore(0)
    stop = threading.Event()
    done_writing = threading.Event()
    lock = threading.Lock()

    def reader():
        while not stop.is_set():
            finished = done_writing.is_set()
            try:
                status, body, _ = get(url, "/big.bin")
                outcome = labels.get(hashlib.sha256(body).hexdigest(), "WRONG bytes") if status == 200 else str(status)
            except (OSError, http.client.HTTPException) as error:
                outcome = f"cut short ({type(error).__name__})"
            with lock:
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
                if finished:
                    after_last[outcome] = after_last.get(outcome, 0) + 1
            answered.release()

    readers = [threading.Thread(target=reader, daemon=True) for _ in range(2)]
    for r in readers:
        r.start()
    # Odd, so that the last version is not the first.
    rewrites = 9
    for i in range(1, rewrites + 1):
        # Truncated and written again into the same inode, as an editor or `cp` over it does;
        # two answers between rewrites, so reads overlap every stage of it.
        with open(path, "wb") as f:
            f.write(versions[i % 2])
        for _ in range(2):
            if not answered.acquire(timeout=BOUND):
                fail(f"the readers stopped answering: {outcomes}")
    done_writing.set()
    last = labels[hashlib.sha256(versions[rewrites % 2]).hexdigest()]
    eventually(lambda: after_last.get(last, 0) > 0, f"the last version ({last}) served after the last rewrite ({outcomes})")
    stop.set()
    for r in readers:
        r.join(BOUND)
    if any(not k.startswith("whole") for k in outcomes):
        fail(f"a 20 MB file rewritten in place while fetched: {outcomes}")
    print(f"arm64-smoke: a 20 MB file rewritten in place {rewrites} times while fetched: {sum(outcomes.values())} whole 200s ({outcomes})")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        fail(__doc__)
    {"bytes": check_bytes, "pipelined": check_pipelined, "live": check_live, "rewrite": check_rewrite}[sys.argv[1]](sys.argv[2].rstrip("/"), sys.argv[3])
