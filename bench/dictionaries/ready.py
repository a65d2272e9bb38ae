#!/usr/bin/env python3
"""How long after a deploy the dcz delta is ready, and what it costs in CPU (RFC 9842).

Same set-up as measure.py (an npm package's files under fingerprinted names, then a live update
to the next release). Runs the server twice on the same files: with dictionaries (the default)
and with --no-dictionaries, as the baseline. In each run, once every old file has its final
variants (/healthz "final"), the new release is written and the old files deleted; then it polls
every 20 ms and reports the wall time from the deploy until every new file is served as br
with /healthz "final" (the ordinary variants at their final quality), and (with
dictionaries) until every new file is answered as dcz against the old bytes, and the server's
CPU time (user + system, every thread, from /proc/PID/stat) over the same span, and that of the
one thread that makes the deltas ("Peregrine dictionary deltas", /proc/PID/task/*/comm), which
is the delta's own cost (the whole-process difference between the runs is noisier).

  bench/dictionaries/ready.py --exe PATH [--package bootstrap] [--old 5.3.7] [--new 5.3.8]
      [--file dist/js/bootstrap.bundle.min.js ...] [--port N]
"""
import argparse, base64, hashlib, json, os, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import request, fingerprinted  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def thread_cpu_seconds(pid, prefix):
    """CPU time of the process's threads whose name (comm, 15 characters) starts with prefix."""
    total = 0.0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            if open(f"/proc/{pid}/task/{tid}/comm").read().startswith(prefix):
                fields = open(f"/proc/{pid}/task/{tid}/stat").read().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / TICKS
        except OSError:
            pass
    return total


def run(a, versions, files, dictionaries):
    work = tempfile.mkdtemp(prefix="dictionaries-ready-")
    root = f"{work}/site"
    os.makedirs(root)

    def write(v):
        names = {}
        for f, data in versions[v].items():
            name = fingerprinted(f, data)
            os.makedirs(os.path.dirname(f"{root}/{name}"), exist_ok=True)
            with open(f"{root}/{name}", "wb") as out:
                out.write(data)
            names[f] = "/" + name
        return names

    def final():
        _, _, body = request(a.port, "/healthz", {})
        return json.loads(body).get("compression", {}).get("final") is True

    old_names = write(a.old)
    cmd = ([a.exe] if not a.exe.endswith(".dll") else ["dotnet", a.exe]) + [root, "--port", str(a.port), "-q"]
    if not dictionaries:
        cmd.append("--no-dictionaries")
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                if final():
                    break
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                sys.exit("server never final on the old release")
            time.sleep(0.1)
        time.sleep(1)

        cpu0, delta0, t0 = cpu_seconds(server.pid), thread_cpu_seconds(server.pid, "Peregrine dict"), time.monotonic()
        new_names = write(a.new)
        for name in old_names.values():
            os.remove(root + name)
        browser = {"Accept-Encoding": "gzip, deflate, br, zstd, dcb, dcz", "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "no-cors"}
        ready = {}
        final_at = None
        deadline = time.monotonic() + 300
        while final_at is None or (dictionaries and len(ready) < len(files)):
            # Final: every new file is indexed and answered as br, and /healthz says no better
            # variant is coming (right after the deploy it still says so of the old release).
            if final_at is None and all(request(a.port, new_names[f], {"Accept-Encoding": "br"})[1].get("content-encoding") == "br" for f in files) and final():
                final_at = time.monotonic() - t0
            if dictionaries:
                for f in files:
                    if f not in ready:
                        field = ":" + base64.b64encode(hashlib.sha256(versions[a.old][f]).digest()).decode() + ":"
                        _, headers, _ = request(a.port, new_names[f], dict(browser, **{"Available-Dictionary": field}))
                        if headers.get("content-encoding") == "dcz":
                            ready[f] = time.monotonic() - t0
            if time.monotonic() > deadline:
                sys.exit("no final variants or no dcz after 300 s")
            time.sleep(0.02)
        end = max([final_at] + list(ready.values()))
        cpu = cpu_seconds(server.pid) - cpu0
        return final_at, ready, end, cpu, thread_cpu_seconds(server.pid, "Peregrine dict") - delta0
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--package", default="bootstrap")
    ap.add_argument("--old", default="5.3.7")
    ap.add_argument("--new", default="5.3.8")
    ap.add_argument("--file", action="append")
    ap.add_argument("--port", type=int, default=18292)
    a = ap.parse_args()
    files = a.file or ["dist/js/bootstrap.bundle.min.js", "dist/js/bootstrap.min.js", "dist/css/bootstrap.min.css"]
    fetch = tempfile.mkdtemp(prefix="dictionaries-packages-")
    try:
        versions = {}
        for v in (a.old, a.new):
            subprocess.run(["npm", "pack", f"{a.package}@{v}", "--silent"], cwd=fetch, check=True, stdout=subprocess.DEVNULL)
            os.makedirs(f"{fetch}/{v}")
            subprocess.run(["tar", "xzf", f"{fetch}/{a.package}-{v}.tgz", "-C", f"{fetch}/{v}"], check=True)
            versions[v] = {f: open(f"{fetch}/{v}/package/{f}", "rb").read() for f in files}
    finally:
        shutil.rmtree(fetch, ignore_errors=True)

    base_final, _, base_end, base_cpu, _ = run(a, versions, files, dictionaries=False)
    final_at, ready, end, cpu, delta_cpu = run(a, versions, files, dictionaries=True)
    total = sum(len(versions[a.new][f]) for f in files)
    print(f"{a.package} {a.old} → {a.new}, {len(files)} files, {total:,} B new")
    print("| run | final variants after | every dcz ready after | server CPU, deploy → ready |")
    print("|---|---:|---:|---:|")
    print(f"| --no-dictionaries (baseline) | {base_final:.2f} s | – | {base_cpu:.2f} s |")
    print(f"| dictionaries | {final_at:.2f} s | {max(ready.values()):.2f} s | {cpu:.2f} s |")
    for f in files:
        print(f"  dcz ready for {os.path.basename(f)} after {ready[f]:.2f} s", file=sys.stderr)
    print(f"delta CPU: {delta_cpu:.2f} s on the thread that makes them (\"Peregrine dictionary deltas\"); whole process, difference from the baseline: {cpu - base_cpu:.2f} s")


if __name__ == "__main__":
    main()
