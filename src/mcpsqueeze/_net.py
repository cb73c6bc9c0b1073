"""Network names, defined once: which hosts only this machine reaches, and which backends are URLs.
Standard library only (the shell shim checks its session's address with it)."""

from __future__ import annotations

__all__ = ["LOOPBACK", "is_loopback", "is_url"]

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def is_loopback(host: str) -> bool:
    """True for an address (or "localhost"; IPv6 with or without brackets) only this machine can reach."""
    name = host.strip("[]").lower()
    if name in LOOPBACK:
        return True
    import ipaddress

    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def is_url(target: list[str] | tuple[str, ...] | str) -> bool:
    """Whether a backend given as a command line (or one word) is a streamable-HTTP URL."""
    words = [target] if isinstance(target, str) else list(target)
    return len(words) == 1 and words[0].startswith(("http://", "https://"))
