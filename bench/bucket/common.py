"""What the bucket benchmarks share: a private Ceph RGW, sites written to a bucket, servers and haproxy.

Every process started here is started by this module and stopped by its pid at the end; the Ceph
folder and every port are the run's own (tests/infra/ceph/start), so a test run beside it is not
disturbed.
"""

import concurrent.futures
import http.client
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

import boto3
import botocore.config

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CEPH = os.path.join(REPO, "tests", "infra", "ceph")
ACCESS_KEY, SECRET_KEY = "test-access-key", "test-secret-key"


def log(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def load() -> str:
    """The load averages, to note beside each figure: other developers share the machine."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Ceph:
    """One monitor, one memstore OSD and radosgw in a folder of this run's own."""

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="peregrine-bench-ceph-")
        self.port = free_port()
        self.env = dict(os.environ, CEPH_DIR=self.folder, RGW_PORT=str(self.port), MON_PORT=str(free_port()))
        self.endpoint = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> "Ceph":
        log(f"starting Ceph RGW in {self.folder} on port {self.port}")
        subprocess.run([os.path.join(CEPH, "start")], env=self.env, check=True, timeout=300, stdout=subprocess.DEVNULL)
        self.s3 = client(self.endpoint)
        return self

    def __exit__(self, *_) -> None:
        subprocess.run([os.path.join(CEPH, "stop")], env=self.env, timeout=120)
        shutil.rmtree(self.folder, ignore_errors=True)

    def rgw(self, action: str) -> None:
        """Stops or starts again this run's radosgw only (tests/infra/ceph/rgw)."""
        subprocess.run([os.path.join(CEPH, "rgw"), action], env=self.env, check=True, timeout=120, stdout=subprocess.DEVNULL)

    def bucket(self) -> str:
        name = "b-" + os.urandom(8).hex()
        self.s3.create_bucket(Bucket=name)
        return name


def client(endpoint: str):
    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id=ACCESS_KEY,
                        aws_secret_access_key=SECRET_KEY,
                        config=botocore.config.Config(s3={"addressing_style": "path"}, max_pool_connections=32,
                                                      retries={"max_attempts": 5, "mode": "standard"},
                                                      request_checksum_calculation="when_required",
                                                      response_checksum_validation="when_required"))


def upload(s3, bucket: str, objects: dict[str, bytes], workers: int = 32) -> float:
    """Puts every object, `workers` at a time over kept-alive connections; returns the seconds taken."""
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for done in [pool.submit(s3.put_object, Bucket=bucket, Key=k, Body=v) for k, v in objects.items()]:
            done.result()
    return time.monotonic() - started


def site(files: int, release: str, seed: int = 1, big_every: int = 500) -> dict[str, bytes]:
    """A site whose every body starts with "/PATH RELEASE\\n", so a checker knows what it must equal."""
    rng = random.Random(seed)
    paths = ["index.html"] + [f"d{i % 37}/f{i}.{('css', 'js', 'bin')[i % 3]}" for i in range(1, files)]
    result = {}
    for i, path in enumerate(paths):
        size = 130_000 + i if i and i % big_every == 0 else rng.randint(10, 4000)
        head = f"/{path} {release}\n".encode()
        result[path] = head + rng.randbytes(max(0, size - len(head)))
    return result


def write_tree(root: str, files: dict[str, bytes]) -> None:
    for path, body in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(body)


def server_command(exe: str | None) -> list[str]:
    """The AOT executable given, or the Release JIT build of src/Peregrine.Server."""
    if exe:
        return [os.path.abspath(exe)]
    project = os.path.join(REPO, "src/Peregrine.Server/Peregrine.Server.csproj")
    subprocess.run(["dotnet", "build", "-c", "Release", "-nologo", "-v", "q", project], check=True, stdout=subprocess.DEVNULL)
    dll = subprocess.run(["dotnet", "msbuild", project, "-nologo", "-getProperty:TargetPath", "-p:Configuration=Release"],
                         check=True, capture_output=True, text=True).stdout.strip()
    return ["dotnet", dll]


