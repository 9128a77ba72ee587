"""Who may talk to the daemon over the network, and how much: allow lists, per-host budgets,
and the warning a bind beyond loopback deserves. Shared by the OSC adapter and the metrics
endpoint.

- :class:`AllowList` — networks a peer must be in (loopback by default). IPv4-mapped IPv6
  peers are checked as IPv4.
- :func:`host_key` — what "one sender" means for limits: an IPv4 address, an IPv6 /64 (one
  host owns a whole /64), and all of loopback as one host (a local user can bind any of
  127.0.0.0/8 and ::1, so counting those apart would multiply the limits).
- :class:`HostBudgets` — per host, a token bucket of messages and one of CPU seconds, with
  a fixed maximum number of hosts tracked (least recently seen evicted first) and entries
  expiring once idle long enough to be full again (an expired entry and a fresh one are the
  same thing, so expiry forgets nothing). State never grows past ``max_hosts`` entries.
- :func:`exposure_warnings` — the lines a bind beyond loopback prints at start-up.

Threading: ``[control]`` only (the asyncio loop); nothing here locks.
"""
from __future__ import annotations

import collections
import ipaddress

LOOPBACK = ("127.0.0.0/8", "::1/128")


def parse_ip(s):
    """An ``ip_address`` (IPv4-mapped IPv6 → IPv4), or None if ``s`` is not an address."""
    try:
        ip = ipaddress.ip_address(s.split("%", 1)[0] if isinstance(s, str) else s)
    except (ValueError, TypeError):
        return None
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip


class AllowList:
    """Networks a peer must belong to. ``[control]``"""

    def __init__(self, nets=None):
        self.nets = [ipaddress.ip_network(n, strict=False) for n in (nets or LOOPBACK)]
        self.loopback_only = all(n.is_loopback for n in self.nets)

    def allows(self, host) -> bool:
        ip = parse_ip(host)
        return ip is not None and any(ip in n for n in self.nets)

    def describe(self) -> str:
        return ", ".join(str(n) for n in self.nets)


def host_key(host) -> str:
    """The key limits are counted under (see the module docstring)."""
    ip = parse_ip(host)
    if ip is None:
        return str(host)
    if ip.is_loopback:
        return "loopback"
    if ip.version == 6:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def is_loopback_bind(host: str) -> bool:
    """True when binding ``host`` keeps the socket on this machine."""
    if host in ("localhost", "ip6-localhost"):
        return True
    ip = parse_ip(host)
    return ip is not None and ip.is_loopback


def exposure_warnings(what: str, host: str, port: int, allow: AllowList, flag: str) -> list[str]:
    """Warning lines for a listener bound beyond loopback ([] on loopback)."""
    if is_loopback_bind(host):
        return []
    ip = parse_ip(host)
    where = "every interface" if ip is not None and ip.is_unspecified else "a network interface"
    addr = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"      # an IPv6 address bracketed
    if allow.loopback_only:
        return [f"WARNING: {what} listens on {addr} ({where}), but only loopback peers are accepted "
                f"({allow.describe()}); add {flag} CIDR to accept others"]
    return [f"WARNING: {what} listens on {addr} ({where}) and accepts peers from {allow.describe()} "
            f"— there is no authentication: allow only networks you trust"]


class _Host:
    __slots__ = ("tokens", "cpu", "t", "warned")

    def __init__(self, tokens: float, cpu: float, t: float):
        self.tokens, self.cpu, self.t, self.warned = tokens, cpu, t, -1e18


class HostBudgets:
    """Per-host message and CPU buckets with bounded, expiring state. ``[control]``

    ``rate``/``burst``: messages per second and the burst allowed. ``cpu_rate``/``cpu_burst``:
    CPU seconds per second a host's datagrams may cost the loop, and the burst; cost is charged
    after the fact (:meth:`charge`), so a host may run into debt of up to ``cpu_burst`` and is
    refused until it is paid back.
    """

    def __init__(self, rate: float = 2000.0, burst: float = 500.0, cpu_rate: float = 0.2,
                 cpu_burst: float = 0.05, max_hosts: int = 1024, warn_every_s: float = 1.0):
        self.rate, self.burst = float(rate), float(burst)
        self.cpu_rate, self.cpu_burst = float(cpu_rate), float(cpu_burst)
        self.max_hosts = int(max_hosts)
        self.warn_every_s = warn_every_s
        # idle this long, both buckets are full again and the warning may repeat: the entry is
        # then the same as none
        self.ttl_s = max(self.burst / self.rate, 2 * self.cpu_burst / self.cpu_rate, warn_every_s)
        self._h: collections.OrderedDict[str, _Host] = collections.OrderedDict()
        self.evicted = 0

    def __len__(self) -> int:
        return len(self._h)

    def _get(self, key: str, now: float) -> _Host:
        h = self._h
        # least recently seen first: drop whatever has been idle past the ttl
        while h:
            k, e = next(iter(h.items()))
            if now - e.t < self.ttl_s:
                break
            del h[k]
        e = h.get(key)
        if e is None:
            if len(h) >= self.max_hosts:
                h.popitem(last=False)
                self.evicted += 1
            e = _Host(self.burst, self.cpu_burst, now)
            h[key] = e
            return e
        dt = max(0.0, now - e.t)
        e.tokens = min(self.burst, e.tokens + dt * self.rate)
        e.cpu = min(self.cpu_burst, e.cpu + dt * self.cpu_rate)
        e.t = now
        h.move_to_end(key)
        return e

    def admit(self, key: str, now: float, cost: float = 1.0) -> str:
        """``""`` if ``key`` may send ``cost`` messages now (they are taken), else why not:
        ``"rate"`` (message budget) or ``"cpu"`` (CPU budget in debt)."""
        e = self._get(key, now)
        if e.cpu <= 0.0:
            return "cpu"
        if e.tokens < cost:
            return "rate"
        e.tokens -= cost
        return ""

    def take(self, key: str, now: float, cost: float) -> bool:
        """Take ``cost`` more messages from ``key``'s bucket (a bundle's extra messages)."""
        e = self._get(key, now)
        if e.tokens < cost:
            return False
        e.tokens -= cost
        return True

    def charge(self, key: str, now: float, cpu_s: float) -> None:
        """Charge CPU seconds spent on ``key``'s datagram."""
        e = self._get(key, now)
        e.cpu = max(-self.cpu_burst, e.cpu - cpu_s)

    def should_warn(self, key: str, now: float) -> bool:
        """At most one warning reply per ``warn_every_s`` per host."""
        e = self._get(key, now)
        if now - e.warned >= self.warn_every_s:
            e.warned = now
            return True
        return False
