#!/usr/bin/env python3
"""Writes the seed inputs of each parser fuzz target into corpus/TARGET/ (run once; AFL grows them)."""
import os, struct
here = os.path.dirname(os.path.abspath(__file__))
def put(target, name, data):
    d = os.path.join(here, 'corpus', target); os.makedirs(d, exist_ok=True)
    open(os.path.join(d, 'seed-' + name), 'wb').write(data if isinstance(data, bytes) else data.encode('latin-1'))
heads = {
 'get': 'GET /index.html HTTP/1.1\r\nHost: example.com\r\n\r\n',
 'head-close': 'HEAD /a/b.css?v=1 HTTP/1.1\r\nHost: [::1]:8080\r\nConnection: keep-alive, close\r\nAccept-Encoding: br, gzip;q=0.5\r\n\r\n',
 'conditional': 'GET / HTTP/1.1\r\nHost: x\r\nIf-None-Match: "abc", W/"d"\r\nIf-Modified-Since: Tue, 02 Jan 2024 03:04:05 GMT\r\nOrigin: http://a\r\nContent-Length: 0\r\n\r\nGET /next HTTP/1.1\r\n',
 'partial': 'GET /index.html HTTP/1.1\r\nHost: x\r\nX-A: b',
 'bare-lf': 'GET / HTTP/1.1\nHost: x\n\n',
 'range': 'GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=0-1\r\n\r\n',
 'http10': 'GET /a.css HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n',
}
for name, h in heads.items():
    put('request-head', name, b'\x01' + h.encode('latin-1'))
    put('request-head', name + '-small', b'\x00' + h.encode('latin-1'))
for name, (n, r) in {'one': (1000, 'bytes=0-99'), 'suffix': (1000, 'bytes=-500'), 'multi': (100000, 'bytes=0-0, 200-300,50-60 , 9000-'),
                     'unsat': (10, 'bytes=20-30'), 'zero': (0, 'bytes=0-'), 'big': (1 << 40, 'bytes=1099511627775-99999999999999999999')}.items():
    put('range', name, struct.pack('<Q', n) + r.encode())
for name, (mask, v) in {'br': (7, 'gzip, deflate, br, zstd'), 'q': (5, 'br;q=0.5, gzip;q=1.0, *;q=0'), 'identity0': (0, 'identity;q=0, *;q=0'),
                        'quoted': (7, 'gzip;foo="a,b";q=0.3, br;q=0.300'), 'empty': (7, '')}.items():
    put('accept-encoding', name, bytes([mask]) + v.encode())
for name, v in {'inm': '\n"abc"', 'im-fail': '"x", "y"\n\n\n', 'ims': '\n\nTue, 02 Jan 2024 03:04:05 GMT', 'ius': '\n\n\nMon, 01 Jan 2024 00:00:00 GMT\n"abc"',
                'weak': 'W/"abc"\nW/"abc", *', 'if-range': '\n\n\n\nTue, 02 Jan 2024 03:04:05 GMT', 'star': '*\n*'}.items():
    put('preconditions', name, v)
for name, v in {'all': '?sort=size&order=desc&page=3', 'dup': 'sort=bogus&sort=size&page=99999999999999', 'empty': '', 'odd': '?&&=&page=&order=ASC&sort=MTIME'}.items():
    put('listing-query', name, v)
for name, v in {'cli': '\x00--port\x0080\x00--spa=app.html\x00--header\x00X-A: b\x00--cache\x00*.html=no-cache\x00--memory-budget\x0064M\x00--host\x00::1',
                'cli-bad': '\x00--port\x00x\x00--shutdown-timeout\x00-1\x00--cors\x00http://a\x00--nope',
                'env': '\x01PORT=8080\x00MEMORY_BUDGET=1G\x00HEADER=X-A: b\nX-B: c\x00CORS=http://a, https://b\x00NO_WATCH=yes',
                'json': '\x02{"port": 8080, "host": "0.0.0.0", "spa": true, "header": ["X-A: b"], "cache": ["*.js=max-age=1"], // c\n "memoryBudget": "64M",}',
                'json-bad': '\x02{"port": "x", "spa": 3, "unknown": 1, "cors": [1, null]}'}.items():
    put('config', name, v)
