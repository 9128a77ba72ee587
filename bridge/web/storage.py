"""Where finished tracks are stored: a local directory or an S3 (or S3-compatible) bucket.

:class:`LocalStorage` (a directory) or :class:`S3Storage` (``s3://bucket/prefix``, boto3, imported
lazily: an optional dependency; ``AWS_ENDPOINT_URL`` points it at any S3-compatible server). Object
names are ``<track id>.<ext>`` where the id is server-generated hex: no client-supplied string
ever becomes a path or a key.

Threading: the methods that touch storage (:meth:`commit`, :meth:`open`, :meth:`read`) are
coroutines on the ``[control]`` loop; the blocking work runs on the storage's OWN small thread pool
(``[control]`` worker), never on the encoders', and every call has a timeout. A call that does not
answer in time, a pool whose threads are all still stuck in earlier calls, a connection refused or
a server error raise :class:`StorageError` (the API answers 503 with ``Retry-After``; a render keeps
its file and retries the upload): a hung or failing S3 costs the tracks, never a live stream or an
encoder. boto3 itself is bounded too: connect and read timeouts, a few standard-mode retries, and
uploads on the calling thread (no transfer threads of its own). Directories are 0700 and files 0600
(``bridge.web.store.private_dir``, ``open_private``).
"""
from __future__ import annotations

import asyncio
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from bridge.web.encoding import FORMATS
from bridge.web.store import TRACK_ID_RE, private_dir

#: storage threads (their own pool: a hung store never holds an encoder's thread)
WORKERS = 4
#: one open or read of a stored track, and one local rename
CALL_TIMEOUT_S = 30.0
#: one upload of a finished track, all its attempts together (a 600 s WAV is 230 MB)
UPLOAD_TIMEOUT_S = 600.0
#: boto3: TCP connect, one socket read, attempts per request (standard retry mode)
CONNECT_TIMEOUT_S = 5.0
READ_TIMEOUT_S = 20.0
MAX_ATTEMPTS = 3


class StorageError(Exception):
    """Storage did not answer or failed; the message says what happened (no traceback needed)."""


def _name(tid: str, fmt: str) -> str:
    if not TRACK_ID_RE.match(tid) or fmt not in FORMATS:
        raise ValueError("not a server-generated track id")
    return f"{tid}.{FORMATS[fmt][3]}"


class _Storage:
    """The pool and the bounded call every storage kind shares. ``[control]``"""

    def __init__(self, workers: int | None = None):
        self.workers = max(1, int(workers or WORKERS))
        self.pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="wavebridge-storage")
        self._busy = 0                  # calls on the pool, including ones nobody waits for any more
        self._lock = threading.Lock()

    def _release(self, _fut) -> None:
        with self._lock:
            self._busy -= 1

    async def call(self, timeout_s: float, fn, *args):
        """``fn(*args)`` on the storage pool within ``timeout_s``; raises StorageError (timeout, stuck
        pool, or what ``fn`` raised, classified by :meth:`_error`). ``[control]``"""
        with self._lock:
            if self._busy >= self.workers:
                raise StorageError(f"{self.describe()} is not answering ({self._busy} calls still waiting on it)")
            self._busy += 1
        try:
            fut = self.pool.submit(fn, *args)
        except RuntimeError:            # the pool is shut down: the service is closing
            self._release(None)
            raise StorageError("storage is closed") from None
        fut.add_done_callback(self._release)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(fut), timeout_s)
        except (asyncio.TimeoutError, TimeoutError):
            raise StorageError(f"{self.describe()} did not answer in {timeout_s:g} s") from None
        except StorageError:
            raise
        except Exception as e:  # noqa: BLE001 — classified into one error with a clear message
            raise self._error(e) from e

    def _error(self, e: Exception) -> StorageError:
        return StorageError(f"{self.describe()}: {type(e).__name__}: {e}"[:400])

    async def read(self, f, n: int = 256 * 1024) -> bytes:
        """Up to ``n`` bytes of an object :meth:`open` returned. ``[control]``"""
        return await self.call(CALL_TIMEOUT_S, f.read, n)

    def close(self) -> None:
        """End the pool without waiting for calls stuck in a hung store (at shutdown). ``[control]``"""
        self.pool.shutdown(wait=False, cancel_futures=True)


