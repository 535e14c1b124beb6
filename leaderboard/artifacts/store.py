"""Artifact storage: S3 through django-storages when FARM_S3_BUCKET is set, else the local
filesystem under MEDIA_ROOT. This module is the only one that touches boto3/botocore.

The store is created on first use. Writes (from Celery tasks) have explicit connect/read timeouts
and are retried with exponential backoff (FARM_S3_TIMEOUT_S, FARM_S3_ATTEMPTS, FARM_S3_BACKOFF_S).
Reads serve a request (a source for a claim or a reader) and hold a web thread while they wait:
they get one try with a short timeout (FARM_S3_REQUEST_TIMEOUT_S) and fail fast with a 503 the
caller retries. Every failure surfaces as one domain exception, ArtifactStoreError. Nodes never
hold S3 credentials: they upload through the server's own signed endpoint, which stores the bytes
(leaderboard.artifacts.services.artifact_put_signed); owners download through presigned URLs
(S3) or the server's signed ones (local storage).
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from django.conf import settings
from django.core import signing
from django.core.signals import setting_changed
from django.dispatch import receiver

log = logging.getLogger(__name__)
T = TypeVar("T")
_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-/]*$")
UPLOAD_SALT = "farm.artifact.upload"
DOWNLOAD_SALT = "farm.artifact.download"


class ArtifactStoreError(Exception):
    """Artifact storage could not do what was asked (unreachable, slow, 5xx, missing object).

    `missing` is True when the object does not exist (retrying will not help).
    """

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


class ArtifactStore(Protocol):
    kind: str

    def put(
        self, key: str, data: bytes, *, content_type: str, attempts: int | None = None
    ) -> None: ...
    def get(self, key: str) -> bytes: ...
    def exists(self, key: str) -> bool: ...
    def download_url(self, key: str, *, base_url: str, filename: str, content_type: str) -> str: ...


def _check_key(key: str) -> str:
    if not _KEY.match(key) or ".." in key.split("/"):
        raise ArtifactStoreError(f"bad artifact key {key!r}")
    return key


class S3Store:
    kind = "s3"

    def __init__(self) -> None:
        from botocore.config import Config
        from storages.backends.s3 import S3Storage

        self.prefix = settings.FARM_S3_PREFIX.strip("/")

        def storage(timeout: float) -> S3Storage:
            return S3Storage(
                bucket_name=settings.FARM_S3_BUCKET,
                endpoint_url=settings.AWS_S3_ENDPOINT_URL,
                region_name=settings.AWS_S3_REGION_NAME,
                file_overwrite=True,
                default_acl=None,
                querystring_expire=settings.FARM_PRESIGN_EXPIRES_S,
                client_config=Config(
                    connect_timeout=timeout,
                    read_timeout=timeout,
                    retries={"total_max_attempts": 1, "mode": "standard"},
                    signature_version="s3v4",
                ),
            )

        self.storage = storage(settings.FARM_S3_TIMEOUT_S)
        self.reader = storage(settings.FARM_S3_REQUEST_TIMEOUT_S)

    def _name(self, key: str) -> str:
        key = _check_key(key)
        return f"{self.prefix}/{key}" if self.prefix else key

    def _call(self, what: str, fn: Callable[[], T], attempts: int | None = None) -> T:
        from botocore.exceptions import BotoCoreError, ClientError

        attempts = attempts or settings.FARM_S3_ATTEMPTS
        for attempt in range(attempts):
            try:
                return fn()
            except ClientError as exc:
                code = str(exc.response.get("Error", {}).get("Code", ""))
                status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
                if code in {"NoSuchKey", "404", "NotFound"}:
                    raise ArtifactStoreError(f"{what}: no such object", missing=True) from None
                if status and status < 500 and code not in {"SlowDown", "RequestTimeout"}:
                    raise ArtifactStoreError(f"{what}: S3 refused the request ({code})") from None
                error: Exception = exc
            except (BotoCoreError, OSError) as exc:
                error = exc
            if attempt + 1 < attempts:
                time.sleep(settings.FARM_S3_BACKOFF_S * 2**attempt)
        log.warning("%s failed after %d attempts: %s", what, attempts, error)
        raise ArtifactStoreError(
            f"{what}: artifact storage unavailable after {attempts} attempts ({error})"
        )

    def put(self, key: str, data: bytes, *, content_type: str, attempts: int | None = None) -> None:
        name = self._name(key)

        def upload() -> None:
            self.storage.bucket.meta.client.put_object(
                Bucket=self.storage.bucket_name, Key=name, Body=data, ContentType=content_type
            )

        self._call(f"storing {key}", upload, attempts)

    def get(self, key: str) -> bytes:
        name = self._name(key)

        def download() -> bytes:
            obj = self.reader.bucket.meta.client.get_object(
                Bucket=self.reader.bucket_name, Key=name
            )
            return bytes(obj["Body"].read())

        return self._call(f"reading {key}", download, attempts=1)

    def exists(self, key: str) -> bool:
        return self._call(f"checking {key}", lambda: bool(self.storage.exists(self._name(key))))

    def download_url(self, key: str, *, base_url: str, filename: str, content_type: str) -> str:
        parameters = {
            "ResponseContentDisposition": attachment(filename),
            "ResponseContentType": content_type,
        }
        name = self._name(key)
        return str(
            self.storage.url(name, parameters=parameters, expire=settings.FARM_PRESIGN_EXPIRES_S)
        )


class LocalStore:
    """Files under MEDIA_ROOT; downloads go through signed server URLs."""

    kind = "local"

    def __init__(self) -> None:
        self.root = Path(settings.MEDIA_ROOT)

    def _path(self, key: str) -> Path:
        return self.root / _check_key(key)

    def put(self, key: str, data: bytes, *, content_type: str, attempts: int | None = None) -> None:
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".upload-")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except OSError as exc:
            raise ArtifactStoreError(f"storing {key}: {exc.strerror}") from None

    def get(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            raise ArtifactStoreError(f"reading {key}: no such object", missing=True) from None
        except OSError as exc:
            raise ArtifactStoreError(f"reading {key}: {exc.strerror}") from None

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def download_url(self, key: str, *, base_url: str, filename: str, content_type: str) -> str:
        return signed_download_url(
            key, base_url=base_url, filename=filename, content_type=content_type
        )


def signed_upload_url(key: str, *, content_type: str, base_url: str) -> str:
    """The server's own signed upload URL, the only way a node uploads (whatever the store)."""
    token = signing.dumps({"k": key, "ct": content_type}, salt=UPLOAD_SALT)
    return f"{base_url.rstrip('/')}/api/agent/upload/{token}/"


