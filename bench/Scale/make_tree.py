#!/usr/bin/env python3
"""Writes a tree of small text files for the catalog scale benchmark.

make_tree.py ROOT FOLDERS FILES_PER_FOLDER

Each file is ROOT/dNNNN/fNNNN.txt (or ROOT/fNNNNNN.txt when FOLDERS is 0), about 100 bytes,
its content naming its own path so that a response can be checked against it. Uses os.open
and os.write directly: at a million files the per-file cost is the three system calls,
which is what a shell loop or a `pathlib` write would bury under interpreter overhead.
"""

import os
import sys


def body(relative: str) -> bytes:
    line = f"peregrine scale benchmark file {relative}\n".encode()
    return line + b"x" * max(0, 99 - len(line)) + b"\n"


def main() -> None:
    root, folders, per_folder = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.makedirs(root, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    if folders == 0:
        width = max(4, len(str(per_folder - 1)))
        for j in range(per_folder):
            relative = f"/f{j:0{width}d}.txt"
            fd = os.open(root + relative, flags, 0o644)
            os.write(fd, body(relative))
            os.close(fd)
        return
    for i in range(folders):
        folder = f"/d{i:04d}"
        os.mkdir(root + folder)
        for j in range(per_folder):
            relative = f"{folder}/f{j:04d}.txt"
            fd = os.open(root + relative, flags, 0o644)
            os.write(fd, body(relative))
            os.close(fd)


if __name__ == "__main__":
    main()