class Server:
    """One server process; its output is kept (and echoed with --verbose) and its port read from it."""

    def __init__(self, command: list[str], args: list[str], endpoint: str | None = None, cpu: str | None = None,
                 echo: bool = False) -> None:
        env = dict(os.environ)
        if endpoint:
            env.update(AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY, AWS_ENDPOINT_URL_S3=endpoint)
        pin = ["taskset", "-c", cpu] if cpu else []
        self.started = time.monotonic()
        self.process = subprocess.Popen(pin + command + args + ["--port", "0", "--host", "127.0.0.1"], env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self.port = None
        found = threading.Event()

        def read() -> None:
            for line in self.process.stdout:
                self.lines.append(line.rstrip())
                if echo:
                    print("  server: " + line.rstrip(), flush=True)
                if self.port is None and (m := re.search(r"http://127\.0\.0\.1:(\d+)", line)):
                    self.port = int(m.group(1))
                    found.set()
            found.set()

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(120) or self.port is None:
            self.stop()
            sys.exit("the server printed no address:\n" + "\n".join(self.lines[-30:]))

    def get(self, path: str, timeout: float = 5) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def post(self, path: str, body: bytes) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        try:
            conn.request("POST", path, body, {"Content-Type": "application/json"})
            return conn.getresponse().status
        finally:
            conn.close()

    def ready(self, bound: float = 600) -> float:
        """Waits for /healthz 200; the seconds since the process started."""
        until = time.monotonic() + bound
        while time.monotonic() < until:
            try:
                if self.get("/healthz")[0] == 200:
                    return time.monotonic() - self.started
            except OSError:
                pass
            time.sleep(0.02)
        self.stop()
        sys.exit("not ready in time:\n" + "\n".join(self.lines[-30:]))

    def rss_kib(self) -> int:
        # taskset execs the server: the pid is the server's.
        with open(f"/proc/{self.process.pid}/status") as f:
            return int(next(line for line in f if line.startswith("VmRSS:")).split()[1])

    def stop(self) -> None:
        if self.process.poll() is None:
            asked = time.monotonic()
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            if (took := time.monotonic() - asked) > 5:
                log(f"the server on port {self.port} took {took:.1f} s to stop after SIGTERM (exit {self.process.returncode}); "
                    "its last lines:\n  " + "\n  ".join(self.lines[-8:]))


class Haproxy:
    """haproxy round-robin over the replicas, with the /healthz check a deployment would use."""

    def __init__(self, ports: list[int]) -> None:
        self.port = free_port()
        self.folder = tempfile.mkdtemp(prefix="peregrine-bench-haproxy-")
        config = os.path.join(self.folder, "haproxy.cfg")
        servers = "\n".join(f"  server r{i} 127.0.0.1:{p} check inter 500ms" for i, p in enumerate(ports))
        with open(config, "w") as f:
            f.write(f"""global
  maxconn 2000
defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s
frontend site
  bind 127.0.0.1:{self.port}
  default_backend replicas
backend replicas
  balance roundrobin
  option httpchk GET /healthz
  http-response set-header X-Replica %[srv_name]
{servers}
""")
        self.process = subprocess.Popen([shutil.which("haproxy") or "/usr/sbin/haproxy", "-f", config, "-db"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        until = time.monotonic() + 30
        while time.monotonic() < until:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/healthz")
                if conn.getresponse().status == 200:
                    return
            except OSError:
                time.sleep(0.1)
        sys.exit("haproxy did not answer")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)
        shutil.rmtree(self.folder, ignore_errors=True)


def replicas(command: list[str], endpoint: str, bucket: str, poll: float, notify: bool = False, count: int = 3,
             echo: bool = False) -> list[Server]:
    args = [f"s3://{bucket}/site", "--bucket-pointer", "current", "--bucket-path-style", "--bucket-poll", str(poll)]
    if notify:
        args += ["--bucket-notify", "/_peregrine/bucket-events"]
    return [Server(command, args, endpoint, echo=echo) for _ in range(count)]


def event(bucket: str, key: str) -> bytes:
    """An S3 event notification as Ceph RGW and S3 post it to an HTTP endpoint."""
    return ('{"Records":[{"eventVersion":"2.2","eventSource":"ceph:s3","eventName":"ObjectCreated:Put",'
            f'"s3":{{"bucket":{{"name":"{bucket}"}},"object":{{"key":"{key}","size":3}}}}}}]}}').encode()


def release(s3, bucket: str, name: str, files: dict[str, bytes]) -> float:
    """Uploads a release under site/releases/NAME/ (the pointer is not moved); the seconds taken."""
    return upload(s3, bucket, {f"site/releases/{name}/{k}": v for k, v in files.items()})
