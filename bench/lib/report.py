#!/usr/bin/env python3
"""Turn one bench/run output folder into the report of a run, the current page's standing, and
an SVG chart.

  report.py --out DIR --chart FILE.svg --chart-link NAME --command CMD --elapsed S > section.md
  report.py --out DIR --current --command CMD --notebook bench/results/YYYY-MM.md > current.md
  report.py --splice RESULTS.md --section current.md
  report.py --append bench/results/YYYY-MM.md --section section.md
  report.py --out DIR --summary      plain-text ratios per cell against nginx, for the terminal

The whole report of a run goes into the month's notebook (--append, after what is there); the
current page, bench/RESULTS.md, holds only the standing of the last full run (--current), in
the text between BEGIN and END, which --splice replaces, keeping everything else (creating the
file with the markers when it is missing). Standard library only.
"""
import argparse
import csv
import html
import os
import statistics
import sys
from collections import defaultdict

BEGIN = "<!-- harness:begin -->"
END = "<!-- harness:end -->"

KNOWN_ORDER = ["peregrine", "peregrine-jit", "seed", "stock", "ceiling", "nginx"]
DISPLAY = {
    "peregrine": "Peregrine",
    "peregrine-jit": "Peregrine (JIT)",
    "seed": "Seed",
    "stock": "Stock Kestrel",
    "ceiling": "Ceiling",
    "nginx": "nginx",
}
COLORS = {
    "peregrine": "#1f6feb",
    "peregrine-jit": "#54aeff",
    "seed": "#8957e5",
    "stock": "#d29922",
    "ceiling": "#8b949e",
    "nginx": "#2da44e",
}
VARIANT_COLORS = ["#0a3069", "#bf3989", "#1b7c83", "#953800"]


# ---------------------------------------------------------------------------------------
# Reading a run
# ---------------------------------------------------------------------------------------
def read_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def read_tsv_plain(path):
    if not os.path.exists(path):
        return []
    return [line.rstrip("\n").split("\t") for line in open(path) if "\t" in line]


def read_env(path):
    env = {}
    if os.path.exists(path):
        for line in open(path):
            key, _, value = line.rstrip("\n").partition("=")
            env[key] = value
    return env


# The names the issue uses for the matrix sizes; other sizes get a computed label.
SIZE_NAMES = {0: "0 B", 3348: "3.5 KB", 22528: "22 KB", 31744: "31 KB", 133120: "130 KB", 427008: "417 KB", 10485760: "10 MB"}


def size_label(size):
    if size == "mixed":
        return "bootstrap mix"
    n = int(size)
    if n in SIZE_NAMES:
        return SIZE_NAMES[n]
    if n >= 1 << 20:
        return f"{n / (1 << 20):g} MB"
    if n >= 1024:
        return f"{n / 1024:.3g} KB"
    return f"{n} B"


# A core counts as full from this busy share on: CPU 1 for the load generator, the server's
# own CPU time over the wall time for the server on CPU 0.
CLIENT_FULL = 0.95
SERVER_FULL = 0.90
BOUND_MARK = {"client": " ‡", "latency": " †"}
BOUND_LEGEND = (
    "‡ the load generator's core was full (CPU 1 ≥ 95% busy) while neither server used all of CPU 0: "
    "the requests/s there are the load generator's, and the servers compare by CPU per request (below). "
    "† neither core was full for either server (the cell waits on each response's round trip)."
)

# proto in results.tsv: h1 (cleartext HTTP/1.1), h1c (the same, a new connection for each
# request), h10 (HTTP/1.0 without keep-alive, likewise), h2 (h2c), h1s (HTTP/1.1 over TLS),
# h2s (h2 over TLS).
PROTO_NAMES = {"h1": "HTTP/1.1", "h1c": "HTTP/1.1", "h10": "HTTP/1.0", "h2": "h2c", "h1s": "HTTPS/1.1", "h2s": "h2 over TLS"}
TLS_PROTOS = ("h1s", "h2s")


def cell_label(proto, size, conns, env, long=False):
    if size == "mixed":
        return f"bootstrap mix, br/gzip, {conns} conns"
    detail = f" ({int(size):,} B)" if long and int(size) >= 1024 else ""
    name = PROTO_NAMES.get(proto, proto)
    if proto in ("h2", "h2s"):
        return f"{name} {size_label(size)}{detail}, {conns}×{env.get('h2_streams', '32')} streams"
    if proto == "h1c":
        return f"{name} {size_label(size)}{detail}, Connection: close, {conns} conns"
    if proto == "h10":
        return f"{name} {size_label(size)}{detail}, no keep-alive, {conns} conns"
    return f"{name} {size_label(size)}{detail}, {conns} conn{'s' if conns != '1' else ''}"


def cell_sort_key(row):
    proto, size, conns = row
    if size == "mixed":
        order = 2
    else:
        order = {"h1": 0, "h1c": 0.5, "h10": 0.6, "h2": 1, "h1s": 3, "h2s": 4}.get(proto, 5)
    return (order, -1 if size == "mixed" else int(size), int(conns))


