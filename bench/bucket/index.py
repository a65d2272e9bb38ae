#!/usr/bin/env python3
"""Index time for 10,000 objects and memory per indexed object, from a bucket and from disk.

index.py [--exe AOT] [--objects 10000] [--reps 3] [--settle 5]

A private Ceph RGW holds two prefixes of one bucket: empty/ (one object, robots.txt, so that the
copy is not empty) and full/ (that object and --objects more of 100-2,000 bytes in 100 folders).
For each repetition the server (--metrics on) is started on each, one at a time, then on a local
folder with the same files:

  ready    process start to the first /healthz 200: the bucket listed, every object downloaded
           to the private copy, the copy indexed (the "Copied ... in N ms" log line gives the
           copy's part);
  memory   --settle seconds after ready, the process's VmRSS and dotnet_gc_heap_size_bytes from
           /metrics (the GC heap after the last collection, so it lags).

Per object = (full - empty) / objects, each repetition, the median reported. Not part of CI.
"""

import argparse
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import log  # noqa: E402


def gc_heap(server: common.Server) -> int:
    status, body = server.get("/metrics")
    match = re.search(rb"^dotnet_gc_heap_size_bytes (\d+)", body, re.M)
    return int(match.group(1)) if status == 200 and match else -1


def measure(command: list[str], args: list[str], endpoint: str | None, settle: float) -> tuple[float, int, int, str]:
    server = common.Server(command, args + ["--metrics"], endpoint)
    try:
        ready = server.ready()
        time.sleep(settle)
        rss, heap = server.rss_kib(), gc_heap(server)
        copied = next((m.group(1) for line in server.lines if (m := re.search(r"Copied .* in (\d+) ms", line))), "-")
        return ready, rss, heap, copied
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exe", help="the Native AOT executable (default: the JIT build of src/Peregrine.Server)")
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--settle", type=float, default=5)
    args = parser.parse_args()
    command = common.server_command(args.exe)
    rng = random.Random(7)
    base = {"robots.txt": b"User-agent: *\n"}
    full = dict(base)
    for i in range(args.objects):
        full[f"p{i % 100}/o{i}.{('html', 'css', 'js', 'txt')[i % 4]}"] = rng.randbytes(rng.randint(100, 2000))
    work = tempfile.mkdtemp(prefix="peregrine-bench-index-")
    common.write_tree(os.path.join(work, "empty"), base)
    common.write_tree(os.path.join(work, "full"), full)
    try:
        with common.Ceph() as ceph:
            bucket = ceph.bucket()
            took = common.upload(ceph.s3, bucket, {f"empty/{k}": v for k, v in base.items()}
                                 | {f"full/{k}": v for k, v in full.items()})
            log(f"uploaded {len(full) + len(base)} objects in {took:.1f} s")
            rows = []
            for rep in range(1, args.reps + 1):
                for source in ("bucket", "disk"):
                    result = {}
                    for name in ("empty", "full"):
                        if source == "bucket":
                            cmd_args, endpoint = [f"s3://{bucket}/{name}", "--bucket-path-style"], ceph.endpoint
                        else:
                            cmd_args, endpoint = [os.path.join(work, name)], None
                        before = common.load()
                        result[name] = measure(command, cmd_args, endpoint, args.settle)
                        ready, rss, heap, copied = result[name]
                        log(f"rep {rep} {source} {name}: ready in {ready:.2f} s (copy {copied} ms), "
                            f"RSS {rss:,} KiB, GC heap {heap:,} B (load {before})")
                    per_rss = (result["full"][1] - result["empty"][1]) * 1024 / args.objects
                    per_heap = (result["full"][2] - result["empty"][2]) / args.objects
                    rows.append((source, result["full"][0], result["full"][3], per_rss, per_heap))
                    log(f"rep {rep} {source}: {per_rss:,.0f} B RSS and {per_heap:,.0f} B GC heap per object")
            print(f"\n| source | ready with {args.objects:,} objects, s (reps) | of which the copy, ms | "
                  "RSS per object, B (median) | GC heap per object, B (median) |")
            print("| --- | --- | --- | ---: | ---: |")
            for source in ("bucket", "disk"):
                mine = [r for r in rows if r[0] == source]
                print(f"| {source} | {', '.join(f'{r[1]:.2f}' for r in mine)} | {', '.join(r[2] for r in mine)} "
                      f"| {statistics.median(r[3] for r in mine):,.0f} | {statistics.median(r[4] for r in mine):,.0f} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
