"""Where a webhook may be sent, and the one way butai sends it (SSRF-safe).

A webhook URL is chosen by whoever holds a stage's agent key, and the request
leaves from inside butai's network, so the URL must never reach butai's own
side: loopback, private and link-local ranges, cloud metadata addresses.  The
rules:

- ``https`` only; plain ``http`` only to 127.0.0.1 / ::1 / localhost, and only
  in the local runtime (``local=True``);
- no user name or password in the URL;
- the host is resolved, **every** address it resolves to must be allowed, and
  the connection goes to the address that was checked (pinned), so a DNS
  answer that changes between the check and the connect (rebinding) cannot
  slip through; TLS still verifies the certificate against the host name;
- redirects are not followed (a 3xx is a failed delivery), timeouts are short,
  and at most ``MAX_RESPONSE_BYTES`` of the answer are read.
"""
from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_URL_LENGTH = 2048
MAX_RESPONSE_BYTES = 4096
CONNECT_TIMEOUT_S = 3.0
READ_TIMEOUT_S = 5.0
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}
# Instance metadata services reachable from inside clouds (AWS IPv4 and IPv6, Alibaba, Oracle).
METADATA = {ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200",
                                               "192.0.0.192")}

Resolver = Callable[[str, int], list[str]]


class TargetRefused(ValueError):
    """The URL, or an address it resolves to, may not receive webhooks; ``reason`` is a stable code."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str          # path and query, as sent


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes        # at most MAX_RESPONSE_BYTES
    address: str       # the pinned address the request went to


def system_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(info[4][0] for info in infos))


def parse(url: str, *, local: bool = False) -> Target:
    """Checks a URL's shape (no DNS); raises TargetRefused."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL_LENGTH:
        raise TargetRefused("invalid_url", f"url must be 1-{MAX_URL_LENGTH} characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise TargetRefused("invalid_url", "url is not a valid URL") from None
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("https", "http") or not host:
        raise TargetRefused("invalid_url", "url must be an absolute https:// URL")
    if parts.username is not None or parts.password is not None:
        raise TargetRefused("invalid_url", "url must not carry a user name or password")
    if parts.fragment:
        raise TargetRefused("invalid_url", "url must not have a #fragment")
    if any(ord(c) < 0x21 or ord(c) == 0x7f for c in url):
        raise TargetRefused("invalid_url", "url must not contain spaces or control characters")
    if parts.scheme == "http" and not (local and host in LOOPBACK_NAMES):
        raise TargetRefused("https_required", "url must use https (plain http only to 127.0.0.1 in a local run)")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    target = Target(parts.scheme, host, port or (443 if parts.scheme == "https" else 80), path)
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        check_address(str(literal), local=local)
    elif host == "localhost" and not local:
        raise TargetRefused("loopback", "url points at this machine (localhost)")
    return target


def check_address(address: str, *, local: bool = False) -> None:
    """Raises TargetRefused unless ``address`` is a public unicast address (or loopback, locally)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip in METADATA:
        raise TargetRefused("metadata_address", f"{ip} is a cloud metadata address")
    if ip.is_loopback:
        if local:
            return
        raise TargetRefused("loopback", f"{ip} is a loopback address")
    if ip.is_link_local:
        raise TargetRefused("link_local_address", f"{ip} is a link-local address")
    if ip.is_private or ip.is_unspecified or ip.is_reserved or ip.is_multicast or not ip.is_global:
        raise TargetRefused("private_address", f"{ip} is not a public address")


def resolve(target: Target, *, local: bool = False, resolver: Resolver = system_resolver) -> str:
    """The address to connect to: every address the host resolves to must be allowed."""
    try:
        addresses = resolver(target.host, target.port)
    except OSError as exc:
        raise TargetRefused("dns_failed", f"cannot resolve {target.host}: {exc}") from None
    if not addresses:
        raise TargetRefused("dns_failed", f"{target.host} resolves to no address")
    for address in addresses:
        check_address(address, local=local)
    return addresses[0]


def post(url: str, body: bytes, headers: dict[str, str], *, local: bool = False,
         resolver: Resolver = system_resolver, connect_timeout: float = CONNECT_TIMEOUT_S,
         read_timeout: float = READ_TIMEOUT_S, tls: ssl.SSLContext | None = None) -> Answer:
    """POSTs ``body`` to ``url`` under the rules above.  Raises TargetRefused before any
    connection to a refused address, OSError/HTTPException when the receiver cannot be reached."""
    target = parse(url, local=local)
    address = resolve(target, local=local, resolver=resolver)

    def pinned(_address, timeout=None, source_address=None):
        sock = socket.create_connection((address, target.port), timeout=connect_timeout)
        sock.settimeout(read_timeout)
        return sock

    if target.scheme == "https":
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            target.host, target.port, timeout=read_timeout, context=tls or ssl.create_default_context())
    else:
        conn = http.client.HTTPConnection(target.host, target.port, timeout=read_timeout)
    # http.client opens its socket through this hook; the TLS layer (for https) still
    # wraps it with the host name, so the certificate is checked against the URL's host.
    conn._create_connection = pinned  # type: ignore[attr-defined]
    try:
        conn.request("POST", target.path, body=body, headers={
            "Content-Type": "application/json", "User-Agent": "butai-webhooks", **headers})
        response = conn.getresponse()
        data = response.read(MAX_RESPONSE_BYTES)
        return Answer(response.status, data, address)
    finally:
        conn.close()
