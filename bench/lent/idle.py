#!/usr/bin/env python3
"""Resident memory of idle kept-alive connections after one request each: a file the fast path
answers, or a path it lends to Kestrel (a 404). Starts EXE on ROOT at 127.0.0.1:PORT pinned to
CPU 0, opens N connections one after another, each sending one request for PATH and reading its
response whole, then reads the server's VmRSS after 3 s and prints the difference per connection.

    bench/lent/idle.py EXE ROOT PORT N PATH
"""
import resource
import socket
import subprocess
import sys
import time


def main():
    exe, root, port, n, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    server = subprocess.Popen(["taskset", "-c", "0", exe, root, "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def rss():
        with open(f"/proc/{server.pid}/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))

    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        time.sleep(3)
        before = rss()
        request = f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
        connections = []
        status = ""
        for _ in range(n):
            connection = socket.create_connection(("127.0.0.1", port), 2)
            connection.settimeout(5)
            connection.sendall(request)
            received = b""
            while b"\r\n\r\n" not in received:
                received += connection.recv(65536)
            head, _, body = received.partition(b"\r\n\r\n")
            length = int(next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")).split(b":")[1])
            while len(body) < length:
                body += connection.recv(65536)
            status = head.split(b" ")[1].decode()
            connections.append(connection)
        time.sleep(3)
        after = rss()
        print(f"{path} ({status}): {before} KiB before, {after} KiB with {n} idle connections, {(after - before) / n:.2f} KiB a connection")
        for connection in connections:
            connection.close()
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