class Run:
    def __init__(self, out):
        self.out = out
        self.env = read_env(os.path.join(out, "environment.txt"))
        self.rows = read_tsv(os.path.join(out, "results.tsv"))
        self.memory = read_tsv(os.path.join(out, "memory.tsv"))
        self.checks = read_tsv(os.path.join(out, "checks.tsv"))
        notes = os.path.join(out, "notes.txt")
        self.notes = [l.strip() for l in open(notes)] if os.path.exists(notes) else []
        self.notes = [n for n in dict.fromkeys(self.notes) if n]

        listed = self.env.get("servers", "").split()
        present = list(dict.fromkeys(r["server"] for r in self.rows))
        self.servers = [s for s in listed if s in present] or present

        self.cells = {}  # cell id -> (proto, size, conns)
        self.samples = defaultdict(list)  # (server, cell) -> [row]
        self.failed = []  # measurements in which no response completed
        self.broken = []  # measurements the load generator flagged (failed requests, wrong protocol)
        for r in self.rows:
            self.cells[r["cell"]] = (r["proto"], r["size"], r["conns"])
            if r.get("broken"):
                # h2load reported failed requests or did not negotiate the protocol asked for:
                # not a figure for this server, so left out of the medians and listed.
                self.broken.append(r)
                continue
            if int(r["requests"]) == 0:
                # A stalled server or a starved machine, not a rate: left out of the medians.
                self.failed.append(r)
                continue
            self.samples[(r["server"], r["cell"])].append(r)
        loads = read_tsv_plain(os.path.join(out, "loadavg.tsv"))
        self.max_load = max((float(l[1]) for l in loads), default=None)
        self.cell_ids = sorted(self.cells, key=lambda c: cell_sort_key(self.cells[c]))
        self.tls = read_tsv(os.path.join(out, "tls-negotiated.tsv"))

    def stat(self, server, cell, field="rps"):
        """(median, min, max, errors) of a field over the repetitions, or None."""
        rows = self.samples.get((server, cell))
        if not rows:
            return None
        values = [float(r[field]) for r in rows]
        errors = sum(int(r["errors"]) for r in rows)
        return statistics.median(values), min(values), max(values), errors

    def ratio(self, server, cell, base):
        a, b = self.stat(server, cell), self.stat(base, cell)
        if not a or not b or b[0] <= 0:
            return None
        return a[0] / b[0]

    def paired(self, server, cell, base):
        """(median, min, max) over the repetitions of the server's requests/s over the base's in the
        same repetition, or None. With --by-cell a repetition's runs of one cell are seconds apart,
        so each ratio compares the two servers at nearly the same moment: the speed of this
        machine's cores drifts by more than the differences measured over the minutes between
        repetitions, and a ratio of medians taken from different repetitions carries that drift."""
        a = {r["rep"]: float(r["rps"]) for r in self.samples.get((server, cell), [])}
        b = {r["rep"]: float(r["rps"]) for r in self.samples.get((base, cell), [])}
        ratios = [a[k] / b[k] for k in a if k in b and b[k] > 0]
        if not ratios:
            return None
        return statistics.median(ratios), min(ratios), max(ratios)

    def cpu(self, server, cell):
        """(median server CPU µs per request, median share of CPU 0 the server used, median busy
        share of CPU 1, the load generator's core), or None for a run without CPU columns."""
        rows = [r for r in self.samples.get((server, cell), []) if r.get("server_share") not in (None, "")]
        if not rows:
            return None
        per_request = statistics.median(
            float(r["server_share"]) * float(r["seconds"]) / int(r["requests"]) * 1e6 for r in rows)
        return (per_request, statistics.median(float(r["server_share"]) for r in rows),
                statistics.median(float(r["cpu1_busy"]) for r in rows))

    def cpu_ratio(self, server, cell, base):
        """Requests per CPU-second of the server over the base's: above 1.0, the server spent
        less of its core per request."""
        a, b = self.cpu(server, cell), self.cpu(base, cell)
        if not a or not b or a[0] <= 0:
            return None
        return b[0] / a[0]

    def bound(self, cell, servers):
        """What limited a cell for all of SERVERS: "client" when the load generator's core was
        full (CPU 1 at least CLIENT_FULL busy) while no server used all of its own, so the
        requests/s are the load generator's; "latency" when neither core was full for any of
        them (one connection waiting on each response); else "" (at least one server used its
        core, so the requests/s compare servers)."""
        stats = [self.cpu(s, cell) for s in servers]
        if not stats or any(st is None for st in stats):
            return ""
        if all(st[2] >= CLIENT_FULL and st[1] < SERVER_FULL for st in stats):
            return "client"
        if all(st[2] < SERVER_FULL and st[1] < SERVER_FULL for st in stats):
            return "latency"
        return ""


