"""The pinned suite of a job, verified by hash and cached by hash under FARM_HOME.

The server names a suite and its hash. The agent uses, in order: a suite installed with the farm
whose manifest verifies to that hash; a copy in FARM_HOME/suite-cache/<hash>/<name>; else it
downloads the suite's archive from the server (GET /api/agent/suites/<name>/?hash=...), unpacks
it there and verifies it. A suite that cannot be had with that hash is a permanent error.
"""

from __future__ import annotations

import io
import logging
import shutil
import tarfile
import tempfile
import threading
from pathlib import Path

from agents.client import ServerClient
from agents.errors import PermanentError, SuiteMismatch
from farm.errors import FarmError
from farm.suite import loader, manifest

log = logging.getLogger(__name__)
MAX_ARCHIVE_BYTES = 64 << 20


class SuiteCache:
    def __init__(self, root: Path, client: ServerClient) -> None:
        self.root = root
        self.client = client
        self._lock = threading.Lock()

    def ensure(self, name: str, suite_hash: str) -> str:
        """What to pass as evaluate(suite=...): a suite name or directory with that hash."""
        with self._lock:
            installed = _installed_hash(name)
            if installed == suite_hash:
                return name
            cached = self.root / suite_hash / name
            if cached.is_dir() and _verified_hash(cached) == suite_hash:
                return str(cached)
            self._fetch(name, suite_hash, cached)
            return str(cached)

    def _fetch(self, name: str, suite_hash: str, target: Path) -> None:
        try:
            data = self.client.download(f"/api/agent/suites/{name}/?hash={suite_hash}")
        except PermanentError as exc:
            raise SuiteMismatch(
                f"suite {name}@{suite_hash[:12]}: the server has no copy ({exc})"
            ) from None
        if len(data) > MAX_ARCHIVE_BYTES:
            raise SuiteMismatch(f"suite {name}: archive of {len(data)} bytes is too large")
        self.root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".fetch-", dir=self.root))
        try:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
                tar.extractall(staging, filter="data")
            got = _verified_hash(staging / name)
            if got != suite_hash:
                raise SuiteMismatch(
                    f"suite {name}: the server's archive hashes to {got}, the job names "
                    f"{suite_hash}; not using it"
                )
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(target, ignore_errors=True)
            (staging / name).rename(target)
            log.info("suite %s@%s cached in %s", name, suite_hash[:12], target)
        except (tarfile.TarError, OSError) as exc:
            raise SuiteMismatch(f"suite {name}: unusable archive ({exc})") from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def _installed_hash(name: str) -> str | None:
    try:
        return loader.load_suite(name, verify=True).hash
    except FarmError:
        return None


def _verified_hash(root: Path) -> str | None:
    try:
        return manifest.verify(root)
    except FarmError:
        return None
