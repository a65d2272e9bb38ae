#!/usr/bin/env python3
"""How many TLS records (and HTTP/2 DATA frames) a server sends for one response.

  tls-records.py [--h2] [--requests K] [--port PORT] PATH...

  (--pause S waits S seconds before each request, so that a trace of the server splits by response)

A TLS client built on ssl.MemoryBIO: it reads the raw bytes from the socket itself, so it sees
every record header (5 bytes, in the clear: type, version, length) before OpenSSL decrypts the
record. It sends K requests for each PATH, one after another on one keep-alive connection
(HTTP/1.1 by ALPN, or h2 with --h2), and counts the records that arrive between sending a
request and the end of its response. Response 1 is left out of the summary: TLS 1.3 session
tickets arrive with it. Loopback only; every socket operation has a timeout.

Record sizes are the records' length fields (the ciphertext); the plaintext of a TLS 1.3 record
is 17 bytes less (one content-type byte and the 16-byte AEAD tag), and each record takes 5 more
bytes of header on the wire. Standard library only.
"""
import argparse
import collections
import socket
import ssl
import struct
import sys
import time


class Connection:
    def __init__(self, port, alpn, timeout=10.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.set_alpn_protocols([alpn])
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = ctx.wrap_bio(self.incoming, self.outgoing, server_hostname="127.0.0.1")
        self.raw = b""  # bytes of a record header or body not complete yet
        self.records = []  # (content type, length) of every complete record received
        self.reads = 0  # recv() calls that returned data
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self.flush()
                self.receive()
        self.flush()
        self.alpn = self.tls.selected_alpn_protocol()
        self.version = self.tls.version()
        self.cipher = self.tls.cipher()[0]

    def flush(self):
        data = self.outgoing.read()
        if data:
            self.sock.sendall(data)

    def receive(self):
        data = self.sock.recv(1 << 20)
        if not data:
            raise ConnectionError("server closed the connection")
        self.reads += 1
        self.raw += data
        while len(self.raw) >= 5:
            kind, _, length = struct.unpack("!BHH", self.raw[:5])
            if len(self.raw) < 5 + length:
                break
            self.records.append((kind, length))
            self.raw = self.raw[5 + length:]
        self.incoming.write(data)

    def send(self, data):
        self.tls.write(data)
        self.flush()

    def read_some(self):
        """Decrypted bytes, reading from the socket as needed."""
        while True:
            try:
                return self.tls.read(1 << 20)
            except ssl.SSLWantReadError:
                self.receive()


def http1_exchange(conn, path, buffered):
    conn.send(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    data = buffered
    while b"\r\n\r\n" not in data:
        data += conn.read_some()
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        body += conn.read_some()
    status = int(head.split(b" ")[1])
    return status, length, 0, body[length:]


class H2:
    """Just enough HTTP/2 to GET a path: preface, SETTINGS, big windows, HEADERS, read frames."""

    WINDOW = (1 << 30) - 1  # as h2load's default (-w 30 -W 30)

    def __init__(self, conn):
        self.conn = conn
        self.buffer = b""
        self.stream = 1
        settings = struct.pack("!HI", 4, self.WINDOW)  # SETTINGS_INITIAL_WINDOW_SIZE
        conn.send(
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
            + self.frame(4, 0, 0, settings)
            + self.frame(8, 0, 0, struct.pack("!I", self.WINDOW - 65535))  # connection window
        )

    @staticmethod
    def frame(kind, flags, stream, payload):
        return struct.pack("!I", len(payload))[1:] + struct.pack("!BBI", kind, flags, stream) + payload

    def next_frame(self):
        while len(self.buffer) < 9 or len(self.buffer) < 9 + int.from_bytes(self.buffer[:3], "big"):
            self.buffer += self.conn.read_some()
        length = int.from_bytes(self.buffer[:3], "big")
        kind, flags, stream = struct.unpack("!BBI", self.buffer[3:9])
        payload = self.buffer[9:9 + length]
        self.buffer = self.buffer[9 + length:]
        return kind, flags, stream & 0x7FFFFFFF, payload

    def exchange(self, path):
        def literal(index, value):  # literal header field without indexing, indexed name
            return bytes([index]) + bytes([len(value)]) + value.encode()

        block = b"\x82\x87" + literal(4, path) + literal(1, "127.0.0.1")  # GET, https, :path, :authority
        stream, self.stream = self.stream, self.stream + 2
        self.conn.send(self.frame(1, 0x05, stream, block))  # HEADERS, END_STREAM | END_HEADERS
        status, body, data_frames = 0, 0, []
        while True:
            kind, flags, sid, payload = self.next_frame()
            if kind == 4 and not flags & 1:  # SETTINGS from the server: acknowledge
                self.conn.send(self.frame(4, 1, 0, b""))
            elif kind == 6 and not flags & 1:  # PING: answer
                self.conn.send(self.frame(6, 1, 0, payload))
            elif kind == 7:
                raise ConnectionError("GOAWAY")
            elif sid == stream and kind == 1:
                # :status is the first field the servers send; indexed 8-14 or a literal.
                first = payload[0]
                status = {0x88: 200, 0x89: 204, 0x8A: 206, 0x8B: 304, 0x8C: 400, 0x8D: 404, 0x8E: 500}.get(first, -1)
            elif sid == stream and kind == 0:
                body += len(payload)
                data_frames.append(len(payload) if not flags & 1 else f"{len(payload)} END_STREAM")
            elif sid == stream and kind == 3:
                raise ConnectionError("RST_STREAM")
            if sid == stream and flags & 1 and kind in (0, 1):
                return status, body, data_frames


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=18080)
    p.add_argument("--h2", action="store_true", help="h2 by ALPN instead of http/1.1")
    p.add_argument("--requests", type=int, default=6, help="requests per path (default 6)")
    p.add_argument("--pause", type=float, default=0.0,
                   help="seconds to wait before each request (so that a trace of the server splits by response)")
    p.add_argument("paths", nargs="+")
    args = p.parse_args()

    conn = Connection(args.port, "h2" if args.h2 else "http/1.1")
    want = "h2" if args.h2 else "http/1.1"
    if conn.alpn not in (want, None if not args.h2 else want):
        sys.exit(f"ALPN: server chose {conn.alpn!r}, asked for {want}")
    print(f"{conn.version} {conn.cipher}, ALPN {conn.alpn or 'none (HTTP/1.1)'}")
    h2 = H2(conn) if args.h2 else None
    leftover = b""
    for path in args.paths:
        per_response = []
        for i in range(args.requests):
            time.sleep(args.pause)
            start, reads = len(conn.records), conn.reads
            if h2:
                status, length, frames = h2.exchange(path)
            else:
                status, length, frames, leftover = http1_exchange(conn, path, leftover)
            records = conn.records[start:]
            per_response.append((status, length, frames, records, conn.reads - reads))
        steady = per_response[1:] or per_response
        counts = collections.Counter(len(r[3]) for r in steady)
        status, length, frames, records, _ = steady[-1]
        sizes = [n for _, n in records]
        runs = []  # run-length: "4113×7, 3333"
        for n in sizes:
            if runs and runs[-1][0] == n:
                runs[-1][1] += 1
            else:
                runs.append([n, 1])
        shown = ", ".join(f"{n}×{k}" if k > 1 else f"{n}" for n, k in runs)
        print(
            f"{path}: status {status}, body {length:,} B; records per response {dict(sorted(counts.items()))} "
            f"(responses 2-{args.requests}); last one: {len(records)} records, ciphertext sizes [{shown}], "
            f"plaintext {sum(n - 17 for n in sizes):,} B"
            + (f"; {len(frames)} DATA frames {frames}" if h2 else "")
            + f"; recv() calls per response {[r[4] for r in steady]}"
        )


if __name__ == "__main__":
    main()
