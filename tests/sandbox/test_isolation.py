"""What a program inside the bwrap sandbox cannot do. Every test also runs a positive control,
so that it fails if the program's attempt is broken rather than blocked."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest

import farm
from farm.sandbox import Limits
from tests.sandbox.conftest import assert_healthy, run_in, run_outside

pytestmark = pytest.mark.isolation

FARM_DIR = Path(farm.__file__).resolve().parent
SUITE_DIR = FARM_DIR / "suite" / "suites" / "core-v1"


class Listener:
    """A TCP server on the host's loopback that records every byte it receives."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received = b""
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.connections += 1
            with conn:
                conn.settimeout(2)
                while data := conn.recv(4096):
                    self.received += data

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


CONNECT = """
import socket, sys
try:
    s = socket.create_connection(("127.0.0.1", {port}), timeout=2)
    s.sendall(b"exfiltrated")
    s.close()
    print("connected")
except OSError as exc:
    print("blocked", exc)
"""


def test_no_network_to_host_loopback(bwrap_runner, tmp_path):
    listener = Listener()
    try:
        control = run_outside(CONNECT.format(port=listener.port), tmp_path)
        assert control.stdout.startswith("connected"), control.stderr
        time.sleep(0.3)
        assert listener.received == b"exfiltrated"
        listener.received, listener.connections = b"", 0

        ran = run_in(bwrap_runner, CONNECT.format(port=listener.port), tmp_path)
        time.sleep(0.3)
        assert ran.out.startswith("blocked"), ran.stderr
        assert listener.connections == 0 and listener.received == b""
    finally:
        listener.close()


def test_only_loopback_interface_and_no_dns(bwrap_runner, tmp_path):
    code = """
    import socket
    print(sorted(name for _, name in socket.if_nameindex()))
    try:
        socket.getaddrinfo("example.com", 443)
        print("resolved")
    except OSError:
        print("no dns")
    """
    ran = run_in(bwrap_runner, code, tmp_path)
    assert ran.out.splitlines() == ["['lo']", "no dns"], ran.stderr


WRITE_EVERYWHERE = """
import sys
for target in sys.argv[1:] if len(sys.argv) > 1 else {targets!r}:
    try:
        with open(target, "w") as f:
            f.write("tampered")
        print("wrote", target)
    except OSError as exc:
        print("denied", target, type(exc).__name__)
"""


def _tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def test_no_write_outside_workdir(bwrap_runner, tmp_path):
    workdir = tmp_path / "work"
    workdir.mkdir()
    host_tmp = Path(tempfile.mkdtemp(prefix="farm-iso-", dir="/tmp"))
    host_tmp.chmod(0o1777)  # writable by anyone who can see it: only the sandbox stops the write
    targets = [
        str(FARM_DIR / "sandbox" / "planted.py"),
        str(SUITE_DIR / "vector_add" / "reference.py"),
        str(SUITE_DIR / "planted.txt"),
        str(host_tmp / "planted.txt"),
        str(workdir / "allowed.txt"),
    ]
    before = {d: _tree_digest(d) for d in (FARM_DIR, host_tmp)}
    try:
        ran = run_in(bwrap_runner, WRITE_EVERYWHERE.format(targets=targets), workdir)
        assert ran.termination.returncode == 0, ran.stderr
        assert f"wrote {workdir / 'allowed.txt'}" in ran.out
        # (the work dir's tmpfs, and the file on it, end with the program when the farm is root)
        assert ran.out.count("denied") == 4, ran.out
        assert {d: _tree_digest(d) for d in (FARM_DIR, host_tmp)} == before

        # Positive control: the same program outside the sandbox does write the host's /tmp.
        control = run_outside(WRITE_EVERYWHERE.format(targets=[targets[3]]), workdir)
        assert (host_tmp / "planted.txt").read_text() == "tampered", control.stderr
    finally:
        for path in (host_tmp / "planted.txt",):
            path.unlink(missing_ok=True)
        host_tmp.rmdir()


SECRET = "farm-test-secret-7c1e5b"

FIND_SECRETS = """
import glob, os
found = []
if any("{secret}" in v for v in os.environ.values()):
    found.append("environ")
for path in glob.glob("/proc/*/environ"):
    try:
        if b"{secret}" in open(path, "rb").read():
            found.append("proc-environ")
    except OSError:
        pass
try:
    if "{secret}" in open("{cred}").read():
        found.append("credentials-file")
except OSError:
    pass
print(",".join(sorted(set(found))) or "nothing")
"""


