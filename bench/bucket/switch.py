#!/usr/bin/env python3
"""Deploy to served: how long after the pointer names a new release every replica serves it.

switch.py [--exe AOT] [--files 7000] [--changed 100] [--reps 5] [--poll 5] [--modes polling,notifications] [--verbose]

A site of --files files is uploaded to a private Ceph RGW as release r1 and named by the pointer
object. Then, twice over, three servers read it:

  polling        --bucket-poll --poll (5 s, the server's default), no notifications;
  notifications  --bucket-poll 0 and --bucket-notify: right after the pointer is written, the
                 script posts the S3 event a bucket notification would (ObjectCreated:Put of the
                 pointer object) to each replica's endpoint, as the notifier would.

Each repetition uploads a new release (index.html and --changed other files changed; the rest
copied within the bucket, as a release is whole under its own prefix), waits a random 0-2 s, then
writes the pointer at time 0 and polls each replica's /index.html (every 10 ms) until it shows the
new release. Reported per repetition: the time for each replica and for the last of the three.
Not part of CI.
"""

import argparse
import concurrent.futures
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import log  # noqa: E402

EVENTS = "/_peregrine/bucket-events"


def new_release(ceph: common.Ceph, bucket: str, base: dict[str, bytes], previous: str, name: str, changed: int) -> None:
    paths = list(base)
    fresh = {"index.html": f"/index.html {name}\n".encode()}
    for path in random.sample(paths[1:], changed):
        fresh[path] = f"/{path} {name}\n".encode() + os.urandom(random.randint(10, 4000))
    common.upload(ceph.s3, bucket, {f"site/releases/{name}/{p}": b for p, b in fresh.items()})
    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        list(pool.map(lambda p: ceph.s3.copy_object(Bucket=bucket, Key=f"site/releases/{name}/{p}",
                                                    CopySource={"Bucket": bucket, "Key": f"site/releases/{previous}/{p}"}),
                      [p for p in paths if p not in fresh]))


def measure(ceph: common.Ceph, command: list[str], mode: str, args) -> list[float]:
    bucket = ceph.bucket()
    base = common.site(args.files, "r1")
    log(f"{mode}: uploading r1 ({len(base)} files) in {common.release(ceph.s3, bucket, 'r1', base):.1f} s")
    ceph.s3.put_object(Bucket=bucket, Key="site/current", Body=b"r1")
    notify = mode == "notifications"
    servers = common.replicas(command, ceph.endpoint, bucket, 0 if notify else args.poll, notify=notify)
    lasts = []
    try:
        log(f"{mode}: replicas ready after " + ", ".join(f"{s.ready():.1f} s" for s in servers))
        previous = "r1"
        seen = [len(server.lines) for server in servers]
        for rep in range(1, args.reps + 1):
            name = f"r{rep + 1}"
            new_release(ceph, bucket, base, previous, name, args.changed)
            time.sleep(random.uniform(0, 2))
            before = common.load()
            named = time.monotonic()
            ceph.s3.put_object(Bucket=bucket, Key="site/current", Body=name.encode())
            if notify:
                for server in servers:
                    server.post(EVENTS, common.event(bucket, "site/current"))
            want = f"/index.html {name}\n".encode()
            taken: dict[int, float] = {}
            while len(taken) < len(servers) and time.monotonic() - named < 120:
                for i, server in enumerate(servers):
                    if i not in taken and server.get("/index.html")[1] == want:
                        taken[i] = time.monotonic() - named
                time.sleep(0.01)
            if len(taken) < len(servers):
                sys.exit(f"{mode}: {name} not served by every replica within 120 s")
            lasts.append(max(taken.values()))
            log(f"{mode} rep {rep}: {name} served after " + ", ".join(f"{taken[i]:.2f}" for i in sorted(taken))
                + f" s; all three at {lasts[-1]:.2f} s (load {before} -> {common.load()})")
            if args.verbose:
                for i, server in enumerate(servers):
                    # Counted by what was printed: a line the reader adds meanwhile is printed next time.
                    lines = server.lines[seen[i]:]
                    seen[i] += len(lines)
                    for line in lines:
                        if "Copied" in line or "Indexed" in line:
                            log(f"  replica {i}: {line.strip()}")
            previous = name
    finally:
        for server in servers:
            server.stop()
    return lasts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exe", help="the Native AOT executable (default: the JIT build of src/Peregrine.Server)")
    parser.add_argument("--files", type=int, default=7000)
    parser.add_argument("--changed", type=int, default=100)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--poll", type=float, default=5)
    parser.add_argument("--modes", default="polling,notifications")
    parser.add_argument("--verbose", action="store_true", help="print each replica's copy and index times after each repetition")
    args = parser.parse_args()
    command = common.server_command(args.exe)
    results = {}
    with common.Ceph() as ceph:
        for mode in args.modes.split(","):
            results[mode] = measure(ceph, command, mode, args)
    for mode, lasts in results.items():
        print(f"{mode}: every replica on the new release after a median of {statistics.median(lasts):.2f} s, "
              f"at most {max(lasts):.2f} s ({', '.join(f'{v:.2f}' for v in lasts)})")


if __name__ == "__main__":
    main()