def display(server):
    return DISPLAY.get(server, server)


def color(server, servers):
    if server in COLORS:
        return COLORS[server]
    variants = [s for s in servers if s not in COLORS]
    return VARIANT_COLORS[variants.index(server) % len(VARIANT_COLORS)]


def fmt_rps(v):
    if v >= 100_000:
        return f"{v / 1000:.0f}k"
    if v >= 10_000:
        return f"{v / 1000:.1f}k"
    if v >= 1000:
        return f"{v / 1000:.2f}k"
    return f"{v:.0f}"


# ---------------------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------------------
def table(header, rows, align="---:"):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + [align] * (len(header) - 1)) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def rps_table(run):
    reps = int(run.env.get("reps", "1"))
    rows = []
    for cell in run.cell_ids:
        proto, size, conns = run.cells[cell]
        row = [cell_label(proto, size, conns, run.env, long=True)]
        for s in run.servers:
            st = run.stat(s, cell)
            if st is None:
                row.append("n/a")
                continue
            med, lo, hi, errors = st
            text = f"**{fmt_rps(med)}**" + (f" ({fmt_rps(lo)}–{fmt_rps(hi)})" if reps > 1 else "")
            if errors:
                text += f" ⚠{errors} err"
            row.append(text)
        rows.append(row)
    return table(["cell"] + [display(s) for s in run.servers], rows)


def ratio_table(run):
    bases = [b for b in ("nginx", "stock") if b in run.servers]
    if not bases:
        return None
    rows = []
    for cell in run.cell_ids:
        proto, size, conns = run.cells[cell]
        row = [cell_label(proto, size, conns, run.env)]
        for s in run.servers:
            parts = []
            for b in bases:
                r = run.ratio(s, cell, b)
                mark = BOUND_MARK.get(run.bound(cell, [s, b]), "") if s != b else ""
                parts.append("–" if r is None else f"{r:.2f}{mark}")
            row.append(" / ".join(parts))
        rows.append(row)
    names = " / ".join("× " + display(b) for b in bases)
    return names, table(["cell"] + [display(s) for s in run.servers], rows)


def paired_table(run):
    """Each server's requests/s over nginx's within each repetition: median (min–max)."""
    if "nginx" not in run.servers or run.env.get("interleave") != "cells" or int(run.env.get("reps", "1")) < 2:
        return None
    others = [s for s in run.servers if s != "nginx"]
    rows = []
    for cell in run.cell_ids:
        proto, size, conns = run.cells[cell]
        row = [cell_label(proto, size, conns, run.env)]
        for s in others:
            p = run.paired(s, cell, "nginx")
            row.append("–" if p is None else f"{p[0]:.2f} ({p[1]:.2f}–{p[2]:.2f})")
        rows.append(row)
    return table(["cell"] + [display(s) for s in others], rows)


def cpu_table(run):
    """Each server's CPU time per request, and requests per CPU-second against nginx."""
    if not any(run.cpu(s, c) for s in run.servers for c in run.cell_ids):
        return None
    base = "nginx" if "nginx" in run.servers else None
    others = [s for s in run.servers if s != base] if base else []
    rows = []
    for cell in run.cell_ids:
        proto, size, conns = run.cells[cell]
        row = [cell_label(proto, size, conns, run.env)]
        for s in run.servers:
            c = run.cpu(s, cell)
            row.append("n/a" if c is None else f"{c[0]:.1f} µs ({100 * c[1]:.0f}% / {100 * c[2]:.0f}%)")
        for s in others:
            r = run.cpu_ratio(s, cell, base)
            row.append("–" if r is None else f"{r:.2f}")
        rows.append(row)
    header = ["cell"] + [display(s) for s in run.servers] + [f"{display(s)}, per CPU-second × nginx" for s in others]
    return table(header, rows)


def throughput_table(run):
    rows = []
    for cell in run.cell_ids:
        proto, size, conns = run.cells[cell]
        if size != "mixed" and int(size) < 400_000:
            continue
        row = [cell_label(proto, size, conns, run.env)]
        for s in run.servers:
            samples = run.samples.get((s, cell))
            if not samples:
                row.append("n/a")
                continue
            mibs = statistics.median(float(r["bytes"]) / float(r["seconds"]) / (1 << 20) for r in samples)
            per = statistics.median(float(r["bytes"]) / max(1, int(r["requests"])) for r in samples)
            row.append(f"{mibs:,.0f} MiB/s" + (f", {per / 1024:,.1f} KiB/resp" if size == "mixed" else ""))
        rows.append(row)
    return table(["cell"] + [display(s) for s in run.servers], rows) if rows else None