def test_no_host_secrets(bwrap_runner, tmp_path, monkeypatch):
    monkeypatch.setenv("FARM_TEST_SECRET", SECRET)
    home = Path(os.path.expanduser("~"))
    cred = home / f".farm-test-credentials-{os.getpid()}"  # one per test process
    cred.write_text(f"token={SECRET}\n")
    cred.chmod(0o600)
    code = FIND_SECRETS.format(secret=SECRET, cred=cred)
    try:
        control = run_outside(code, tmp_path)  # inherits the environment, as a leak would
        assert "credentials-file" in control.stdout and "environ" in control.stdout
        ran = run_in(bwrap_runner, code, tmp_path)
        assert ran.out.strip() == "nothing", ran.out + ran.stderr.decode()
    finally:
        cred.unlink()


def test_unprivileged_and_clean_environment(bwrap_runner, tmp_path):
    code = """
    import os
    status = dict(l.split(":", 1) for l in open("/proc/self/status"))
    print(os.getuid(), os.geteuid(), int(status["CapEff"], 16), int(status["CapBnd"], 16),
          status["NoNewPrivs"].strip(), os.environ.get("ONLY_THIS"), "AWS_SECRET" in os.environ)
    """
    os.environ["AWS_SECRET"] = "x"
    try:
        ran = run_in(bwrap_runner, code, tmp_path, env={"ONLY_THIS": "yes"})
    finally:
        del os.environ["AWS_SECRET"]
    uid, euid, cap_eff, cap_bnd, nnp, only, leaked = ran.out.split()
    assert uid != "0" and euid != "0"
    assert (cap_eff, cap_bnd, nnp, only, leaked) == ("0", "0", "1", "yes", "False")


FORK_BOMB = """
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
"""


