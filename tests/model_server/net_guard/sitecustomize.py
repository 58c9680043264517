"""Loaded by Python at start-up when this folder is on PYTHONPATH: refuses and logs every non-loopback connection.

Name resolution of any host but localhost and every connect() to an address outside 127.0.0.0/8 and ::1 fails
as an unreachable network would, and one line per attempt goes to $NET_GUARD_LOG. A test then reads the
log: an empty file means the process never tried to reach the network.
"""

from __future__ import annotations

import ipaddress
import os
import socket

_LOG = os.environ.get("NET_GUARD_LOG")
_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}
_getaddrinfo = socket.getaddrinfo
_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex


def _note(what: str) -> None:
    if _LOG:
        with open(_LOG, "a", encoding="utf-8") as log:
            log.write(f"{os.getpid()} {what}\n")


def _loopback(host: object) -> bool:
    if host is None:
        return True
    text = host.decode() if isinstance(host, bytes) else str(host)
    if text.lower() in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(text.split("%")[0]).is_loopback
    except ValueError:
        return False


def getaddrinfo(host, *args, **kwargs):  # type: ignore[no-untyped-def]
    if not _loopback(host):
        _note(f"resolve {host!r}")
        raise socket.gaierror(socket.EAI_NONAME, f"network disabled by the test: {host}")
    return _getaddrinfo(host, *args, **kwargs)


def _check(sock: socket.socket, address: object) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple) and not _loopback(address[0]):
        _note(f"connect {address!r}")
        raise OSError(101, f"network disabled by the test: {address!r}")


def connect(self, address):  # type: ignore[no-untyped-def]
    _check(self, address)
    return _connect(self, address)


def connect_ex(self, address):  # type: ignore[no-untyped-def]
    _check(self, address)
    return _connect_ex(self, address)


socket.getaddrinfo = getaddrinfo
socket.socket.connect = connect  # type: ignore[method-assign]
socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