class LocalStorage(_Storage):
    """Finished tracks as files in one directory."""

    kind = "local"

    def __init__(self, root: str, workers: int | None = None):
        self.root = private_dir(root, "tracks directory")
        super().__init__(workers)

    def part_path(self, tid: str, fmt: str) -> str:
        """Where the track is written while it renders. ``[control]``"""
        return os.path.join(self.root, _name(tid, fmt) + ".part")

    def kept_path(self, tid: str, fmt: str) -> str:
        """Where a finished track waits when :meth:`commit` failed (its part file, left in place). ``[control]``"""
        return self.part_path(tid, fmt)

    def keep(self, tid: str, fmt: str, part: str) -> str:
        """Keep a finished file whose commit failed; returns where it is. ``[control]``"""
        return part

    async def commit(self, tid: str, fmt: str, path: str) -> str:
        """Move the finished file in place; returns its location (stored in the row). ``[control]``"""
        final = os.path.join(self.root, _name(tid, fmt))
        await self.call(CALL_TIMEOUT_S, os.replace, path, final)
        return final

    async def open(self, tid: str, fmt: str):
        """A binary file object of the stored track, or None when it is gone. ``[control]``"""
        return await self.call(CALL_TIMEOUT_S, self._open, os.path.join(self.root, _name(tid, fmt)))

    @staticmethod
    def _open(path: str):
        try:
            return open(path, "rb")
        except FileNotFoundError:
            return None

    def describe(self) -> str:
        """Where the tracks are, for messages. ``[control]``"""
        return self.root


class S3Storage(_Storage):
    """Finished tracks as objects ``<prefix>/<id>.<ext>`` in an S3 (or S3-compatible) bucket."""

    kind = "s3"
    GONE = ("NoSuchKey", "404", "NotFound")         # the object was deleted: 410

    def __init__(self, url: str, spool_dir: str, workers: int | None = None):
        import boto3  # lazy: only with --storage s3://…
        from boto3.s3.transfer import TransferConfig
        from botocore.config import Config

        rest = url[len("s3://"):]
        self.bucket, _, prefix = rest.partition("/")
        if not self.bucket:
            raise ValueError(f"{url}: no bucket name")
        self.prefix = prefix.strip("/")
        self.spool = private_dir(spool_dir, "spool directory")
        super().__init__(workers)
        cfg = Config(connect_timeout=CONNECT_TIMEOUT_S, read_timeout=READ_TIMEOUT_S,
                     retries={"max_attempts": MAX_ATTEMPTS, "mode": "standard"},
                     max_pool_connections=self.workers)
        self.client = boto3.client("s3", endpoint_url=os.environ.get("AWS_ENDPOINT_URL") or None, config=cfg)
        self.transfer = TransferConfig(use_threads=False)

    def _key(self, tid: str, fmt: str) -> str:
        n = _name(tid, fmt)
        return f"{self.prefix}/{n}" if self.prefix else n

    def part_path(self, tid: str, fmt: str) -> str:
        """Where the track is written while it renders. ``[control]``"""
        return os.path.join(self.spool, _name(tid, fmt) + ".part")

    def kept_path(self, tid: str, fmt: str) -> str:
        """Where a finished track waits for its upload when one failed. ``[control]``"""
        return os.path.join(self.spool, _name(tid, fmt))

    def keep(self, tid: str, fmt: str, part: str) -> str:
        """Keep a finished file whose upload failed (spooled, to retry); returns where it is. ``[control]``"""
        kept = self.kept_path(tid, fmt)
        os.replace(part, kept)
        return kept

    async def commit(self, tid: str, fmt: str, path: str) -> str:
        """Upload the finished file and remove it from the spool; returns ``s3://bucket/key``. ``[control]``"""
        key = self._key(tid, fmt)
        await self.call(UPLOAD_TIMEOUT_S, self._upload, path, key, FORMATS[fmt][2])
        return f"s3://{self.bucket}/{key}"

    def _upload(self, path: str, key: str, content_type: str) -> None:
        self.client.upload_file(path, self.bucket, key, ExtraArgs={"ContentType": content_type},
                                Config=self.transfer)
        os.unlink(path)

    async def open(self, tid: str, fmt: str):
        """The object's streaming body (``read(n)``), or None when it is gone. ``[control]``"""
        return await self.call(CALL_TIMEOUT_S, self._open, self._key(tid, fmt))

    def _open(self, key: str):
        from botocore.exceptions import ClientError

        try:
            return self.client.get_object(Bucket=self.bucket, Key=key)["Body"]
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") in self.GONE:
                return None
            raise

    def _error(self, e: Exception) -> StorageError:
        from botocore.exceptions import ClientError

        cause = getattr(e, "last_exception", None) or e      # S3UploadFailedError wraps the ClientError
        if isinstance(cause, ClientError):
            err = cause.response.get("Error", {})
            return StorageError(f"{self.describe()}: {err.get('Code', '?')}: {err.get('Message', '')}"[:400])
        return super()._error(e)

    def describe(self) -> str:
        """Where the tracks are, for messages. ``[control]``"""
        return f"s3://{self.bucket}/{self.prefix}"


def make_storage(spec: str | None, state_dir: str):
    """LocalStorage for a directory (default ``<state_dir>/tracks``) or S3Storage for ``s3://…``. ``[control]``"""
    if spec and spec.startswith("s3://"):
        return S3Storage(spec, os.path.join(state_dir, "spool"))
    return LocalStorage(spec or os.path.join(state_dir, "tracks"))