def latency_table(run):
    rows = []
    for cell in run.cell_ids:
        proto, size, conns = run.cells[cell]
        if proto not in ("h1", "h1c", "h10", "h1s"):
            continue
        row = [cell_label(proto, size, conns, run.env)]
        for s in run.servers:
            samples = run.samples.get((s, cell))
            if not samples:
                row.append("n/a")
                continue
            p50 = statistics.median(int(r["p50_us"]) for r in samples) / 1000
            p99 = statistics.median(int(r["p99_us"]) for r in samples) / 1000
            row.append(f"{p50:.2f} / {p99:.2f}")
        rows.append(row)
    return table(["cell"] + [display(s) for s in run.servers], rows) if rows else None


def memory_table(run):
    by_server = defaultdict(lambda: ([], []))
    for m in run.memory:
        key = (m["server"], m["instance"].endswith("-tls"))
        by_server[key][0].append(int(m["rss_start_kb"]) / 1024)
        by_server[key][1].append(int(m["rss_end_kb"]) / 1024)
    rows = []
    for s in run.servers:
        for tls in (False, True):
            start, end = by_server.get((s, tls), ([], []))
            if not start:
                continue
            name = display(s) + (" (HTTPS)" if tls else "")
            rows.append([name, f"{statistics.median(start):.1f}", f"{statistics.median(end):.1f}", f"{max(end):.1f}"])
    return table(["server", "after start-up (median)", "after its runs (median)", "after its runs (max)"], rows)


def tls_table(run):
    """What a default OpenSSL client negotiated with each HTTPS instance (openssl s_client)."""
    if not run.tls:
        return None
    rows = [[display(t["server"]), t["protocol"], t["cipher"], t["key_exchange"], t["alpn"], t["certificate"]] for t in run.tls]
    return table(["server", "protocol", "cipher", "key exchange", "ALPN (offered h2, http/1.1)", "certificate"], rows, align="---")


def tls_cost_table(run):
    """HTTPS rate over the cleartext rate of the same server, size and connections."""
    pairs = []
    for cell in run.cell_ids:
        proto, size, conns = run.cells[cell]
        if proto not in TLS_PROTOS:
            continue
        clear = next((c for c in run.cell_ids if run.cells[c] == (proto[:2], size, conns)), None)
        if clear:
            pairs.append((cell, clear))
    if not pairs:
        return None
    rows = []
    for cell, clear in pairs:
        proto, size, conns = run.cells[cell]
        row = [cell_label(proto, size, conns, run.env)]
        for s in run.servers:
            a, b = run.stat(s, cell), run.stat(s, clear)
            row.append("–" if not a or not b or b[0] <= 0 else f"{a[0] / b[0]:.2f}")
        rows.append(row)
    return table(["cell"] + [display(s) for s in run.servers], rows)


def summary(run):
    """Plain text for the terminal: median requests/s and the ratio to nginx, per cell."""
    base = "nginx" if "nginx" in run.servers else None
    others = [s for s in run.servers if s != base]
    head = f"{'cell':<40}" + "".join(f"{display(s):>16}" for s in run.servers)
    head += "".join(f"{display(s)[:9] + '/nginx':>16}" for s in others) if base else ""
    head += "".join(f"{display(s)[:7] + ' cpu/ngx':>16}" for s in others) if base else ""
    lines = [head]
    for cell in run.cell_ids:
        proto, size, conns = run.cells[cell]
        line = f"{cell_label(proto, size, conns, run.env):<40}"
        for s in run.servers:
            st = run.stat(s, cell)
            line += f"{(fmt_rps(st[0]) if st else 'n/a'):>16}"
        if base:
            for s in others:
                r = run.ratio(s, cell, base)
                line += f"{('–' if r is None else f'{r:.2f}' + BOUND_MARK.get(run.bound(cell, [s, base]), '  ')):>16}"
            for s in others:
                r = run.cpu_ratio(s, cell, base)
                line += f"{('–' if r is None else f'{r:.2f}'):>16}"
        lines.append(line)
    if base and any(run.bound(c, [s, base]) for c in run.cell_ids for s in others):
        lines.append(BOUND_LEGEND)
    if base:
        lines.append("cpu/ngx: requests per CPU-second of the server's own core, over nginx's.")
    for r in run.broken:
        lines.append(f"BROKEN: {display(r['server'])} {r['cell']} repetition {r['rep']}: {r['broken']}")
    if run.max_load is not None and run.max_load > 1.0:
        lines.append(f"(machine busy: 1-minute load average up to {run.max_load:.2f} at a server start; ratios are noisy)")
    return "\n".join(lines) + "\n"


def read_headers(path):
    headers = {}
    if not os.path.exists(path):
        return None
    for line in open(path, errors="replace"):
        name, sep, value = line.strip().partition(":")
        if sep and not name.startswith("HTTP/"):
            headers[name.strip().lower()] = value.strip()
    return headers


