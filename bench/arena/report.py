#!/usr/bin/env python3
"""Summarise one bench/arena/run folder as markdown (printed; the run saves it as summary.md).

    report.py OUT

Requests/s and MB/s are medians over the repetitions, with min-max; MB/s counts what wrk
read (headers and bodies, 10^6 bytes). "Body per response" is the mean body size over one
rotation of the paths, from the checks made before each server's first measurement, so the
two servers can be compared on what they sent as well as how fast. Standard library only.
"""
import csv
import os
import statistics
import sys
from collections import defaultdict

SERVERS = ["peregrine", "nginx"]
NAMES = {"peregrine": "Peregrine", "nginx": "nginx"}


def read_tsv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def spread(values, fmt):
    if not values:
        return "—"
    med = statistics.median(values)
    return f"{fmt(med)} ({fmt(min(values))}–{fmt(max(values))})" if len(values) > 1 else fmt(med)


def main():
    out = sys.argv[1]
    results = read_tsv(os.path.join(out, "results.tsv"))
    checks = read_tsv(os.path.join(out, "checks.tsv"))
    env = {}
    with open(os.path.join(out, "environment.txt")) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            env[k] = v

    rps, mbs, errors, cells = defaultdict(list), defaultdict(list), defaultdict(int), []
    by_rep = defaultdict(dict)
    share, per_cpu, busy0 = defaultdict(list), defaultdict(list), defaultdict(list)
    for r in results:
        by_rep[(r["cell"], r["rep"])][r["server"]] = float(r["rps"])
        key = (r["cell"], r["server"])
        if r["cell"] not in cells:
            cells.append(r["cell"])
        secs = float(r["seconds"])
        rps[key].append(float(r["rps"]))
        mbs[key].append(float(r["bytes"]) / secs / 1e6 if secs > 0 else 0.0)
        errors[key] += sum(int(r[k]) for k in ("connect", "read", "write", "status", "timeout"))
        cpu = float(r.get("server_cpu_s") or 0)
        if cpu > 0 and secs > 0:
            share[key].append(cpu / secs)
            per_cpu[key].append(float(r["requests"]) / cpu)
            busy0[key].append(float(r["cpu0_busy"]))

    # First check of each server: body bytes per path and set.
    first = {}
    for c in checks:
        first.setdefault((c["server"], c["path"]), c)
    sets = defaultdict(list)
    for c in checks:
        if c["server"] == SERVERS[0] and c["rep"] == checks[0]["rep"] and c["path"] not in sets[c["set"]]:
            sets[c["set"]].append(c["path"])

    def body_mean(server, paths):
        sizes = [int(first[(server, p)]["bytes"]) for p in paths if (server, p) in first]
        return sum(sizes) / len(sizes) if sizes else 0

    def per_rep(cell):
        pairs = [v for (c, _), v in sorted(by_rep.items(), key=lambda kv: int(kv[0][1])) if c == cell]
        return " ".join(f"{v['peregrine'] / v['nginx']:.2f}" for v in pairs
                        if v.get("nginx") and "peregrine" in v)

    p = print
    p(f"Command: `{env.get('command', '')}`  ")
    p(f"Peregrine: {env.get('source', '')}; nginx {env.get('nginx', '')} (one worker, sendfile, tcp_nopush, "
      f"open_file_cache, gzip_static, brotli_static); wrk {env.get('wrk', '')} -t1; {env.get('bootstrap', '')}  ")
    p(f"{env.get('cpu', '')}, {env.get('kernel', '')}; servers on CPU 0, wrk on CPU 1; {env.get('settings', '')}  ")
    p(f"Load before: `{env.get('uptime_before', '').strip()}`  ")
    p(f"Load after: `{env.get('uptime_after', '').strip()}`")
    p()
    p("| cell | conns | nginx req/s | Peregrine req/s | **Peregrine / nginx** | nginx MB/s | Peregrine MB/s | body per response (nginx / Peregrine) | errors (nginx / Peregrine) | ratio in each repetition | best / best |")
    p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for cell in cells:
        conns = next(r["conns"] for r in results if r["cell"] == cell)
        n, g = rps[(cell, "nginx")], rps[(cell, "peregrine")]
        ratio = f"**{statistics.median(g) / statistics.median(n):.2f}×**" if n and g and statistics.median(n) > 0 else "—"
        paths = sets["arena" if cell.startswith("arena") else "bootstrap"]
        body = f"{body_mean('nginx', paths) / 1024:.1f} / {body_mean('peregrine', paths) / 1024:.1f} KiB"
        p(f"| {cell.split('-c')[0]} | {int(conns):,} | {spread(n, lambda v: f'{v:,.0f}')} | {spread(g, lambda v: f'{v:,.0f}')} | {ratio} "
          f"| {spread(mbs[(cell, 'nginx')], lambda v: f'{v:,.0f}')} | {spread(mbs[(cell, 'peregrine')], lambda v: f'{v:,.0f}')} "
          f"| {body} | {errors[(cell, 'nginx')]} / {errors[(cell, 'peregrine')]} | {per_rep(cell)} "
          f"| {(max(g) / max(n) if n and g and max(n) > 0 else 0):.2f} |")
    p()
    p("Median of the repetitions (min–max). Best / best: the ratio of each server's best repetition, "
      "HttpArena's own way of ranking (best of 3). MB/s: bytes wrk read per second (headers and bodies), 10^6 bytes. "
      "Errors: wrk's socket errors (connect, read, write, timeout) and responses outside 2xx/3xx, summed over the repetitions.")

    if per_cpu:
        p()
        p("Requests per second of the server's own CPU time (user + system; nginx: master and worker). "
          "On a shared machine this moves less than requests/s: a server that waits for its core loses "
          "requests/s but not requests per CPU-second. The server's share of CPU 0 and how busy CPU 0 was "
          "(by anyone) show how much the core was taken by other work.")
        p()
        p("| cell | conns | nginx req per CPU-s | Peregrine req per CPU-s | **Peregrine / nginx** | server share of CPU 0 (nginx / Peregrine) | CPU 0 busy (nginx / Peregrine runs) |")
        p("|---|---:|---:|---:|---:|---:|---:|")
        for cell in cells:
            conns = next(r["conns"] for r in results if r["cell"] == cell)
            n, g = per_cpu[(cell, "nginx")], per_cpu[(cell, "peregrine")]
            ratio = f"**{statistics.median(g) / statistics.median(n):.2f}×**" if n and g else "—"
            pct = lambda v: f"{100 * v:.0f}%"
            p(f"| {cell.split('-c')[0]} | {int(conns):,} | {spread(n, lambda v: f'{v:,.0f}')} | {spread(g, lambda v: f'{v:,.0f}')} | {ratio} "
              f"| {spread(share[(cell, 'nginx')], pct)} / {spread(share[(cell, 'peregrine')], pct)} "
              f"| {spread(busy0[(cell, 'nginx')], pct)} / {spread(busy0[(cell, 'peregrine')], pct)} |")

    # What each server sent, path by path.
    p()
    p("### What each server sent")
    p()
    for name, paths in sets.items():
        same = sum(1 for q in paths if (("nginx", q) in first and ("peregrine", q) in first
                                        and first[("nginx", q)]["sha256"] == first[("peregrine", q)]["sha256"]))
        enc = defaultdict(lambda: defaultdict(int))
        for s in SERVERS:
            for q in paths:
                if (s, q) in first:
                    enc[s][first[(s, q)]["encoding"] or "identity"] += 1
        p(f"- {name} ({len(paths)} paths): identical bodies (SHA-256) from both servers for {same} of {len(paths)}; "
          + "; ".join(f"{NAMES[s]}: " + ", ".join(f"{k} {v}" for k, v in sorted(enc[s].items())) for s in SERVERS))
    bad = [c for c in checks if c["status"] != "200"]
    changed = [c for c in checks if first.get((c["server"], c["path"]), c)["sha256"] != c["sha256"]]
    if bad:
        p(f"- **{len(bad)} checks did not return 200**: " + ", ".join(f"{c['server']} {c['path']} {c['status']}" for c in bad[:10]))
    if changed:
        p(f"- {len(changed)} checks sent other bytes than the server's first check (compression finishing?): "
          + ", ".join(f"{c['server']} {c['path']}" for c in changed[:10]))
    p()
    p("| arena path | bytes | nginx | Peregrine |")
    p("|---|---:|---:|---:|")
    for q in sets.get("arena", []):
        size = os.path.getsize(os.path.join(out, "www", q.lstrip("/")))
        cols = []
        for s in ["nginx", "peregrine"]:
            c = first.get((s, q))
            cols.append(f"{c['encoding'] or 'identity'} {int(c['bytes']):,}" if c else "—")
        mark = "" if first.get(("nginx", q), {}).get("sha256") == first.get(("peregrine", q), {}).get("sha256") else " (differs)"
        p(f"| {q} | {size:,} | {cols[0]} | {cols[1]}{mark} |")

    loads = os.path.join(out, "loadavg.tsv")
    if os.path.exists(loads):
        with open(loads) as f:
            rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
        p()
        p("Before each server started (rep, server: load average over 1, 5, 15 min; CPU busy over 1 s, "
          "none of it the run's): " + "; ".join(" ".join(r) for r in rows))

    notes = os.path.join(out, "notes.txt")
    if os.path.exists(notes) and os.path.getsize(notes):
        p()
        p("Notes:")
        with open(notes) as f:
            for line in f:
                p(f"- {line.strip()}")


if __name__ == "__main__":
    main()