def _sandbox_processes(uid: int, mark: str) -> list[int]:
    """Processes of this test's own sandbox: the sandbox uid AND `mark` in the command line
    (other farms on the machine may run sandboxes under the same uid meanwhile)."""
    pids = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            lines = status.read_text().splitlines()
            cmdline = (status.parent / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        uids = next((ln.split()[1:] for ln in lines if ln.startswith("Uid:")), [])
        if str(uid) in uids[:1] and mark in cmdline:
            pids.append(int(status.parent.name))
    return pids


def test_fork_bomb_is_contained(bwrap_runner, tmp_path):
    mark = f"fork bomb {uuid.uuid4().hex}"  # its forks share this command line
    code = FORK_BOMB + f"# {mark}\n"
    ran = run_in(bwrap_runner, code, tmp_path, limits=Limits(pids=64, wall_seconds=3))
    assert ran.termination.limit == "wall_seconds"
    assert ran.termination.signal == signal.SIGKILL
    if bwrap_runner.user is not None:
        time.sleep(0.5)
        assert _sandbox_processes(bwrap_runner.user.pw_uid, mark) == []  # the tree is gone
    assert_healthy(bwrap_runner, tmp_path)


def test_process_count_is_capped(bwrap_runner, tmp_path):
    code = """
    import os, time
    made = 0
    try:
        for _ in range(500):
            if os.fork() == 0:
                time.sleep(2)
                os._exit(0)
            made += 1
    except OSError:
        pass
    print(made, flush=True)
    os._exit(0)
    """
    ran = run_in(bwrap_runner, code, tmp_path, limits=Limits(pids=32, wall_seconds=10))
    assert 0 < int(ran.out) < 32, ran.stderr
    assert_healthy(bwrap_runner, tmp_path)


def test_memory_hog_is_contained(bwrap_runner, tmp_path):
    # bytes(n) maps zero pages lazily: the control proves the request is possible without
    # filling 4 GiB, and the address-space limit refuses it all the same.
    hog = "blocks = [bytes(256 << 20) for _ in range(16)]\nprint('allocated')"
    control = run_in(bwrap_runner, hog, tmp_path, limits=Limits(memory_bytes=8 << 30))
    assert control.out.strip() == "allocated"
    ran = run_in(bwrap_runner, hog, tmp_path, limits=Limits(memory_bytes=1 << 30))
    assert ran.termination.returncode == 1 and b"MemoryError" in ran.stderr
    assert_healthy(bwrap_runner, tmp_path)


def test_tmpfs_fill_is_contained(bwrap_runner, tmp_path):
    code = """
    try:
        with open("/tmp/fill", "wb") as f:
            for _ in range(64):
                f.write(b"x" * (1 << 20))
        print("filled")
    except OSError as exc:
        print("full", exc.errno)
    """
    ran = run_in(bwrap_runner, code, tmp_path, limits=Limits(tmp_bytes=8 << 20))
    assert ran.out.strip() == "full 28", ran.stderr  # ENOSPC
    control = run_in(bwrap_runner, code, tmp_path, limits=Limits(tmp_bytes=128 << 20))
    assert control.out.strip() == "filled"


WORKDIR_FILL = """
import os
written = 0
try:
    for i in range(64):
        with open(f"fill{i}", "wb") as f:  # many files: RLIMIT_FSIZE caps only each one
            f.write(b"x" * (1 << 20))
        written += 1
    print("filled", written)
except OSError as exc:
    print("full", exc.errno, written)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the work dir's tmpfs is mounted by a root farm")
def test_workdir_disk_use_is_capped_and_freed(bwrap_runner, tmp_path):
    """Files in the work dir land on a tmpfs of Limits.workdir_bytes, never on the host disk;
    the host's own file stays visible inside; the mount goes away with the program."""
    (tmp_path / "submission.py").write_text("staged by the host")
    code = "print(open('submission.py').read())\n" + WORKDIR_FILL
    ran = run_in(bwrap_runner, code, tmp_path, limits=Limits(workdir_bytes=8 << 20))
    lines = ran.out.strip().splitlines()
    assert lines[0] == "staged by the host", ran.stderr
    assert lines[1].startswith("full 28"), ran.out  # ENOSPC after ~8 files
    assert int(lines[1].split()[2]) <= 8
    assert not os.path.ismount(tmp_path)
    assert sorted(os.listdir(tmp_path)) == []  # the tmpfs and what was written on it are gone
    control = run_in(bwrap_runner, WORKDIR_FILL, tmp_path, limits=Limits(workdir_bytes=128 << 20))
    assert control.out.strip() == "filled 64"
    assert_healthy(bwrap_runner, tmp_path)


def test_infinite_loop_hits_cpu_limit(bwrap_runner, tmp_path):
    ran = run_in(bwrap_runner, "while True: pass", tmp_path, limits=Limits(cpu_seconds=1))
    assert ran.termination.signal == signal.SIGXCPU
    assert ran.termination.limit == "cpu_seconds"
    assert_healthy(bwrap_runner, tmp_path)


def test_sleeper_hits_wall_limit(bwrap_runner, tmp_path):
    start = time.monotonic()
    sleeper = "import time; time.sleep(60)"
    ran = run_in(bwrap_runner, sleeper, tmp_path, limits=Limits(wall_seconds=1))
    assert time.monotonic() - start < 10
    assert ran.termination.limit == "wall_seconds"
    assert ran.termination.signal == signal.SIGKILL
    assert_healthy(bwrap_runner, tmp_path)


def test_huge_output_is_cut_at_the_cap(bwrap_runner, tmp_path):
    code = "import sys\nwhile True: sys.stdout.buffer.write(b'x' * 65536)"
    ran = run_in(bwrap_runner, code, tmp_path, limits=Limits(output_bytes=1 << 20))
    assert len(ran.stdout) == 1 << 20
    assert ran.termination.limit == "output_bytes"
    assert ran.termination.signal == signal.SIGKILL
    assert_healthy(bwrap_runner, tmp_path)


def test_big_file_hits_file_size_limit(bwrap_runner, tmp_path):
    code = """
    import os
    try:
        open('big', 'wb').write(b'x' * (4 << 20))
    except OSError as exc:
        print(exc.strerror)
    print(os.path.getsize('big'))
    """
    ran = run_in(bwrap_runner, code, tmp_path, limits=Limits(file_size_bytes=1 << 20))
    # Python ignores SIGXFSZ, so the write fails with EFBIG instead of the signal.
    assert ran.out.split() == ["File", "too", "large", str(1 << 20)], ran.stderr
    control = run_in(bwrap_runner, code, tmp_path, limits=Limits(file_size_bytes=8 << 20))
    assert control.out.split() == [str(4 << 20)]
    assert_healthy(bwrap_runner, tmp_path)