def header_table(run, kind):
    per_server = {s: read_headers(os.path.join(run.out, "headers", f"{s}.{kind}.txt")) for s in run.servers}
    per_server = {s: h for s, h in per_server.items() if h is not None}
    if not per_server:
        return None
    names = []
    for h in per_server.values():
        names += [n for n in h if n not in names]
    rows = []
    for n in sorted(names):
        row = [f"`{n}`"]
        for s in run.servers:
            if s not in per_server:
                row.append("n/a")
                continue
            v = per_server[s].get(n)
            if v is None:
                row.append("—")
            elif n in ("date", "last-modified"):
                row.append("yes")
            else:
                row.append(f"`{v[:40]}`")
        rows.append(row)
    return table(["header"] + [display(s) for s in run.servers], rows, align="---")


def check_problems(run):
    problems = []
    for c in run.checks:
        status, got, want = c.get("status", ""), c.get("bytes", ""), c.get("expected", "")
        if status != "200" or got != want:
            problems.append(f"{display(c['server'])} `{c['path']}`: status {status or '?'}, {got or '?'} bytes (file has {want})")
    return list(dict.fromkeys(problems))


def section(run, args):
    env = run.env
    lines = [BEGIN, ""]
    label = f" — {env['label']}" if env.get("label") else ""
    kind = "quick run" if env.get("quick") == "1" else "full run"
    lines.append(f"## Load benchmark{label} ({kind}, {args.date})")
    lines.append("")
    lines.append(f"Command: `{args.command}` (took {int(args.elapsed) // 60} min {int(args.elapsed) % 60} s)")
    lines.append("")
    lines.append(
        f"Machine: {env.get('cores')} cores ({env.get('cpu')}), {env.get('memory')}, {env.get('os')}, {env.get('kernel')}; "
        f".NET SDK {env.get('dotnet')} (ASP.NET Core {env.get('aspnetcore')}); nginx {env.get('nginx')}; "
        f"wrk {env.get('wrk')}; h2load {env.get('h2load')}. Source: {env.get('source', '?')}."
    )
    load = os.path.join(run.out, "load.txt")
    if os.path.exists(load):
        text = "Other activity on the machine: " + "; ".join(l.strip() for l in open(load))
        if run.max_load is not None:
            text += f"; highest 1-minute load average seen at a server start: {run.max_load:.2f} (2 would mean both cores busy)"
        lines.append(text + ".")
    lines.append("")
    gcs = [f"{k[3:]}: {v}" for k, v in env.items() if k.startswith("gc.")]
    h2_warm = (f" (and {env.get('h2_warmup')} s of HTTP/2 where a phase has HTTP/2 cells)"
               if env.get("h2_warmup") not in (None, "", "0") else "")
    lines.append(
        (
            f"Method: every server up at once, each on its own ports, all pinned to CPU 0 (`taskset -c 0`), load generator on CPU 1, "
            f"all on 127.0.0.1. {env.get('reps')} repetition(s) interleaved by cell (`--by-cell`: each cell is measured on every "
            f"server in turn, seconds apart, the order rotated each repetition, while the others sit idle); "
            f"{env.get('server_warmup')} s warm-up over all files after each start{h2_warm}, {env.get('cell_warmup')} s warm-up with the "
            f"cell's own requests before each run, then {env.get('duration')} s measured. "
            if env.get("interleave") == "cells" else
            f"Method: each server alone, pinned to CPU 0 (`taskset -c 0`), load generator on CPU 1, all on 127.0.0.1. "
            f"{env.get('reps')} repetition(s) interleaved across servers (each repetition starts every server in turn); "
            f"{env.get('server_warmup')} s warm-up over all files after each start{h2_warm}, {env.get('cell_warmup')} s warm-up per file, "
            f"then {env.get('duration')} s measured per cell. "
        ) +
        f"HTTP/1.1: `wrk -t1 -cN` keep-alive. "
        f"h2c: `h2load -t1 -c{env.get('h2_conns')} -m{env.get('h2_streams')}` with prior knowledge. "
        f"Bootstrap mix: the {env.get('mixed_files')} css/js/map files under `dist/` of `{env.get('bootstrap')}`, in rotation, "
        f"`Accept-Encoding: br, gzip`, precompressed `.gz`/`.br` siblings on disk. "
        f"Servers and load generators run under `{env.get('priority', 'default')}` priority. "
        f"Table cells: median requests/s (min–max). GC: {'; '.join(gcs) or 'n/a'}."
    )
    if any(run.cells[c][0] in TLS_PROTOS for c in run.cell_ids):
        lines += [
            "",
            "HTTPS: every server that has HTTPS cells runs a second, HTTPS-only instance (after all cleartext "
            "instances of the repetition) with one self-signed ECDSA P-256 certificate generated for the run by "
            f"`openssl req` (OpenSSL {env.get('openssl', '?')}). Peregrine and the Kestrel baselines take it as "
            "`--tls-cert`/`--tls-key`; nginx as `listen … ssl http2` with `ssl_protocols TLSv1.3`, no kTLS. "
            "HTTPS/1.1 cells: `wrk -t1 -cN` over `https://` (wrk offers no ALPN, so HTTP/1.1). h2 over TLS cells: "
            f"`h2load -t1 -c{env.get('h2_conns')} -m{env.get('h2_streams')}` over `https://`; a cell counts only if "
            "h2load reports ALPN `h2`, TLS 1.3 and no failed, errored or timed-out request.",
        ]
    if env.get("peregrine_args") or any(k.startswith("variant.") for k in env):
        extra = [f"Peregrine extra args: `{env.get('peregrine_args') or '(none)'}`"]
        extra += [f"variant **{k[8:]}** = Peregrine + `{v}`" for k, v in env.items() if k.startswith("variant.")]
        lines += ["", "; ".join(extra) + "."]
    lines.append("")
    lines.append(f"![Requests per second relative to the baseline]({args.chart_link})")
    lines.append("")
    lines.append("### Requests per second")
    lines.append("")
    lines.append(rps_table(run))
    ratios = ratio_table(run)
    if ratios:
        names, text = ratios
        lines += ["", f"### Ratios ({names}, medians)", "", text]
        if "nginx" in run.servers and any(run.bound(c, [s, "nginx"]) for c in run.cell_ids for s in run.servers if s != "nginx"):
            lines += ["", BOUND_LEGEND]
    paired = paired_table(run)
    if paired:
        lines += ["", "### Ratios paired by repetition (requests/s × nginx's in the same repetition, its runs of the "
                  "cell seconds apart; median, min–max)", "", paired]
    cpu = cpu_table(run)
    if cpu:
        lines += ["", "### CPU per request (the server's CPU time over its requests, median; in brackets the share of "
                  "CPU 0 the server used / CPU 1 busy with the load generator)", "", cpu]
    tp = throughput_table(run)
    if tp:
        lines += ["", "### Throughput for large responses and the bootstrap mix", "", tp]
    cost = tls_cost_table(run)
    if cost:
        lines += ["", "### What HTTPS costs each server (HTTPS requests/s over cleartext requests/s, same cell, medians)", "", cost]
    tls = tls_table(run)
    if tls:
        lines += ["", "### TLS negotiated (`openssl s_client -alpn h2,http/1.1` against each HTTPS instance)", "", tls]
    lat = latency_table(run)
    if lat:
        lines += ["", "### HTTP/1.1 latency, p50 / p99 in ms (wrk, median over repetitions)", "", lat]
    lines += ["", "### Memory: resident set (VmRSS, MiB; nginx = master + worker)", "", memory_table(run)]

    lines += ["", "### Where the servers differ", ""]
    lines.append(
        "- Kestrel cannot turn off `Date` (dotnet/aspnetcore#60152) and adds `Server: Kestrel`; nginx sends `Server: nginx/<version>`."
    )
    lines.append(
        "- Seed and Ceiling send no `ETag`, `Last-Modified` or `Accept-Ranges` and ignore conditional and range requests; "
        "Seed and Stock Kestrel never compress or pick a precompressed file, so in the bootstrap mix they send identity bodies "
        "while nginx sends the `.br` siblings (see KiB/resp above)."
    )
    lines.append(
        "- Ceiling is one instance per body size (a single constant array, no lookup), so it has no bootstrap cell."
    )
    lines.append(
        "- h2c: Kestrel answers prior-knowledge HTTP/2 on a cleartext `Http1AndHttp2` endpoint with HTTP/1.1 only "
        "(dotnet/aspnetcore#56984), so Stock, Seed and Ceiling get a second, HTTP/2-only listener for the h2 cells; "
        "nginx before 1.25.1 has no `http2 on`, so it too gets a separate `listen … http2` socket. Peregrine serves both on one port."
    )
    if any(run.cells[c][0] in TLS_PROTOS for c in run.cell_ids):
        lines.append(
            "- HTTPS: with a certificate Peregrine's standalone server turns off its HTTP/1.1 fast path and inline socket "
            "I/O (its own defaults for TLS), so its HTTPS cells go through Kestrel's HTTP layer, `SslStream` and the thread "
            "pool; nginx without kTLS cannot `sendfile` over TLS, so it too reads the file and encrypts in user space "
            "(OpenSSL, 16 KB records by default)."
        )
    small = header_table(run, "small")
    if small:
        lines += ["", "Headers are captured right after each server's start-up, before any warm-up "
                  "(a server that prepares compressed variants in the background may not use them yet).", ""]
        lines += ["Response headers for `GET /f-3348.bin`:", "", small]
    mixed = header_table(run, "mixed")
    if mixed:
        lines += ["", "Response headers for `GET /bootstrap/dist/css/bootstrap.min.css` with `Accept-Encoding: br, gzip`:", "", mixed]
    problems = check_problems(run)
    errors = [
        f"{display(s)} {c}: {run.stat(s, c)[3]} errors (connect/read/write/timeout or non-2xx/3xx)"
        for c in run.cell_ids for s in run.servers if run.stat(s, c) and run.stat(s, c)[3]
    ]
    failed = [
        f"{display(r['server'])} {r['cell']} repetition {r['rep']}: no response completed in {float(r['seconds']):.0f} s "
        "(left out of the median)"
        for r in run.failed
    ]
    failed += [
        f"{display(r['server'])} {r['cell']} repetition {r['rep']}: broken cell, `{r['broken']}` (left out of the median)"
        for r in run.broken
    ]
    if problems or errors or failed or run.notes:
        lines += ["", "### Problems in this run", ""]
        lines += [f"- {p}" for p in run.notes + problems[:30] + errors + failed]
        if len(problems) > 30:
            lines.append(f"- … {len(problems) - 30} more mismatches in checks.tsv")
    lines += ["", END]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------
