"""A hand-rolled OSC 1.0 encoder/decoder for the tests (not python-osc), as an independent client
would speak it, and Prometheus' text format read through prometheus_client's parser."""
from __future__ import annotations

import struct

NTP_EPOCH = 2208988800


def pad(b: bytes) -> bytes:
    b += b"\0"
    return b + b"\0" * (-len(b) % 4)


def msg(address: str, *args, tags: str | None = None) -> bytes:
    t, body = ",", b""
    for a in args:
        if isinstance(a, bool):
            t += "T" if a else "F"
        elif isinstance(a, int):
            t += "i"
            body += struct.pack(">i", a)
        elif isinstance(a, float):
            t += "f"
            body += struct.pack(">f", a)
        elif isinstance(a, bytes):
            t += "b"
            body += struct.pack(">i", len(a)) + a + b"\0" * (-len(a) % 4)
        else:
            t += "s"
            body += pad(str(a).encode())
    return pad(address.encode()) + pad((tags if tags is not None else t).encode()) + body


def timetag(unix: float | None) -> bytes:
    if unix is None:
        return struct.pack(">Q", 1)                       # "immediately"
    sec = int(unix) + NTP_EPOCH
    return struct.pack(">II", sec, int((unix % 1.0) * 2 ** 32))


def bundle(tt: bytes, *elements: bytes) -> bytes:
    return b"#bundle\0" + tt + b"".join(struct.pack(">i", len(e)) + e for e in elements)


def parse(data: bytes):
    end = data.index(b"\0")
    addr = data[:end].decode()
    i = (end + 4) & ~3
    tend = data.index(b"\0", i)
    tags = data[i + 1:tend].decode()
    i = (tend + 4) & ~3
    out = []
    for t in tags:
        if t in "if":
            out.append(struct.unpack_from(">" + t, data, i)[0])
            i += 4
        elif t == "s":
            e = data.index(b"\0", i)
            out.append(data[i:e].decode())
            i = (e + 4) & ~3
    return addr, tags, out


def prom_samples(text: str) -> dict:
    """{sample name with labels: value} from Prometheus' text exposition format (parsed by
    ``prometheus_client.parser``; keys as the exposition writes them: ``name{a="b"}``)."""
    from prometheus_client.parser import text_string_to_metric_families

    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in s.labels.items())
            out[f"{s.name}{{{labels}}}" if labels else s.name] = float(s.value)
    return out
