#!/usr/bin/env python3
"""Summarize one bench/tls-profile/run output folder as Markdown (standard library only).

  summarize.py OUT > OUT/summary.md

Reads, for every SERVER-SIZE folder: wrk outputs, perf stat, perf report (by library and by
symbol), strace -c, the strace of single responses and lib/tls-records.py's output.
"""
import collections
import os
import re
import statistics
import sys


def read(path):
    return open(path, errors="replace").read() if os.path.exists(path) else ""


def wrk_rate(path):
    text = read(path)
    m = re.search(r"^Requests/sec:\s+([\d.]+)", text, re.M)
    n = re.search(r"^\s*(\d+) requests in ([\d.]+)(m?s)", text, re.M)
    rps = float(m.group(1)) if m else 0.0
    requests = int(n.group(1)) if n else 0
    return rps, requests


def perf_stat(path):
    """event -> count"""
    counts = {}
    for line in read(path).splitlines():
        m = re.match(r"\s*([\d,.]+)\s+(?:msec\s+)?([\w:-]+)", line)
        if m and not line.strip().startswith("Performance"):
            try:
                counts[m.group(2)] = float(m.group(1).replace(",", ""))
            except ValueError:
                pass
    m = re.search(r"([\d.]+) seconds time elapsed", read(path))
    counts["elapsed"] = float(m.group(1)) if m else 0.0
    return counts


def category(dso, sym):
    d = dso.lower()
    if d.startswith("[kernel") or d == "[vdso]":
        return "kernel"
    if d.startswith("libcrypto"):
        return "libcrypto (OpenSSL)"
    if d.startswith("libssl"):
        return "libssl (OpenSSL)"
    if d.startswith("libcoreclr"):
        return "coreclr (runtime, GC)"
    if d.startswith("libclrjit"):
        return "clrjit (JIT compiler)"
    if d.startswith("perf-") or d.startswith("[jit]") or d.startswith("jitted-") or "memfd:doublemapper" in d:
        return "managed code (JIT-compiled)"
    if d.endswith(".dll"):
        return "managed code (ReadyToRun)"
    if d.startswith("libc.so") or d.startswith("libc-"):
        return "libc memmove/memcpy" if re.search(r"mem(move|cpy)", sym) else "libc other"
    if d.startswith("libsystem."):
        return "System.*.Native shims"
    if d == "nginx":
        return "nginx"
    return "other (" + dso + ")"


def perf_symbols(path):
    """[(percent, dso, kind, symbol)] from perf report --no-children --sort dso,sym."""
    rows = []
    for line in read(path).splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(.+?)\s+\[([.k])\]\s+(.*)$", line)
        if m:
            rows.append((float(m.group(1)), m.group(2), m.group(3), m.group(4).strip()))
    return rows


# Managed frames by the assembly (or CoreLib namespace) of the method's declaring type.
MANAGED_AREAS = [
    ("Kestrel HTTP layer (Kestrel.Core: HTTP/1.1, HTTPS middleware, pipes' streams, memory pool)", r"^Microsoft\.AspNetCore\.Server\.Kestrel\.Core$"),
    ("Kestrel socket transport", r"^Microsoft\.AspNetCore\.Server\.Kestrel\.Transport\.Sockets$"),
    ("SslStream (System.Net.Security)", r"^System\.Net\.Security$"),
    ("System.Net.Sockets", r"^System\.Net\.Sockets$"),
    ("System.IO.Pipelines", r"^System\.IO\.Pipelines$"),
    ("Peregrine", r"^Peregrine"),
    ("ASP.NET Core hosting and HTTP abstractions", r"^Microsoft\.AspNetCore\."),
    ("CoreLib: thread pool, tasks, async machinery", r"^CoreLib:System\.(Threading|Runtime\.CompilerServices)"),
    ("CoreLib: other", r"^CoreLib:"),
    ("runtime stubs", r"^stub$"),
]


def managed_area(sym):
    if sym.startswith("stub "):
        key = "stub"
    else:
        m = re.search(r"\[([\w.]+)\] ([^\s(]*)::", sym)
        if not m:
            return "other managed"
        key = m.group(1)
        if key == "System.Private.CoreLib":
            key = "CoreLib:" + m.group(2)
    for name, pattern in MANAGED_AREAS:
        if re.search(pattern, key):
            return name
    return "other managed (" + key.split(":")[0] + ")"