def signed_download_url(key: str, *, base_url: str, filename: str, content_type: str) -> str:
    """The server's own signed download URL (local storage, and bytes still in the database)."""
    token = signing.dumps({"k": key, "f": filename, "ct": content_type}, salt=DOWNLOAD_SALT)
    return f"{base_url.rstrip('/')}/api/artifacts/{token}/"


def attachment(filename: str) -> str:
    """A Content-Disposition that makes browsers save the file, never render it."""
    return f'attachment; filename="{filename}"'


def signed_key(token: str, *, salt: str) -> dict[str, Any]:
    """The payload of a signed local URL; ArtifactStoreError when forged or expired."""
    try:
        return dict(signing.loads(token, salt=salt, max_age=settings.FARM_PRESIGN_EXPIRES_S))
    except signing.BadSignature:
        raise ArtifactStoreError(
            "the signed URL is invalid or expired; ask for a new one"
        ) from None


_lock = threading.Lock()
_store: ArtifactStore | None = None


def artifact_store() -> ArtifactStore:
    """The configured store, created on first use."""
    global _store
    with _lock:
        if _store is None:
            _store = S3Store() if settings.FARM_S3_BUCKET else LocalStore()
        return _store


@receiver(setting_changed)
def artifact_store_reset(**kwargs: Any) -> None:
    """Forget the store, so that the next use reads the settings again (tests, reconfiguration)."""
    global _store
    with _lock:
        _store = None
