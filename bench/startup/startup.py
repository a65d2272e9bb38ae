#!/usr/bin/env python3
"""Time from exec to the first 200 response, median of several starts, for one or more servers.

  startup.py [--reps 7] [--port 18310] [--probe /] [--cpu LIST] --server 'NAME=COMMAND' ...

COMMAND is split as a shell would split it; {port} in it becomes the port. With several
servers the starts alternate (A, B, A, B, ...), so that a change in the machine's load touches
each alike. Each start: read the clock, start the command, then poll 127.0.0.1:PORT every
millisecond with a new connection and "GET PROBE HTTP/1.1" until the answer is 200; then stop
the server (SIGTERM to its process group, SIGKILL after 15 s) and wait a second. The load
average is read before the first start and after the last, since a busy machine (2 cores,
shared) moves these figures by tens of milliseconds.

Prints one line per start, then a Markdown table: median, min and max per server. Only
127.0.0.1 is contacted; every wait is bounded.
"""
import argparse, os, shlex, signal, socket, statistics, subprocess, sys, time


def status(port, probe, timeout):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(f"GET {probe} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        data = s.recv(64)
    return data.split(b" ", 2)[1] if data.startswith(b"HTTP/1.1 ") else b""


def one_start(cmd, port, probe, cpu):
    prefix = ["taskset", "-c", cpu] if cpu else []
    start = time.monotonic()
    proc = subprocess.Popen([*prefix, *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        while time.monotonic() - start < 30:
            try:
                if status(port, probe, 1.0) == b"200":
                    return (time.monotonic() - start) * 1000
            except OSError:
                pass
            if proc.poll() is not None:
                return None
            time.sleep(0.001)
        return None
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        except ProcessLookupError:
            pass


def load_average():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--port", type=int, default=18310)
    ap.add_argument("--probe", default="/")
    ap.add_argument("--cpu", default="", help="taskset CPU list for the servers (default: not pinned)")
    ap.add_argument("--server", action="append", required=True, metavar="NAME=COMMAND")
    a = ap.parse_args()

    servers = []
    for spec in a.server:
        name, _, command = spec.partition("=")
        servers.append((name, [part.replace("{port}", str(a.port)) for part in shlex.split(command)]))

    times = {name: [] for name, _ in servers}
    before = load_average()
    for i in range(a.reps):
        for name, cmd in servers:
            ms = one_start(cmd, a.port, a.probe, a.cpu)
            print(f"{name} start {i + 1}: " + (f"{ms:.1f} ms" if ms is not None else "no 200 within 30 s"), flush=True)
            if ms is None:
                return 1
            times[name].append(ms)
            time.sleep(1)
    after = load_average()

    print(f"\n| server | first response, median of {a.reps} (ms) | min-max (ms) |")
    print("|---|---:|---:|")
    for name, v in times.items():
        print(f"| {name} | {statistics.median(v):.1f} | {min(v):.1f}-{max(v):.1f} |")
    print(f"\nload average (1 min) {before} before, {after} after; probe GET {a.probe}"
          + (f"; servers pinned to CPU {a.cpu}" if a.cpu else "; servers not pinned"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