def short_method(sym):
    """'Type::Method' out of a perf map name, without signature and tier."""
    m = re.search(r"\] ([^\s(]*::[^\s(]*)\(", sym)
    return m.group(1) if m else sym[:100]


def strace_counts(path):
    """syscall -> (calls, errors)"""
    out = {}
    for line in read(path).splitlines():
        parts = line.split()
        if len(parts) >= 5 and re.match(r"^[\d.]+$", parts[0]) and parts[-1] != "total":
            calls = int(parts[3]) if len(parts) >= 6 else int(parts[3])
            errors = int(parts[4]) if len(parts) >= 6 else 0
            out[parts[-1]] = (calls, errors)
    return out


WRITES = ("sendmsg", "sendto", "write", "writev", "sendfile")


def one_response(path):
    """Syscalls of one response, from strace -f -ttt of requests paced apart: clusters split by
    gaps of more than 0.15 s; the first cluster (handshake, first response) is left out.
    Returns (list of per-cluster Counters, list of per-cluster write sizes)."""
    events = []
    for line in read(path).splitlines():
        m = re.match(r"\d+\s+([\d.]+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()(.*)$", line)
        if not m or "<unfinished ...>" in line:
            continue
        name = m.group(2) or m.group(3)
        r = re.search(r"=\s+(-?\d+)(?:\s+(E\w+))?", m.group(4).rsplit(")", 1)[-1] if ")" in m.group(4) else m.group(4))
        result = int(r.group(1)) if r else None
        error = r.group(2) if r else None
        events.append((float(m.group(1)), name, result, error))
    clusters, last = [], None
    for t, name, result, error in events:
        if last is None or t - last > 0.15:
            clusters.append([])
        clusters[-1].append((name, result, error))
        last = t
    counters, sizes = [], []
    for c in clusters[1:]:
        counter = collections.Counter(name + (" " + error if error else "") for name, _, error in c)
        counters.append(counter)
        sizes.append([result for name, result, error in c if name in WRITES and not error])
    return counters, sizes


