#!/usr/bin/env python3
"""Footprint of one server: time to first response, idle RSS, RSS after load, and the
memory each idle connection costs. Only 127.0.0.1 is contacted; every step is bounded.

  footprint.py --name aot --port 18300 [--site DIR] [--load-path /f.bin] -- CMD ARGS...

Prints one tab-separated line per measurement (name, what, value); bench/footprint/run
starts the servers and collects the lines.
"""
import argparse, os, resource, signal, socket, subprocess, sys, time, shutil


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def tree_rss_kib(pid):
    # nginx: the master and its worker; otherwise the one process.
    total = rss_kib(pid)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        total += rss_kib(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return total


def get(port, path, timeout=1.0):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return data.split(b" ", 2)[1] if data.startswith(b"HTTP/1.1 ") else b""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--probe", default="/")
    ap.add_argument("--load-path", default=None, help="file for the wrk load (default: no load)")
    ap.add_argument("--load-seconds", type=int, default=20)
    ap.add_argument("--load-connections", type=int, default=125)
    ap.add_argument("--settle", type=float, default=5.0, help="seconds between first response and the idle reading")
    ap.add_argument("--idle-connections", type=int, default=10000)
    ap.add_argument("--cpu", default="0")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, a.idle_connections * 2 + 1024)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))

    def out(what, value):
        print(f"{a.name}\t{what}\t{value}", flush=True)

    start = time.monotonic()
    proc = subprocess.Popen(["taskset", "-c", a.cpu, *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        first = None
        while time.monotonic() - start < 30:
            try:
                if get(a.port, a.probe, 0.5) == b"200":
                    first = time.monotonic() - start
                    break
            except OSError:
                pass
            if proc.poll() is not None:
                break
            time.sleep(0.002)
        if first is None:
            out("error", "no 200 within 30 s")
            return 1
        out("first_response_ms", f"{first * 1000:.0f}")
        time.sleep(a.settle)
        idle = tree_rss_kib(proc.pid)
        out("idle_rss_kib", idle)

        if a.load_path and shutil.which("wrk"):
            subprocess.run(["taskset", "-c", "1", "wrk", "-t1", f"-c{a.load_connections}", f"-d{a.load_seconds}s",
                            f"http://127.0.0.1:{a.port}{a.load_path}"], stdout=subprocess.DEVNULL, timeout=a.load_seconds + 30)
            out("rss_after_load_kib", tree_rss_kib(proc.pid))
        if a.idle_connections:
            conns = []
            try:
                for i in range(a.idle_connections):
                    s = socket.create_connection(("127.0.0.1", a.port), timeout=5)
                    if i % 2:
                        s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # a head not yet finished
                    conns.append(s)
                time.sleep(2)
                with_conns = tree_rss_kib(proc.pid)
                alive = 0
                for s in conns:
                    s.setblocking(False)
                    try:
                        alive += s.recv(1) == b"" and 0 or 1
                    except BlockingIOError:
                        alive += 1
                    except OSError:
                        pass
                out("idle_connections", len(conns))
                out("idle_connections_open", alive)
                out("rss_with_idle_connections_kib", with_conns)
                out("per_idle_connection_kib", f"{(with_conns - idle) / len(conns):.2f}")
            finally:
                for s in conns:
                    s.close()
            time.sleep(2)

        return 0
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(main())