# SVG chart: the main comparison (HTTP/1.1 at 8 connections, h2c, bootstrap mix)
# ---------------------------------------------------------------------------------------
def chart(run, path):
    cells = [c for c in run.cell_ids if run.cells[c][2] == "8" or run.cells[c][0] == "h2" or run.cells[c][1] == "mixed"]
    if not cells:
        cells = run.cell_ids
    base = next((b for b in ("nginx", "stock") if b in run.servers), None)

    def value(server, cell):
        st = run.stat(server, cell)
        if st is None:
            return None
        if base:
            b = run.stat(base, cell)
            if not b or b[0] <= 0:
                return None
            return st[0] / b[0], st[1] / b[0], st[2] / b[0], st[0]
        top = max(run.stat(s, cell)[0] for s in run.servers if run.stat(s, cell))
        return st[0] / top, st[1] / top, st[2] / top, st[0]

    servers = run.servers
    vmax = max([1.0] + [v[2] for c in cells for s in servers if (v := value(s, c))])
    vmax = max(1.2, vmax * 1.05)
    left, right, bar_h, gap, group_gap, top = 250, 170, 14, 3, 16, 70
    plot_w = 560
    width = left + plot_w + right
    group_h = len(servers) * (bar_h + gap) + group_gap
    height = top + len(cells) * group_h + 40
    x = lambda v: left + v / vmax * plot_w
    esc = html.escape

    title = "Requests per second relative to " + (display(base) if base else "the fastest server") + " (median; whiskers: min–max)"
    label = run.env.get("label")
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'font-family="-apple-system, Segoe UI, Helvetica, Arial, sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{left}" y="20" font-size="14" font-weight="bold">{esc(title)}</text>',
        f'<text x="{left}" y="38" fill="#57606a">{esc((label + " — " if label else "") + run.env.get("cores", "?") + " cores, server on CPU 0, load on CPU 1, 127.0.0.1")}</text>',
    ]
    lx = left
    for s in servers:
        out.append(f'<rect x="{lx}" y="48" width="10" height="10" fill="{color(s, servers)}"/>')
        out.append(f'<text x="{lx + 14}" y="57">{esc(display(s))}</text>')
        lx += 24 + 7 * len(display(s))
    # Grid at every 0.25 and the baseline at 1.0.
    step = 0.25 if vmax <= 2.5 else 0.5
    g = 0.0
    while g <= vmax + 1e-9:
        xx = x(g)
        strong = abs(g - 1.0) < 1e-9
        style = 'stroke="#24292f" stroke-width="1.5"' if strong else 'stroke="#d0d7de" stroke-dasharray="3,3"'
        out.append(f'<line x1="{xx:.1f}" y1="{top - 6}" x2="{xx:.1f}" y2="{height - 34}" {style}/>')
        out.append(f'<text x="{xx:.1f}" y="{height - 20}" text-anchor="middle" fill="#57606a">{g:g}×</text>')
        g += step
    y = top
    for c in cells:
        proto, size, conns = run.cells[c]
        mid = y + len(servers) * (bar_h + gap) / 2
        out.append(f'<text x="{left - 10}" y="{mid + 4:.1f}" text-anchor="end">{esc(cell_label(proto, size, conns, run.env))}</text>')
        for s in servers:
            v = value(s, c)
            if v is None:
                out.append(f'<text x="{left + 4}" y="{y + bar_h - 3}" fill="#57606a">{esc(display(s))}: n/a</text>')
            else:
                med, lo, hi, rps = v
                out.append(
                    f'<rect x="{left}" y="{y}" width="{max(1.0, x(med) - left):.1f}" height="{bar_h}" fill="{color(s, servers)}">'
                    f"<title>{esc(display(s))}: {rps:,.0f} req/s ({med:.2f}×)</title></rect>"
                )
                if hi > lo:
                    cy = y + bar_h / 2
                    out.append(f'<line x1="{x(lo):.1f}" y1="{cy}" x2="{x(hi):.1f}" y2="{cy}" stroke="#24292f" stroke-width="1"/>')
                    for e in (lo, hi):
                        out.append(f'<line x1="{x(e):.1f}" y1="{cy - 3}" x2="{x(e):.1f}" y2="{cy + 3}" stroke="#24292f"/>')
                out.append(
                    f'<text x="{max(x(med), x(hi)) + 6:.1f}" y="{y + bar_h - 3}" fill="#24292f">{med:.2f}× · {fmt_rps(rps)}/s</text>'
                )
            y += bar_h + gap
        y += group_gap
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


