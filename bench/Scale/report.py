#!/usr/bin/env python3
"""Turns bench/Scale/run's TSV files into RESULTS.md: medians, per-entry memory, req/s ratio."""

import csv
import statistics
import sys
from pathlib import Path


def rows(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open() as f:
        return list(csv.DictReader(f, delimiter="\t"))


def num(value: str) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def fmt(value: float | None, digits: int = 0) -> str:
    return "?" if value is None else f"{value:,.{digits}f}"


def main() -> None:
    out, secs, conns, paths, reps = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
    startup = rows(out / "startup.tsv")
    trees: dict[str, list[dict[str, str]]] = {}
    for row in startup:
        trees.setdefault(row["tree"], []).append(row)

    def med(tree: str, key: str) -> float | None:
        return median([num(r[key]) for r in trees[tree]])

    commit = (out / "commit").read_text().strip() if (out / "commit").exists() else "?"
    dirty = (out / "worktree-status").exists() and (out / "worktree-status").read_text().strip() != ""
    print(f"# Catalog scale: {out.name}\n")
    print(f"Commit {commit}{' (work tree had local changes)' if dirty else ''}. `bench/Scale/run`, "
          f"{reps} start-ups per tree (medians shown), files of 100 bytes (`.txt`, all held in memory under the "
          "default 256 MiB budget), page cache warm unless run with `--cold`.\n")

    if trees:
        print("## Start-up, index and memory\n")
        print("| tree | files indexed | first 200 (ms) | index (ms) | RSS (MiB) | peak RSS (MiB) | live managed heap (MiB) "
          "| RSS after full GC (MiB) | full GC pause (ms) | RSS per entry vs 100-file tree (B) | live heap per entry (B) |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    base_rss, base_heap = (med("100", "rss_kb"), med("100", "live_heap_bytes")) if "100" in trees else (None, None)
    for tree, group in trees.items():
        files = num(group[0]["files"])
        rss, hwm, heap = med(tree, "rss_kb"), med(tree, "hwm_kb"), med(tree, "live_heap_bytes")
        per_rss = per_heap = None
        if tree != "100" and files and base_rss is not None and rss is not None:
            per_rss = (rss - base_rss) * 1024 / (files - 100)
        if tree != "100" and files and base_heap is not None and heap is not None:
            per_heap = (heap - base_heap) / (files - 100)
        print(f"| {tree} | {fmt(files)} | {fmt(med(tree, 'first_response_ms'))} | {fmt(med(tree, 'index_ms'))} "
              f"| {fmt(rss and rss / 1024, 1)} | {fmt(hwm and hwm / 1024, 1)} | {fmt(heap and heap / 2**20, 1)} "
              f"| {fmt(med(tree, 'rss_after_gc_kb') and med(tree, 'rss_after_gc_kb') / 1024, 1)} "
              f"| {fmt(med(tree, 'full_gc_us') and med(tree, 'full_gc_us') / 1000, 1)} "
              f"| {fmt(per_rss) if per_rss else '-'} | {fmt(per_heap) if per_heap else '-'} |")
    if trees:
        print("\nEvery start-up (ms, RSS in kB): see `startup.tsv`. \"first 200\" is from launching `dotnet` to the first "
          "successful response for a known file, polled every 10 ms; \"index\" is the server's own "
          "`Indexed ... in X ms` log line; RSS is read 1 s after the index, before the forced collection that measures "
          "the live heap (startup hook in `bench/Scale/HeapHook`).\n")

    checks = rows(out / "checks.tsv")
    if checks:
        print("## Correctness\n")
        print("| tree | random files 200 with identical bytes | failures | /no-such-file.txt |")
        print("|---|---:|---:|---:|")
        for c in checks:
            print(f"| {c['tree']} | {c['ok']} | {c['bad']} | {c['missing_status']} |")
        print()

    wrk = rows(out / "wrk.tsv")
    if wrk:
        print("## Lookup speed\n")
        print(f"`wrk -t1 -c{conns} -d{secs}s`, a Lua script choosing at random among {paths} existing paths of the tree "
              "(repeating when the tree has fewer), servers started with `--no-compression`, server on CPU 0, wrk on CPU 1, runs alternating between the two "
              "servers.\n")
        by: dict[str, list[float]] = {}
        for r in wrk:
            v = num(r["req_per_s"])
            if v is not None:
                by.setdefault(r["tree"], []).append(v)
        print("| tree | req/s per run | median req/s | errors |")
        print("|---|---|---:|---:|")
        for tree, values in by.items():
            errs = sum(int(r["errors"] or 0) for r in wrk if r["tree"] == tree)
            print(f"| {tree} | {', '.join(fmt(v) for v in values)} | {fmt(statistics.median(values))} | {errs} |")
        if len(by) == 2:
            (small, a), (large, b) = by.items()
            pairs = [y / x for x, y in zip(a, b)]
            print(f"\n**{large} tree / {small} tree: {statistics.median(pairs):.3f}** (median of the per-pair ratios, "
                  f"each pair run back to back; ratio of medians {statistics.median(b) / statistics.median(a):.3f}; "
                  f"per pair: {', '.join(f'{p:.3f}' for p in pairs)}).")

if __name__ == "__main__":
    main()