def records_line(path):
    text = read(path)
    m = re.search(r"records per response \{(\d+): \d+\}.*?ciphertext sizes \[([^\]]*)\]", text)
    frames = re.search(r"; (\d+) DATA frames", text)
    if not m:
        return None
    return int(m.group(1)), m.group(2), int(frames.group(1)) if frames else None


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def main():
    out = sys.argv[1]
    runs = sorted(d for d in os.listdir(out) if os.path.isdir(os.path.join(out, d)) and re.match(r".+-\d+$", d))
    servers = list(dict.fromkeys(d.rsplit("-", 1)[0] for d in runs))
    sizes = sorted({int(d.rsplit("-", 1)[1]) for d in runs})
    env = dict(l.split("=", 1) for l in read(os.path.join(out, "environment.txt")).splitlines() if "=" in l)
    print(f"# HTTPS profile: {', '.join(servers)}\n")
    print(f"Folder `{os.path.basename(out)}`; load average before {env.get('load_before')}, after {env.get('load_after')}.\n")
    extra = [f"`{k[4:]}={v}`" for k, v in env.items() if k.startswith("env.")]
    if env.get("label") or extra:
        print(f"Label: {env.get('label') or '(none)'}; environment: {', '.join(extra) or '(no DOTNET_ variables)'}.\n")

    # 1. perf stat per request
    print("## Per request (perf stat on the server during wrk; requests = wrk's rate × the counted seconds)\n")
    names = ["sendmsg", "sendto", "write", "writev", "recvfrom", "read", "pread64", "epoll_wait", "epoll_ctl", "futex", "sched_yield"]
    rows = []
    cpu_us = {}
    for d in runs:
        rps, _ = wrk_rate(os.path.join(out, d, "wrk-stat.txt"))
        st = perf_stat(os.path.join(out, d, "perf-stat.txt"))
        n = rps * st.get("elapsed", 0)
        if n <= 0:
            rows.append([d, "n/a"] + [""] * (4 + len(names)))
            continue
        per = lambda k: st.get(k, 0) / n
        cpu_us[d] = per("task-clock") * 1000
        sys_cols = [f"{per('syscalls:sys_enter_' + s):.2f}" for s in names]
        ctxt = dict(l.split("=") for l in read(os.path.join(out, d, "ctxt.txt")).split() if "=" in l)
        split = (f"{int(ctxt['voluntary']) / n:.2f} / {int(ctxt['involuntary']) / n:.2f}") if ctxt else "n/a"
        rows.append([d, f"{rps:,.0f}", f"{per('task-clock') * 1000:.0f}", f"{per('context-switches'):.2f}", split,
                     f"{per('raw_syscalls:sys_enter'):.2f}"] + sys_cols)
    print(table(["server-size", "req/s (wrk)", "CPU µs", "context switches", "voluntary / involuntary", "syscalls"] + names, rows))
    print("\nCPU µs: the server's task-clock over the requests served in the same seconds. Context switches: perf's "
          "count; voluntary (the thread blocked or yielded) and involuntary (preempted) from /proc/PID/task/*/status "
          "before and after. Syscalls: tracepoints (raw_syscalls:sys_enter and syscalls:sys_enter_NAME).\n")

    # 2. perf record by category
    print("## Where the server's CPU samples fall (perf record -g, --no-children, % of the server's samples)\n")
    cats = {}
    tops = {}
    for d in runs:
        syms = perf_symbols(os.path.join(out, d, "report-sym.txt"))
        dso_rows = []
        for line in read(os.path.join(out, d, "report-dso.txt")).splitlines():
            m = re.match(r"\s*([\d.]+)%\s+(.+?)\s*$", line)
            if m:
                dso_rows.append((float(m.group(1)), m.group(2)))
        c = collections.Counter()
        for pct, dso in dso_rows:
            if dso.startswith("libc.so") or dso.startswith("libc-"):
                continue  # split by symbol below
            c[category(dso, "")] += pct
        for pct, dso, _, sym in syms:
            if dso.startswith("libc.so") or dso.startswith("libc-"):
                c[category(dso, sym)] += pct
        kernel_sched = sum(p for p, dso, _, sym in syms if dso.startswith("[kernel") and re.search(
            r"schedul|switch_to|finish_task_switch|sched_yield|do_sched|pick_next|enqueue|dequeue|try_to_wake_up|ttwu|futex", sym))
        c["  of which kernel scheduler/futex/wake-up"] = kernel_sched
        cats[d] = c
        tops[d] = syms
    all_cats = sorted({k for c in cats.values() for k in c}, key=lambda k: (k.startswith("  "), -max(c.get(k, 0) for c in cats.values())))
    # the "of which" row right after kernel
    ordered = [k for k in all_cats if not k.startswith("  ")]
    if "kernel" in ordered:
        ordered.insert(ordered.index("kernel") + 1, "  of which kernel scheduler/futex/wake-up")
    print(table(["category"] + runs, [[k.replace("  ", "… ")] + [f"{cats[d].get(k, 0):.1f}" for d in runs] for k in ordered]))
    print("\n(libc is split by symbol from the symbol report, which lists symbols of 0.02% and more.)\n")

    # 2b. the same in CPU time per request, and Peregrine against nginx
    print("## CPU time per request by category (µs: the share of samples × CPU µs per request from perf stat)\n")
    rows = []
    for k in ordered:
        row = [k.replace("  ", "… ")]
        for d in runs:
            row.append(f"{cats[d].get(k, 0) / 100 * cpu_us[d]:.1f}" if d in cpu_us else "n/a")
        rows.append(row)
    rows.append(["**total (perf stat task-clock)**"] + [f"**{cpu_us[d]:.0f}**" if d in cpu_us else "n/a" for d in runs])
    print(table(["category"] + runs, rows))
    print()
    pairs = [(s, d) for s in sizes for d in [f"peregrine-{s}"] if d in cpu_us and f"nginx-{s}" in cpu_us]
    if pairs:
        print("Peregrine over nginx, CPU time per request: "
              + "; ".join(f"{s:,} B {cpu_us[d] / cpu_us[f'nginx-{s}']:.2f}×" for s, d in pairs) + ".\n")

    # 2c. managed code by area
    areas = {}
    for d in runs:
        a = collections.Counter()
        for p, dso, _, sym in tops[d]:
            if category(dso, sym).startswith("managed"):
                a[managed_area(sym)] += p
        areas[d] = a
    managed_runs = [d for d in runs if areas[d]]
    if managed_runs:
        print("## Managed code by area (% of the server's samples; methods of 0.02% and more)\n")
        keys = sorted({k for d in managed_runs for k in areas[d]}, key=lambda k: -max(areas[d].get(k, 0) for d in managed_runs))
        rows = [[k] + [f"{areas[d].get(k, 0):.1f}" for d in managed_runs] for k in keys]
        rows.append(["total listed"] + [f"{sum(areas[d].values()):.1f}" for d in managed_runs])
        print(table(["area"] + managed_runs, rows))
        print()

    # 3. top symbols
    print("## Top functions (perf report --no-children --sort dso,sym)\n")
    for d in runs:
        print(f"### {d}\n")
        rows = [[f"{p:.1f}", cat, f"`{short_method(sym) if cat.startswith('managed') else sym[:100]}`"]
                for p, dso, _, sym in tops[d][:20] for cat in [category(dso, sym)]]
        print(table(["%", "where", "symbol"], rows))
        managed = [(p, sym) for p, dso, _, sym in tops[d] if category(dso, sym).startswith("managed")]
        if managed:
            print(f"\nManaged frames, top 15 (of {sum(p for p, _ in managed):.1f}% in managed frames of 0.02% or more):\n")
            print(table(["%", "method"], [[f"{p:.2f}", f"`{short_method(s)}`"] for p, s in managed[:15]]))
        print()

    # 4. strace -c
    print("## strace -c -f (calls per request; strace slows the server, so read counts, not time)\n")
    counts = {d: strace_counts(os.path.join(out, d, "strace-c.txt")) for d in runs}
    reqs = {d: wrk_rate(os.path.join(out, d, "wrk-strace.txt"))[1] for d in runs}
    calls = sorted({k for c in counts.values() for k in c}, key=lambda k: -max(c.get(k, (0, 0))[0] / max(1, reqs[d]) for d, c in counts.items()))
    rows = []
    for k in calls[:14]:
        row = [k]
        for d in runs:
            n, e = counts[d].get(k, (0, 0))
            r = max(1, reqs[d])
            row.append(f"{n / r:.2f}" + (f" ({e / r:.2f} err)" if e else ""))
        rows.append(row)
    rows.append(["requests seen"] + [f"{reqs[d]:,}" for d in runs])
    print(table(["syscall"] + runs, rows))
    print()

    # 5. one response on one connection
    print("## One response at a time on one keep-alive connection\n")
    rows = []
    for d in runs:
        counters, sizes = one_response(os.path.join(out, d, "strace-one.txt"))
        h1 = records_line(os.path.join(out, d, "records-h1.txt"))
        h2 = records_line(os.path.join(out, d, "records-h2.txt"))
        if counters:
            keys = sorted({k for c in counters for k in c})
            median = {k: statistics.median(c.get(k, 0) for c in counters) for k in keys}
            calls_text = ", ".join(f"{k} {v:g}" for k, v in sorted(median.items(), key=lambda kv: -kv[1]))
            write_sizes = sizes[-1]
        else:
            calls_text, write_sizes = "n/a", []
        rows.append([
            d,
            f"{h1[0]} ({h1[1]})" if h1 else "n/a",
            f"{h2[0]} records, {h2[2]} DATA frames ({h2[1]})" if h2 else "n/a",
            calls_text,
            ", ".join(f"{s:,}" for s in write_sizes) or "n/a",
        ])
    print(table(["server-size", "HTTPS/1.1 records per response (ciphertext sizes)", "h2 records per response",
                 "syscalls per response (median of responses 2-6, HTTPS/1.1)", "socket write sizes, last response"], rows))
    print("\nRecords: `lib/tls-records.py` reads the raw TLS stream and counts record headers; sizes are the length "
          "fields (plaintext + 17 bytes in TLS 1.3; each record adds a 5-byte header on the wire). Syscalls: `strace -f -ttt` on the server while "
          "that client sends 6 requests 0.3 s apart; the trace is split at the pauses and the first response "
          "(with the handshake) is left out.")


if __name__ == "__main__":
    main()