# ---------------------------------------------------------------------------------------
# The current page's standing: one table against nginx, short enough for a first screen
# ---------------------------------------------------------------------------------------
def current(run, args):
    """The standing of the AOT build against nginx: for each cell the ratio of the medians, the
    ratio paired by repetition, and each server's CPU time a request."""
    env = run.env
    ours = "peregrine" if "peregrine" in run.servers else next((s for s in run.servers if s != "nginx"), None)
    if ours is None or "nginx" not in run.servers:
        sys.exit("--current needs a run with nginx and a Peregrine server")
    lines = [BEGIN, ""]
    lines.append(f"## The last full run: {args.date}, {env.get('source', '?')}")
    lines.append("")
    lines.append(f"`{args.command}` ({env.get('reps')} repetitions{', interleaved by cell' if env.get('interleave') == 'cells' else ''}; "
                 f"the whole report, with requests/s, latency and memory, in `{args.notebook}`). "
                 f"{display(ours)} against nginx {env.get('nginx')}, both on CPU 0, the load generator on CPU 1.")
    lines.append("")
    rows = []
    for cell in run.cell_ids:
        proto, size, conns = run.cells[cell]
        r = run.ratio(ours, cell, "nginx")
        mark = BOUND_MARK.get(run.bound(cell, [ours, "nginx"]), "")
        p = run.paired(ours, cell, "nginx")
        a, b = run.cpu(ours, cell), run.cpu("nginx", cell)
        c = run.cpu_ratio(ours, cell, "nginx")
        rows.append([
            cell_label(proto, size, conns, env),
            "–" if r is None else f"{r:.2f}{mark}",
            "–" if p is None else f"{p[0]:.2f} ({p[1]:.2f}–{p[2]:.2f})",
            "–" if a is None or b is None else f"{a[0]:.1f} / {b[0]:.1f}",
            "–" if c is None else f"{c:.2f}",
        ])
    lines.append("![Requests per second relative to the baseline](results.svg)")
    lines.append("")
    lines.append(table(["cell", "× nginx (medians)", "× nginx, paired (min–max)", "CPU µs a request, ours / nginx", "per CPU-second × nginx"], rows))
    lines.append("")
    lines.append(BOUND_LEGEND.replace(" (below)", ""))
    lines.append("")
    lines.append(END)
    return "\n".join(lines) + "\n"


