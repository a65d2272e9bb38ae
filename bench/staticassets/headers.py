#!/usr/bin/env python3
"""The header table: stock MapStaticAssets against Peregrine (swap and keep), per asset.

For each app that bench/staticassets/make-apps made (BlazorApp, PagesApp), in Production (the
publish folder) and in Development (the Debug build, run from the project folder, as `dotnet
run` does), every route of the endpoints manifest the app reads is requested twice, without
Accept-Encoding and with `Accept-Encoding: br, gzip`, from the app started with
PEREGRINE_WIRING=stock, swap and keep. Routes whose own answer is an encoded file (app.css.br)
are included: MapStaticAssets answers them with the stored bytes, and so does Peregrine. A
first pass warms each app (Peregrine makes its compressed variants after the
index), then the fields are read.

    bench/staticassets/headers.py APPS_FOLDER [--out FILE] [--only-differences] [--whole-second-mtimes]

Prints a summary (per app and environment, how many answers differ from stock in each field),
then a Markdown table: one row per route and Accept-Encoding, one column per field. A cell
holds the value when stock, swap and keep agree ("·" for an absent field), and
"stock X ≠ swap Y, keep Z" when they do not. ETags show their first 8 and last 4 characters.
--only-differences leaves out the rows where every field agrees.

--whole-second-mtimes first sets the modification time of every file in the Development
manifests' content roots under APPS_FOLDER to its whole second (files elsewhere, such as the
NuGet cache, are left alone). MapStaticAssets 10.0 in Development compares a file's time, to
the tick, with the manifest's Last-Modified, which has whole seconds only: a file made with a
sub-second time (as `dotnet new` and editors make them) looks changed since the build, and
stock then answers each compressed request with a gzip it makes at that moment
(CompressionLevel.NoCompression, larger than the file) under that gzip's own tag instead of
the manifest's file and tag. With whole-second times stock sends what its manifest states.
Only 127.0.0.1 is contacted; every app started is stopped.
"""
import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time

