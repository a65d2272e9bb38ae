#!/usr/bin/env python3
"""Write the sized test files for bench/run: random bytes from a fixed seed per size.

Usage: make-files.py DIR SIZE...   (writes DIR/f-SIZE.bin, skipping files already correct)

The bytes depend only on the size, so every run and every machine serves identical files.
random.Random(seed).randbytes is stable across CPython versions since 3.9.
"""
import os
import random
import sys


def expected(size: int) -> bytes:
    return random.Random(0x9E3779B9 + size).randbytes(size)


def main() -> None:
    directory, sizes = sys.argv[1], [int(s) for s in sys.argv[2:]]
    os.makedirs(directory, exist_ok=True)
    for size in sizes:
        path = os.path.join(directory, f"f-{size}.bin")
        data = expected(size)
        try:
            with open(path, "rb") as f:
                if f.read() == data:
                    continue
        except FileNotFoundError:
            pass
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)


if __name__ == "__main__":
    main()
