#!/usr/bin/env python3
"""Bytes on the wire for a new release of a bundle: identity, gzip, br, zstd and dcz (RFC 9842).

Unpacks two versions of an npm package (`npm pack NAME@OLD NAME@NEW`), puts the chosen files
of the old one under fingerprinted names (name.HASH.ext, the hash of the bytes) in a folder,
starts Peregrine on it, then releases the new one as a live update (new names written, old
names deleted), waits until the new files are answered as dcz against the old bytes, and asks
for each new file with every coding. Each dcz body is checked with `zstd -d -D OLD`. Prints a
markdown table of body sizes (final-quality variants: it waits for /healthz "final").

  bench/dictionaries/measure.py --exe PATH [--package bootstrap] [--old 5.3.7] [--new 5.3.8]
      [--file dist/js/bootstrap.bundle.min.js ...] [--port N]
"""
import argparse, base64, hashlib, http.client, json, os, shutil, subprocess, sys, tempfile, time


def request(port, path, headers, method="GET"):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request(method, path, headers=headers)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, body


def fingerprinted(rel, data):
    stem, ext = os.path.splitext(rel)
    # 12 hex characters: with digits and letters both, as Peregrine's fingerprint rule wants.
    digest = hashlib.sha256(data).hexdigest()
    tag = next(digest[i:i + 12] for i in range(0, 40) if any(c.isdigit() for c in digest[i:i + 12]) and any(c.isalpha() for c in digest[i:i + 12]))
    return f"{stem}.{tag}{ext}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True, help="the peregrine executable, or Peregrine.Server.dll (run with dotnet)")
    ap.add_argument("--package", default="bootstrap")
    ap.add_argument("--old", default="5.3.7")
    ap.add_argument("--new", default="5.3.8")
    ap.add_argument("--file", action="append", help="a file of the package (repeatable)")
    ap.add_argument("--port", type=int, default=18291)
    a = ap.parse_args()
    files = a.file or ["dist/js/bootstrap.bundle.min.js", "dist/js/bootstrap.min.js", "dist/css/bootstrap.min.css"]

    work = tempfile.mkdtemp(prefix="dictionaries-")
    server = None
    try:
        versions = {}
        for v in (a.old, a.new):
            subprocess.run(["npm", "pack", f"{a.package}@{v}", "--silent"], cwd=work, check=True, stdout=subprocess.DEVNULL)
            os.makedirs(f"{work}/{v}")
            subprocess.run(["tar", "xzf", f"{work}/{a.package}-{v}.tgz", "-C", f"{work}/{v}"], check=True)
            versions[v] = {f: open(f"{work}/{v}/package/{f}", "rb").read() for f in files}

        root = f"{work}/site"
        def write(v):
            names = {}
            for f, data in versions[v].items():
                name = fingerprinted(f, data)
                os.makedirs(os.path.dirname(f"{root}/{name}"), exist_ok=True)
                with open(f"{root}/{name}", "wb") as out:
                    out.write(data)
                names[f] = "/" + name
            return names

        os.makedirs(root)
        old_names = write(a.old)
        cmd = ([a.exe] if not a.exe.endswith(".dll") else ["dotnet", a.exe]) + [root, "--port", str(a.port), "-q"]
        server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                status, headers, _ = request(a.port, old_names[files[0]], {})
                if status == 200:
                    print(f"old marked: Use-As-Dictionary: {headers.get('use-as-dictionary')}", file=sys.stderr)
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                sys.exit("server did not answer")
            time.sleep(0.1)

        # The release: new names written, old ones deleted.
        new_names = write(a.new)
        for name in old_names.values():
            os.remove(root + name)

        def final():
            _, _, body = request(a.port, "/healthz", {})
            return json.loads(body).get("compression", {}).get("final") is True

        browser = {"Accept-Encoding": "gzip, deflate, br, zstd, dcb, dcz", "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "no-cors"}
        rows = []
        for f in files:
            old, new = versions[a.old][f], versions[a.new][f]
            hash_field = ":" + base64.b64encode(hashlib.sha256(old).digest()).decode() + ":"
            deadline = time.monotonic() + 300
            while True:
                _, headers, dcz = request(a.port, new_names[f], dict(browser, **{"Available-Dictionary": hash_field}))
                if headers.get("content-encoding") == "dcz" and final():
                    break
                if time.monotonic() > deadline:
                    sys.exit(f"{f}: no dcz answer")
                time.sleep(0.2)
            with open(f"{work}/old.bin", "wb") as out:
                out.write(old)
            decoded = subprocess.run(["zstd", "-d", "-q", "-c", "-D", f"{work}/old.bin"], input=dcz, capture_output=True, check=True).stdout
            if decoded != new:
                sys.exit(f"{f}: the dcz body does not decode to the new bytes")
            sizes = {}
            for coding in ("identity", "gzip", "br", "zstd"):
                _, headers, body = request(a.port, new_names[f], {"Accept-Encoding": coding})
                sizes[coding] = len(body)
            rows.append((f, sizes, len(dcz)))

        print(f"| {a.package} {a.old} → {a.new} | identity | gzip | br | zstd | dcz against {a.old} | dcz / br |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for f, s, d in rows:
            print(f"| {os.path.basename(f)} | {s['identity']:,} | {s['gzip']:,} | {s['br']:,} | {s['zstd']:,} | {d:,} | {d / s['br']:.1%} |")
    finally:
        if server is not None:
            server.kill()
            server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