FIELDS = ["Cache-Control", "Content-Type", "ETag", "Vary", "Content-Encoding", "Content-Length"]
WIRINGS = ["stock", "swap", "keep"]
ENCODINGS = [None, "br, gzip"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(dll, cwd, environment, wiring):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASPNETCORE_")}
    env.update(ASPNETCORE_ENVIRONMENT=environment, ASPNETCORE_URLS=f"http://127.0.0.1:{port}",
               PEREGRINE_WIRING=wiring, DOTNET_CLI_TELEMETRY_OPTOUT="1")
    process = subprocess.Popen(["dotnet", dll], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 120
    for line in process.stdout:
        if "Now listening on" in line:
            break
        if time.time() > deadline:
            break
    else:
        raise SystemExit(f"{dll} ({wiring}) exited before listening")
    # Keep reading the log, so that the app never blocks on a full pipe and the end of
    # Peregrine's compression (event 22) can be seen.
    log = []
    threading.Thread(target=lambda: [log.append(line) for line in process.stdout], daemon=True).start()
    return process, port, log


def get(port, path, encoding):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.putrequest("GET", path, skip_accept_encoding=True)
    if encoding:
        connection.putheader("Accept-Encoding", encoding)
    connection.endheaders()
    response = connection.getresponse()
    response.read()
    fields = {name: ", ".join(v for k, v in response.getheaders() if k.lower() == name.lower()) or None for name in FIELDS}
    fields["status"] = response.status
    connection.close()
    return fields


def whole_second_mtimes(apps, runtime_manifest):
    """Truncates the times of the files under APPS_FOLDER that the runtime manifest serves."""
    with open(runtime_manifest) as f:
        roots = json.load(f)["ContentRoots"]
    for root in roots:
        root = os.path.abspath(root)
        if not root.startswith(apps + os.sep) or not os.path.isdir(root):
            continue
        for folder, _, files in os.walk(root):
            for name in files:
                path = os.path.join(folder, name)
                seconds = os.stat(path).st_mtime_ns // 1_000_000_000
                os.utime(path, ns=(seconds * 1_000_000_000, seconds * 1_000_000_000))


def routes(manifest):
    with open(manifest) as f:
        endpoints = json.load(f)["Endpoints"]
    own = set()
    for endpoint in endpoints:
        if not endpoint.get("Selectors"):
            own.add("/" + endpoint["Route"])
    return sorted(own)


def measure(dll, cwd, environment, wiring, paths):
    process, port, log = start(dll, cwd, environment, wiring)
    try:
        for path in paths:
            for encoding in ENCODINGS:
                get(port, path, encoding)
        # Peregrine makes its variants after the index ("Compressing N files", event 20, then
        # "Compressed", event 22): read the fields once it is done, as a browser would see them.
        deadline = time.time() + 300
        time.sleep(2)
        while wiring != "stock" and time.time() < deadline and any("Peregrine[20]" in line for line in log) and not any("Peregrine[22]" in line for line in log):
            time.sleep(0.5)
        return {(path, encoding): get(port, path, encoding) for path in paths for encoding in ENCODINGS}
    finally:
        process.terminate()
        process.wait(timeout=30)


def short(name, value):
    if value is None:
        return "·"
    if name == "ETag" and len(value) > 16:
        return value[:9] + "…" + value[-5:]
    return value


def cell(name, seen):
    values = {w: seen[w].get(name) for w in WIRINGS}
    if len(set(values.values())) == 1:
        return short(name, values["stock"]).replace("|", "\\|")
    return f"**stock {short(name, values['stock'])} ≠ swap {short(name, values['swap'])}, keep {short(name, values['keep'])}**".replace("|", "\\|")


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    apps = os.path.abspath(sys.argv[1])
    out = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else None
    only_differences = "--only-differences" in sys.argv
    if "--whole-second-mtimes" in sys.argv:
        for app in ["BlazorApp", "PagesApp"]:
            whole_second_mtimes(apps, os.path.join(apps, app, "bin", "Debug", "net10.0", f"{app}.staticwebassets.runtime.json"))
    lines = []
    summary = ["| App | Environment | Answers | Differ | Status | " + " | ".join(FIELDS) + " |", "|---|---|---:|---:|---:|" + "---:|" * len(FIELDS)]
    differing = total = 0
    for app in ["BlazorApp", "PagesApp"]:
        for environment in ["Production", "Development"]:
            if environment == "Production":
                folder = os.path.join(apps, "publish", app)
                cwd = folder
            else:
                folder = os.path.join(apps, app, "bin", "Debug", "net10.0")
                cwd = os.path.join(apps, app)
            paths = routes(os.path.join(folder, f"{app}.staticwebassets.endpoints.json"))
            results = {w: measure(os.path.join(folder, f"{app}.dll"), cwd, environment, w, paths) for w in WIRINGS}
            lines.append(f"\n#### {app}, {environment} ({len(paths)} routes)\n")
            lines.append("| Route | Accept-Encoding | Status | " + " | ".join(FIELDS) + " |")
            lines.append("|---|---|---|" + "---|" * len(FIELDS))
            counts = {name: 0 for name in ["answers", "differ", "status"] + FIELDS}
            for path in paths:
                for encoding in ENCODINGS:
                    seen = {w: results[w][(path, encoding)] for w in WIRINGS}
                    statuses = {w: seen[w]["status"] for w in WIRINGS}
                    status = str(statuses["stock"]) if len(set(statuses.values())) == 1 else f"**stock {statuses['stock']} ≠ swap {statuses['swap']}, keep {statuses['keep']}**"
                    cells = [cell(name, seen) for name in FIELDS]
                    total += 1
                    differs = any(c.startswith("**") for c in cells + [status])
                    differing += differs
                    counts["answers"] += 1
                    counts["differ"] += differs
                    counts["status"] += status.startswith("**")
                    for name, c in zip(FIELDS, cells):
                        counts[name] += c.startswith("**")
                    if only_differences and not differs:
                        continue
                    lines.append(f"| `{path}` | {encoding or '·'} | {status} | " + " | ".join(cells) + " |")
            summary.append(f"| {app} | {environment} | " + " | ".join(str(counts[name]) for name in counts) + " |")
    flags = " ".join(arg for arg in sys.argv[2:] if arg != out and arg != "--out")
    lines.insert(0, f"`bench/staticassets/headers.py APPS {flags}`".replace(" `", "`") + "\n\n"
                 + f"{differing} of {total} answers differ from stock in at least one field (bold)"
                 + (", and only those are listed." if only_differences else ".") + "\n\n" + "\n".join(summary))
    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
