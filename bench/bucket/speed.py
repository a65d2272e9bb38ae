#!/usr/bin/env python3
"""Serving from a bucket against serving the same files from disk: the same cells, in the same run.

speed.py [--exe AOT] [--secs 10] [--reps 3] [--conns 8] [--files 1000]

One site (--files files, among them 3.5 KB, 31 KB and 130 KB cell files) is written to a local
folder and uploaded to a private Ceph RGW under site/. Two servers, the same executable with the
same options, run side by side, both pinned to CPU 0: one serves the folder, one serves
s3://BUCKET/site (a copy kept current by polling every 10 s, the default). wrk runs pinned to
CPU 1 (-t1 -cCONNS, keep-alive, no Accept-Encoding: the identity bodies). Cells run interleaved:
for each repetition, for each size, disk then bucket (bucket first in even repetitions). Reported:
requests/s per cell, the load average before each, and the median ratio bucket/disk per size.
Not part of CI.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import log  # noqa: E402

CELLS = [("3.5 KB", "cell/page.html", 3_500), ("31 KB", "cell/app.js", 31_000), ("130 KB", "cell/style.css", 130_000)]


def wrk(port: int, path: str, secs: int, conns: int) -> float:
    out = subprocess.run(["taskset", "-c", "1", "wrk", "-t1", f"-c{conns}", f"-d{secs}s", "--timeout", "10s",
                          f"http://127.0.0.1:{port}/{path}"], capture_output=True, text=True, timeout=secs + 60).stdout
    if "Non-2xx" in out or "Socket errors" in out:
        sys.exit("wrk saw errors:\n" + out)
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exe", help="the Native AOT executable (default: the JIT build of src/Peregrine.Server)")
    parser.add_argument("--secs", type=int, default=10)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--conns", type=int, default=8)
    parser.add_argument("--files", type=int, default=1000)
    args = parser.parse_args()
    command = common.server_command(args.exe)
    work = tempfile.mkdtemp(prefix="peregrine-bench-speed-")
    files = common.site(args.files, "r1")
    for _, path, size in CELLS:
        files[path] = bytes(32 + (i * 7) % 95 for i in range(size))
    root = os.path.join(work, "site")
    common.write_tree(root, files)
    servers: list[common.Server] = []
    try:
        with common.Ceph() as ceph:
            bucket = ceph.bucket()
            log(f"uploaded {len(files)} files in {common.upload(ceph.s3, bucket, {'site/' + p: b for p, b in files.items()}):.1f} s")
            disk = common.Server(command, [root], cpu="0")
            from_bucket = common.Server(command, [f"s3://{bucket}/site", "--bucket-path-style"], ceph.endpoint, cpu="0")
            servers = [disk, from_bucket]
            disk.ready()
            from_bucket.ready()
            for _, path, _ in CELLS:
                for server in servers:
                    status, body = server.get("/" + path)
                    if status != 200 or body != files[path]:
                        sys.exit(f"/{path} is not served whole ({status})")
            rows = []
            for rep in range(1, args.reps + 1):
                for label, path, _ in CELLS:
                    order = [("disk", disk), ("bucket", from_bucket)]
                    for source, server in order if rep % 2 else order[::-1]:
                        before = common.load()
                        rps = wrk(server.port, path, args.secs, args.conns)
                        rows.append((rep, label, source, rps, before))
                        log(f"rep {rep} {label} {source}: {rps:,.0f} requests/s (load {before})")
            print("\n| size | disk requests/s (each rep) | bucket requests/s (each rep) | bucket/disk, median of the reps |")
            print("| --- | --- | --- | ---: |")
            for label, _, _ in CELLS:
                d = [r[3] for r in rows if r[1] == label and r[2] == "disk"]
                b = [r[3] for r in rows if r[1] == label and r[2] == "bucket"]
                ratios = [y / x for x, y in zip(d, b)]
                print(f"| {label} | {', '.join(f'{v:,.0f}' for v in d)} | {', '.join(f'{v:,.0f}' for v in b)} "
                      f"| {statistics.median(ratios):.3f} ({', '.join(f'{r:.2f}' for r in ratios)}) |")
            print(f"\nload averages before each cell: {', '.join(r[4].split()[0] for r in rows)}")
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
