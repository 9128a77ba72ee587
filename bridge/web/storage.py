"""Where finished tracks are stored: a local directory or an S3 (or S3-compatible) bucket.

:class:`LocalStorage` (a directory) or :class:`S3Storage` (``s3://bucket/prefix``, boto3, imported
lazily: an optional dependency; ``AWS_ENDPOINT_URL`` points it at any S3-compatible server). Object
names are ``<track id>.<ext>`` where the id is server-generated hex: no client-supplied string
ever becomes a path or a key. Called from the ``[control]`` loop; S3's blocking calls run on a
worker thread (``[control]`` worker).
"""
from __future__ import annotations

import os

from bridge.web.encoding import FORMATS
from bridge.web.store import TRACK_ID_RE


def _name(tid: str, fmt: str) -> str:
    if not TRACK_ID_RE.match(tid) or fmt not in FORMATS:
        raise ValueError("not a server-generated track id")
    return f"{tid}.{FORMATS[fmt][3]}"


class LocalStorage:
    """Finished tracks as files in one directory."""

    kind = "local"

    def __init__(self, root: str):
        self.root = os.path.abspath(os.path.expanduser(root))
        os.makedirs(self.root, mode=0o700, exist_ok=True)

    def part_path(self, tid: str, fmt: str) -> str:
        """Where the track is written while it renders. ``[control]``"""
        return os.path.join(self.root, _name(tid, fmt) + ".part")

    def commit(self, tid: str, fmt: str, part: str) -> str:
        """Move the finished file in place; returns its location (stored in the row). ``[control]``"""
        final = os.path.join(self.root, _name(tid, fmt))
        os.replace(part, final)
        return final

    def open(self, tid: str, fmt: str):
        """A binary file object of the stored track, or None. ``[control]``"""
        try:
            return open(os.path.join(self.root, _name(tid, fmt)), "rb")
        except FileNotFoundError:
            return None

    def describe(self) -> str:
        """Nothing to describe ahead of a scrape. ``[control]``"""
        return self.root


class S3Storage:
    """Finished tracks as objects ``<prefix>/<id>.<ext>`` in an S3 (or S3-compatible) bucket."""

    kind = "s3"

    def __init__(self, url: str, spool_dir: str):
        import boto3  # lazy: only with --storage s3://…

        rest = url[len("s3://"):]
        self.bucket, _, prefix = rest.partition("/")
        if not self.bucket:
            raise ValueError(f"{url}: no bucket name")
        self.prefix = prefix.strip("/")
        self.client = boto3.client("s3", endpoint_url=os.environ.get("AWS_ENDPOINT_URL") or None)
        self.spool = os.path.abspath(spool_dir)
        os.makedirs(self.spool, mode=0o700, exist_ok=True)

    def _key(self, tid: str, fmt: str) -> str:
        n = _name(tid, fmt)
        return f"{self.prefix}/{n}" if self.prefix else n

    def part_path(self, tid: str, fmt: str) -> str:
        """Where the track is written while it renders. ``[control]``"""
        return os.path.join(self.spool, _name(tid, fmt) + ".part")

    def commit(self, tid: str, fmt: str, part: str) -> str:
        """Upload (blocking: run it on a worker thread) and remove the spooled file. ``[control]`` worker"""
        key = self._key(tid, fmt)
        self.client.upload_file(part, self.bucket, key, ExtraArgs={"ContentType": FORMATS[fmt][2]})
        os.unlink(part)
        return f"s3://{self.bucket}/{key}"

    def open(self, tid: str, fmt: str):
        """The object's streaming body (``read(n)``), or None. Blocking. ``[control]`` worker"""
        try:
            return self.client.get_object(Bucket=self.bucket, Key=self._key(tid, fmt))["Body"]
        except self.client.exceptions.NoSuchKey:
            return None

    def describe(self) -> str:
        """Nothing to describe ahead of a scrape. ``[control]``"""
        return f"s3://{self.bucket}/{self.prefix}"


def make_storage(spec: str | None, state_dir: str):
    """LocalStorage for a directory (default ``<state_dir>/tracks``) or S3Storage for ``s3://…``. ``[control]``"""
    if spec and spec.startswith("s3://"):
        return S3Storage(spec, os.path.join(state_dir, "spool"))
    return LocalStorage(spec or os.path.join(state_dir, "tracks"))
