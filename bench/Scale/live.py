#!/usr/bin/env python3
"""How long one changed file takes to become visible in a large tree, and what it costs the server.

live.py [--folders 300] [--per-folder 1000] [--reps 5] [--work /tmp/peregrine-live] [--keep-tree] [--exe AOT]

Writes (or reuses) a tree of FOLDERS x PER_FOLDER small files with make_tree.py, starts the
Peregrine server on it (JIT build, or the AOT executable given by --exe; --no-compression, so the figures are the catalog's alone),
waits for the first index and for the process to go idle, then REPS times: rewrites one file in
place (open with O_TRUNC, write, close), polls it over one keep-alive connection every 2 ms until
the new bytes come back, and reads the server's CPU time (utime + stime from /proc) from just
before the write to one second after it, less the CPU the idle server spent over an equal time
measured just before. Reports each repetition and the medians. Needs a Release build of
src/Peregrine.Server (built here if missing).
"""

import argparse
import http.client
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def server_dll() -> str:
    project = os.path.join(REPO, "src/Peregrine.Server/Peregrine.Server.csproj")
    subprocess.run(["dotnet", "build", "-c", "Release", "-nologo", "-v", "q", project], check=True, stdout=subprocess.DEVNULL)
    return subprocess.run(
        ["dotnet", "msbuild", project, "-nologo", "-getProperty:TargetPath", "-p:Configuration=Release"],
        check=True, capture_output=True, text=True).stdout.strip()


def fetch(conn: http.client.HTTPConnection, path: str) -> bytes:
    conn.request("GET", path)
    response = conn.getresponse()
    return response.read()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--folders", type=int, default=300)
    parser.add_argument("--per-folder", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--work", default="/tmp/peregrine-live")
    parser.add_argument("--keep-tree", action="store_true")
    parser.add_argument("--exe", help="run this Native AOT executable instead of the JIT build of src/")
    args = parser.parse_args()

    root = os.path.join(args.work, f"tree-{args.folders}x{args.per_folder}")
    if not os.path.isdir(root):
        print(f"writing {args.folders * args.per_folder} files under {root}", flush=True)
        subprocess.run([sys.executable, os.path.join(HERE, "make_tree.py"), root, str(args.folders), str(args.per_folder)], check=True)

    program = [os.path.abspath(args.exe)] if args.exe else ["dotnet", server_dll()]
    server = subprocess.Popen(
        [*program, root, "--port", "0", "--no-compression"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        port = None
        indexed = None
        started = time.monotonic()
        while port is None or indexed is None:
            line = server.stdout.readline()
            if not line:
                sys.exit("the server exited before it was ready")
            print("  server: " + line.rstrip(), flush=True)
            if m := re.search(r"Indexed (\d+) files .* in (\d+) ms", line):
                indexed = (int(m.group(1)), int(m.group(2)))
            if m := re.search(r"http://127\.0\.0\.1:(\d+)", line):
                port = int(m.group(1))
            if time.monotonic() - started > 600:
                sys.exit("no index within 10 minutes")

        # The log is not read from here on; a thread would be needed to keep the pipe drained,
        # and the server writes nothing per change at the default level.
        conn = http.client.HTTPConnection("127.0.0.1", port)
        folder = args.folders // 2
        relative = f"/d{folder:04d}/f{args.per_folder // 2:04d}.txt"
        fetch(conn, relative)
        time.sleep(3)  # let the start-up collection and JIT settle

        latencies, costs = [], []
        for rep in range(args.reps):
            idle0 = cpu_seconds(server.pid)
            time.sleep(1.5)
            idle_rate = (cpu_seconds(server.pid) - idle0) / 1.5

            content = f"changed {rep} at {time.time()}\n".encode() * 3
            cpu0 = cpu_seconds(server.pid)
            t0 = time.monotonic()
            fd = os.open(root + relative, os.O_WRONLY | os.O_TRUNC)
            os.write(fd, content)
            os.close(fd)
            while True:
                if fetch(conn, relative) == content:
                    break
                if time.monotonic() - t0 > 30:
                    sys.exit("the change was not visible within 30 s")
                time.sleep(0.002)
            visible = time.monotonic() - t0
            time.sleep(max(0.0, 1.0 - visible))
            elapsed = time.monotonic() - t0
            cost = cpu_seconds(server.pid) - cpu0 - idle_rate * elapsed
            latencies.append(visible * 1000)
            costs.append(cost * 1000)
            print(f"rep {rep + 1}: visible after {visible * 1000:.0f} ms, server CPU {cost * 1000:.0f} ms (idle rate {idle_rate * 1000:.1f} ms/s)", flush=True)

        print(f"tree {indexed[0]} files (first index {indexed[1]} ms): median visible {statistics.median(latencies):.0f} ms "
              f"(min {min(latencies):.0f}, max {max(latencies):.0f}); median server CPU {statistics.median(costs):.0f} ms "
              f"(min {min(costs):.0f}, max {max(costs):.0f}); load {os.getloadavg()[0]:.1f}")
    finally:
        server.terminate()
        server.wait()
        if not args.keep_tree:
            subprocess.run(["rm", "-rf", root])


if __name__ == "__main__":
    main()
