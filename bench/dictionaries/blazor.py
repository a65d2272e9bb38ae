#!/usr/bin/env python3
"""Bytes on the wire for a Blazor WebAssembly app's next build: identity, gzip, br, zstd and dcz (RFC 9842).

Makes an app as a new user makes it (`dotnet new blazor --interactivity WebAssembly`), with this
repository's library packed into a feed of the run's own under a version of its own (as
tests/Peregrine.Tests/StaticWebAssets/FreshApps.cs does), wired to swap MapStaticAssets for
Peregrine (UsePeregrine, no MapStaticAssets) with a compression cache folder. Publishes build A,
runs it from a folder, asks for every route the endpoints manifest says is fingerprinted
(`_framework`, the scoped CSS bundle, app.css, the libraries), waits until the versions are
saved in the cache folder, stops it; adds ONE component to the client project (a page with its
scoped stylesheet), publishes build B, puts it in the same folder (the web root's path is part
of the kept versions' key) and runs it on the same cache folder. Then, for each file whose
bytes differ between A and B (matched by the manifest's `label`: the route without its
fingerprint), asks B's fingerprinted route for identity, gzip, br and zstd, and as a browser
holding A's version would (Accept-Encoding with dcb and dcz, Available-Dictionary: A's SHA-256,
Sec-Fetch-Site: same-origin), checks each dcz body with `zstd -d -D A_FILE`, and prints a
markdown table of body sizes. A coding the app does not serve for a file (zstd, for the files
the build compressed: the library sends the manifest's br and gzip) is made with the zstd CLI
at Peregrine's final level (`zstd -19 --no-check`, as ZSTD_compress writes it) and marked.
A file the library offers no dictionary for is listed with what the browser got instead, and
the last column gives what a delta would weigh, made with the zstd CLI as Peregrine makes
dcz (level 19, A's bytes as a raw-content dictionary, plus the 40-byte dcz header): measured,
never served. Only 127.0.0.1; every step has a time limit; the work folder and the feed's
version in the NuGet cache are removed at the end (--keep leaves the work folder).

  bench/dictionaries/blazor.py [--port-a N] [--port-b N] [--keep]
"""
import argparse, base64, glob, hashlib, http.client, json, os, shutil, signal, socket, subprocess, sys, tempfile, time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BROWSER = {"Accept-Encoding": "gzip, deflate, br, zstd, dcb, dcz", "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "no-cors"}

# The component B adds: a page of the client project, rendered in the browser, with its own
# scoped stylesheet (so the app's CSS bundle changes with it, as it does when a user adds one).
COMPONENT = """@page "/greeting"
@rendermode InteractiveWebAssembly

<PageTitle>Greeting</PageTitle>

<h1>Greeting</h1>

<input class="name" @bind="name" @bind:event="oninput" placeholder="Your name" />
<p role="status">Hello, @(string.IsNullOrWhiteSpace(name) ? "stranger" : name)!</p>

@code {
    private string name = "";
}
"""
COMPONENT_CSS = """h1 {
    color: #1b6ec2;
}

.name {
    padding: 0.25rem 0.5rem;
}
"""


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run(args, cwd, env, timeout):
    started = time.monotonic()
    done = subprocess.run(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout[-4000:]}")
    log(f"{' '.join(args[:3])}: {time.monotonic() - started:.1f} s")


def request(port, path, headers):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("GET", path, headers=headers)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, body


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def edit(path, old, new):
    text = open(path).read()
    if old not in text:
        sys.exit(f"{path}: the template has changed ({old!r} not found)")
    with open(path, "w") as out:
        out.write(text.replace(old, new, 1))


def fingerprinted_routes(site):
    """label → (route, asset file) for each route the manifest says is fingerprinted and answers with a file as it is (no selector, not an encoded file)."""
    manifest = json.load(open(f"{site}/BlazorApp.staticwebassets.endpoints.json"))
    routes = {}
    for e in manifest["Endpoints"]:
        props = {p["Name"]: p["Value"] for p in e["EndpointProperties"]}
        if "fingerprint" in props and not e["Selectors"] and not e["AssetFile"].endswith((".br", ".gz")):
            routes[props["label"]] = ("/" + e["Route"], e["AssetFile"])
    return routes


def sha256_field(data):
    return ":" + base64.b64encode(hashlib.sha256(data).digest()).decode() + ":"


class App:
    """The published app, run from SITE in Production on 127.0.0.1:PORT."""

    def __init__(self, site, port, env, log_path):
        self.port = port
        self.out = open(log_path, "w")
        self.process = subprocess.Popen(["dotnet", "BlazorApp.dll", "--urls", f"http://127.0.0.1:{port}"], cwd=site, env=env, stdout=self.out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while True:
            try:
                if request(port, "/", {})[0] == 200:
                    return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                sys.exit(f"the app did not answer on port {port}; see {log_path}")
            time.sleep(0.2)

    def stop(self):
        # Ctrl+C's signal: the host shuts down as an operator's restart would.
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.out.close()


def kept_hashes(cache):
    hashes = set()
    for index in glob.glob(f"{cache}/dictionaries/*/kept.v1"):
        hashes.update(line.split(" ", 1)[0] for line in open(index).read().splitlines() if line)
    return hashes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-a", type=int, default=0, help="build A's port (default: a free one)")
    ap.add_argument("--port-b", type=int, default=0, help="build B's port (default: a free one)")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    a = ap.parse_args()

    work = tempfile.mkdtemp(prefix="dictionaries-blazor-")
    version = f"0.1.0-blazorbench.{time.strftime('%Y%m%d%H%M%S', time.gmtime())}.{os.getpid()}"
    env = dict(os.environ, TMPDIR=f"{work}/tmp", DOTNET_CLI_TELEMETRY_OPTOUT="1", DOTNET_NOLOGO="1", ASPNETCORE_ENVIRONMENT="Production")
    env.pop("ASPNETCORE_URLS", None)
    os.makedirs(f"{work}/tmp")
    cache, site = f"{work}/cache", f"{work}/site"
    build = ["-c", "Release", "-nodeReuse:false", "-p:UseSharedCompilation=false"]
    app = None
    try:
        # :: the app, with the library from a feed of this run's own.
        run(["dotnet", "pack", f"{REPO}/src/Peregrine/Peregrine.csproj", "-o", f"{work}/feed", f"-p:Version={version}", *build], work, env, 900)
        with open(f"{work}/nuget.config", "w") as out:
            out.write(f'<?xml version="1.0" encoding="utf-8"?>\n<configuration>\n  <packageSources>\n'
                      f'    <add key="peregrine-blazorbench" value="{work}/feed" />\n  </packageSources>\n</configuration>\n')
        run(["dotnet", "new", "blazor", "--interactivity", "WebAssembly", "-o", "BlazorApp"], work, env, 600)
        server, client = f"{work}/BlazorApp/BlazorApp", f"{work}/BlazorApp/BlazorApp.Client"
        run(["dotnet", "add", "package", "Peregrine.AspNetCore", "--version", version], server, env, 600)
        # The swap wiring of docs/getting-started.md, with a cache folder (docs/library.md: the
        # versions kept before a restart survive it only there).
        program = f"{server}/Program.cs"
        edit(program, "var builder = WebApplication.CreateBuilder(args);\n",
             f'var builder = WebApplication.CreateBuilder(args);\nbuilder.Services.AddPeregrine(o => o.Compression.CacheDirectory = "{cache}");\n')
        edit(program, "app.UseHttpsRedirection();\n", "app.UseHttpsRedirection();\napp.UsePeregrine();\n")
        edit(program, "app.MapStaticAssets();\n", "")

        # :: build A: published, run, every fingerprinted route asked for.
        run(["dotnet", "publish", *build, "-o", f"{work}/publish-a"], server, env, 1800)
        shutil.copytree(f"{work}/publish-a", site)
        routes_a = fingerprinted_routes(site)
        bytes_a = {label: open(f"{site}/wwwroot/{asset}", "rb").read() for label, (_, asset) in routes_a.items()}
        app = App(site, a.port_a or free_port(), env, f"{work}/app-a.log")
        marked = set()
        for label, (route, _) in routes_a.items():
            status, headers, _ = request(app.port, route, BROWSER)
            if status != 200:
                sys.exit(f"build A: {route} answered {status}")
            if "use-as-dictionary" in headers:
                marked.add(label)
        log(f"build A: {len(routes_a)} fingerprinted routes asked for, {len(marked)} announce Use-As-Dictionary")
        wanted = {hashlib.sha256(bytes_a[label]).hexdigest() for label in marked}
        deadline = time.monotonic() + 300
        while not wanted <= kept_hashes(cache):
            if time.monotonic() > deadline:
                sys.exit(f"build A: {len(wanted - kept_hashes(cache))} announced versions never saved in {cache}")
            time.sleep(0.5)
        app.stop()
        app = None

        # :: build B: one component more, published into the same folder, run on the same cache.
        with open(f"{client}/Pages/Greeting.razor", "w") as out:
            out.write(COMPONENT)
        with open(f"{client}/Pages/Greeting.razor.css", "w") as out:
            out.write(COMPONENT_CSS)
        run(["dotnet", "publish", *build, "-o", f"{work}/publish-b"], server, env, 1800)
        shutil.rmtree(site)
        shutil.copytree(f"{work}/publish-b", site)
        routes_b = fingerprinted_routes(site)
        bytes_b = {label: open(f"{site}/wwwroot/{asset}", "rb").read() for label, (_, asset) in routes_b.items()}
        app = App(site, a.port_b or free_port(), env, f"{work}/app-b.log")

        changed = sorted(label for label in routes_b if label in bytes_a and bytes_a[label] != bytes_b[label])
        same = [label for label in routes_b if label in bytes_a and bytes_a[label] == bytes_b[label]]
        added = sorted(label for label in routes_b if label not in bytes_a)
        gone = sorted(label for label in routes_a if label not in bytes_b)

        rows = []
        cli_made = False
        for label in changed:
            route = routes_b[label][0]
            old, new = bytes_a[label], bytes_b[label]
            with open(f"{work}/a.bin", "wb") as out:
                out.write(old)
            with open(f"{work}/b.bin", "wb") as out:
                out.write(new)
            sizes, made = {}, set()
            for coding in ("identity", "gzip", "br", "zstd"):
                _, headers, body = request(app.port, route, {"Accept-Encoding": coding})
                got = headers.get("content-encoding", "identity")
                if coding == "identity" and body != new:
                    sys.exit(f"{route}: identity is not build B's file")
                if got == coding:
                    sizes[coding] = len(body)
                elif coding == "zstd":
                    # Not served for this file: Peregrine's final zstd, made by the CLI.
                    sizes[coding] = len(subprocess.run(["zstd", "-19", "--no-check", "-q", "-c", f"{work}/b.bin"], capture_output=True, check=True, timeout=300).stdout)
                    made.add(coding)
                    cli_made = True
                else:
                    sys.exit(f"{route}: asked for {coding}, got {got}")

            # As a browser holding A's version asks. A marked file's delta is made in the
            # background after the start: ask until it comes (at most 300 s).
            field = sha256_field(old)
            deadline = time.monotonic() + 300
            while True:
                _, headers, body = request(app.port, route, dict(BROWSER, **{"Available-Dictionary": field}))
                got = headers.get("content-encoding", "identity")
                if got in ("dcz", "dcb") or "use-as-dictionary" not in headers or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            if got == "dcz":
                decoded = subprocess.run(["zstd", "-d", "-q", "-c", "-D", f"{work}/a.bin"], input=body, capture_output=True, check=True, timeout=300).stdout
                if decoded != new:
                    sys.exit(f"{route}: the dcz body does not decode to build B's bytes")
            elif got == "dcb":
                sys.exit(f"{route}: dcb under the JIT, which this table does not expect")
            # What a delta would weigh: zstd 19 with A as a raw-content dictionary, plus dcz's
            # 40-byte header (RFC 9842 §4.2), made by the CLI.
            cli_delta = 40 + len(subprocess.run(["zstd", "-19", "--no-check", "-q", "-c", "-D", f"{work}/a.bin", f"{work}/b.bin"], capture_output=True, check=True, timeout=300).stdout)
            rows.append((label, sizes, made, got, len(body), "use-as-dictionary" in headers, cli_delta))

        def cell(sizes, made, coding):
            return f"{sizes[coding]:,}" + (" *" if coding in made else "")

        print(f"| {len(changed)} files differ, A → B | identity | gzip | br | zstd | dcz against A | dcz / br | delta by the zstd CLI |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        total = {"identity": 0, "gzip": 0, "br": 0, "zstd": 0, "returning": 0, "cli": 0}
        for label, sizes, made, got, length, announced, cli_delta in rows:
            for coding in ("identity", "gzip", "br", "zstd"):
                total[coding] += sizes[coding]
            total["returning"] += length
            total["cli"] += cli_delta
            returning = f"{length:,}" if got == "dcz" else f"none, {got} {length:,}" + ("" if announced else " (no Use-As-Dictionary)")
            print(f"| {label} | {cell(sizes, made, 'identity')} | {cell(sizes, made, 'gzip')} | {cell(sizes, made, 'br')} | {cell(sizes, made, 'zstd')} "
                  f"| {returning} | {length / sizes['br']:.1%} | {cli_delta:,} |")
        print(f"| total (what a returning visitor downloads, in the dcz column) | {total['identity']:,} | {total['gzip']:,} | {total['br']:,} | {total['zstd']:,} "
              f"| {total['returning']:,} | {total['returning'] / total['br']:.1%} | {total['cli']:,} |")
        print()
        print(f"Unchanged between A and B (not upgrades): {len(same)} fingerprinted files, {sum(len(bytes_b[label]) for label in same):,} B.")
        if added:
            print(f"New in B: {', '.join(f'{label} ({len(bytes_b[label]):,} B)' for label in added)}.")
        if gone:
            print(f"Gone in B: {', '.join(gone)}.")
        if cli_made:
            print("* not served for this file (the library sends the build's br and gzip): `zstd -19 --no-check`, Peregrine's final zstd.")
        print("dcb: n/a (JIT): the library runs in the app under the JIT, where neither Debian's libbrotli 1.0.9 nor .NET 10's System.IO.Compression has Brotli's shared-dictionary API, so only dcz is made.")
        print("Delta by the zstd CLI: `zstd -19 --no-check -D A B` + 40 B of dcz header; measured, not served.")
    finally:
        if app is not None:
            app.stop()
        if a.keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
        # The version is this run's alone: what restore put in the global packages folder for it is no one else's.
        packages = os.environ.get("NUGET_PACKAGES") or os.path.expanduser("~/.nuget/packages")
        shutil.rmtree(f"{packages}/peregrine.aspnetcore/{version.lower()}", ignore_errors=True)


if __name__ == "__main__":
    main()