def append(target, section_file):
    """The run's whole report after what the month's notebook holds, without the current page's markers."""
    # The chart (bench/results.svg) is the latest run's only: left to the current page.
    new = "\n".join(l for l in open(section_file).read().replace(BEGIN, "").replace(END, "").split("\n")
                    if not l.startswith("![Requests per second")).strip("\n")
    if os.path.exists(target):
        text = open(target).read().rstrip("\n") + "\n\n"
    else:
        text = f"# Benchmark notebook: {os.path.basename(target)[:-3]}\n\nThe dated experiments of the month; `bench/RESULTS.md` is the current page.\n\n"
    tmp = target + ".tmp"
    with open(tmp, "w") as f:
        f.write(text + new + "\n")
    os.replace(tmp, target)


# ---------------------------------------------------------------------------------------
# Splicing into RESULTS.md
# ---------------------------------------------------------------------------------------
def splice(target, section_file):
    new = open(section_file).read().strip("\n")
    if os.path.exists(target):
        text = open(target).read()
    else:
        text = "# Peregrine load benchmarks\n\nProduced by `bench/run`; see bench/README.md.\n\n" + BEGIN + "\n" + END + "\n"
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        text = text.rstrip("\n") + "\n\n" + new + "\n"
    else:
        text = text[:start] + new + text[end + len(END):]
    tmp = target + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, target)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out")
    p.add_argument("--chart")
    p.add_argument("--chart-link", default="chart.svg")
    p.add_argument("--command", default="bench/run")
    p.add_argument("--elapsed", type=float, default=0)
    p.add_argument("--date")
    p.add_argument("--splice")
    p.add_argument("--append")
    p.add_argument("--section")
    p.add_argument("--current", action="store_true")
    p.add_argument("--notebook", default="bench/results/")
    p.add_argument("--summary", action="store_true")
    args = p.parse_args()
    if args.splice:
        splice(args.splice, args.section)
        return
    if args.append:
        append(args.append, args.section)
        return
    if args.summary:
        sys.stdout.write(summary(Run(args.out)))
        return
    import datetime

    args.date = args.date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    run = Run(args.out)
    if not run.rows:
        sys.exit(f"no results in {args.out}")
    if args.current:
        sys.stdout.write(current(run, args))
        return
    chart(run, args.chart)
    sys.stdout.write(section(run, args))


if __name__ == "__main__":
    main()
