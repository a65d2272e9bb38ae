#!/usr/bin/env python3
"""The S3 server stopped under load: three replicas behind haproxy must give 0 errors and 0 wrong bytes.

outage.py [--exe AOT] [--files 7000] [--down 30] [--secs 110] [--poll 10] [--conns 8]

A site of --files files (release r1) is uploaded to a private Ceph RGW and named by the pointer
object; three servers serve it (--bucket-poll --poll) behind haproxy. wrk (bench/bucket/check.lua,
one connection a thread) fetches files at random through haproxy for --secs seconds and checks
every body against the bytes uploaded. 10 s in, radosgw (this run's own, by its pid) is stopped
for --down seconds, then started again, and at once release r2 (index.html and 200 other files
changed, uploaded before the load began) is named by the pointer: the times for each replica to
read the bucket again (/healthz) and to serve r2 are measured, while wrk goes on checking. Reported: requests,
right, wrong, statuses other than 200, socket errors, and the pickup time. Not part of CI.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import log  # noqa: E402


def reachable(server: common.Server) -> bool:
    try:
        status, body = server.get("/healthz")
        return status == 200 and json.loads(body)["bucket"]["reachable"]
    except (OSError, ValueError, KeyError):
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exe", help="the Native AOT executable (default: the JIT build of src/Peregrine.Server)")
    parser.add_argument("--files", type=int, default=7000)
    parser.add_argument("--down", type=float, default=30)
    parser.add_argument("--secs", type=int, default=110)
    parser.add_argument("--poll", type=float, default=10)
    parser.add_argument("--conns", type=int, default=8)
    args = parser.parse_args()
    command = common.server_command(args.exe)
    work = tempfile.mkdtemp(prefix="peregrine-bench-outage-")
    r1 = common.site(args.files, "r1")
    r2 = dict(r1)
    for i, path in enumerate(list(r1)[:: max(1, len(r1) // 200)]):
        r2[path] = f"/{path} r2\n".encode() + os.urandom(100 + i)
    common.write_tree(os.path.join(work, "tree", "r1"), r1)
    common.write_tree(os.path.join(work, "tree", "r2"), {p: b for p, b in r2.items() if b is not r1[p]})
    with open(os.path.join(work, "paths"), "w") as f:
        f.write("\n".join(r1) + "\n")

    servers: list[common.Server] = []
    proxy = None
    try:
        with common.Ceph() as ceph:
            bucket = ceph.bucket()
            log(f"uploading r1: {len(r1)} files in {common.release(ceph.s3, bucket, 'r1', r1):.1f} s")
            changed = {p: b for p, b in r2.items() if b is not r1[p]}
            took = time.monotonic()
            common.upload(ceph.s3, bucket, {f"site/releases/r2/{p}": b for p, b in changed.items()})
            # The unchanged files are copied within the bucket: a release is whole under its own prefix.
            with common.concurrent.futures.ThreadPoolExecutor(32) as pool:
                list(pool.map(lambda p: ceph.s3.copy_object(Bucket=bucket, Key=f"site/releases/r2/{p}",
                                                            CopySource={"Bucket": bucket, "Key": f"site/releases/r1/{p}"}),
                              [p for p in r2 if p not in changed]))
            log(f"uploading r2 ({len(changed)} files changed, the rest copied), not named yet, in {time.monotonic() - took:.1f} s")
            ceph.s3.put_object(Bucket=bucket, Key="site/current", Body=b"r1")
            servers = common.replicas(command, ceph.endpoint, bucket, args.poll)
            log("replicas ready after " + ", ".join(f"{s.ready():.1f} s" for s in servers) + f" (load {common.load()})")
            proxy = common.Haproxy([s.port for s in servers])

            wrk = subprocess.Popen(["wrk", f"-t{args.conns}", f"-c{args.conns}", f"-d{args.secs}s", "--timeout", "10s",
                                    "-s", os.path.join(common.HERE, "check.lua"), f"http://127.0.0.1:{proxy.port}",
                                    "--", os.path.join(work, "paths"), os.path.join(work, "tree")],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            output: list[str] = []
            reader = threading.Thread(target=lambda: output.extend(wrk.stdout), daemon=True)
            reader.start()
            began = time.monotonic()
            time.sleep(10)
            log(f"stopping radosgw for {args.down:.0f} s (t={time.monotonic() - began:.1f} s, load {common.load()})")
            stopped = time.monotonic()
            ceph.rgw("stop")
            log(f"radosgw gone {time.monotonic() - stopped:.1f} s after SIGTERM")
            time.sleep(max(0.0, args.down - (time.monotonic() - stopped)))
            ceph.rgw("start")
            back = time.monotonic()
            log(f"radosgw accepting again {back - stopped:.1f} s after SIGTERM (t={back - began:.1f} s)")

            # The deploy that comes once the store is back: r2 named at once, while the replicas
            # still back off from the outage.
            named = time.monotonic()
            ceph.s3.put_object(Bucket=bucket, Key="site/current", Body=b"r2")
            pending = set(range(len(servers)))
            taken, again = {}, {}
            while pending and time.monotonic() - named < 300:
                for i in set(range(len(servers))) - set(again):
                    if reachable(servers[i]):
                        again[i] = time.monotonic() - back
                for i in list(pending):
                    if servers[i].get("/index.html")[1].startswith(b"/index.html r2\n"):
                        taken[i] = time.monotonic() - named
                        pending.discard(i)
                time.sleep(0.05)
            log("each replica read the bucket again after " + ", ".join(f"{again[i]:.2f} s" for i in sorted(again)))
            log("r2, named as radosgw came back, served by each replica after " + ", ".join(f"{taken[i]:.2f} s" for i in sorted(taken))
                + (f"; NOT by {sorted(pending)}" if pending else "") + f" (named at t={named - began:.1f} s)")
            wrk.wait()
            reader.join(5)
            print("".join(output), end="")
            if named - began > args.secs:
                log("note: r2 was named after wrk had ended: raise --secs to check bytes across the switch")
            log(f"load average at the end: {common.load()}")
    finally:
        if proxy:
            proxy.stop()
        for server in servers:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
