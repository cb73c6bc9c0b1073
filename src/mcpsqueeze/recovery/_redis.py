"""Originals in a shared Redis, so any replica can recover what another one shrank; the dedup index
replicas share (`first_seen`); and the record of what each call showed (`remember_call`), so `full` on any
replica answers with the original of a call another one served. Every key carries the tenant; retention
is a TTL on every key; the size bound is per tenant, enforced atomically by a Lua script that evicts the
oldest entries (dedup keys and call records included) first. A dead Redis never stalls a call: short
timeouts, then "unavailable" at once for a moment; results then pass unshrunk. The client reconnects by
itself.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
import urllib.parse
from typing import TYPE_CHECKING, Any

from mcpsqueeze._errors import RecoveryError, UsageError, install_hint

from ._ids import require_response_id
from ._port import DEFAULT, Space

if TYPE_CHECKING:
    import redis

__all__ = ["TENANT_RE", "RedisStore", "safe_url"]

log = logging.getLogger("mcpsqueeze.recovery")

TENANT_RE = re.compile(r"^[A-Za-z0-9_.@-]{1,64}\Z")
DEFAULT_MAX_BYTES = 1024 * 1024 * 1024  # per tenant
DEFAULT_TIMEOUT = 0.5  # seconds, connect and each command
_RETRY_AFTER = 1.0  # seconds a failed Redis is skipped before the next attempt

# The index of one tenant's entries, shared by the originals, the dedup index and the record of calls (so
# their keys are removed and counted in max_bytes too, with or without a retention). A member is an
# original's response id, `d:SCOPE:DIGEST` for a dedup key or `c:SCOPE:CALL` for a call's record (response
# ids never hold a colon); each is dropped oldest first once the tenant's bytes pass max_bytes, and after
# the retention when there is one.
# KEYS: the entry's own key, index (zset member -> stored at, in Redis' own microseconds, strictly
#       increasing), sizes (hash member -> bytes), total (bytes counter), evicted (zset of the last 1,024
#       originals dropped for max_bytes, so a read of one says why it is gone; not counted in max_bytes)
# Variables set before: len, ttl (ms, 0: keep), max, id (the member), prefix (of originals' keys), base
# (of the tenant's keys)
_INDEX = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
if #last == 2 and tonumber(last[2]) >= now then now = tonumber(last[2]) + 1 end
local function forget(old)
  local size = tonumber(redis.call('HGET', KEYS[3], old) or '0')
  redis.call('HDEL', KEYS[3], old)
  redis.call('ZREM', KEYS[2], old)
  redis.call('DECRBY', KEYS[4], size)
end
local function original(member)
  local kind = string.sub(member, 1, 2)
  return kind ~= 'd:' and kind ~= 'c:'
end
local function drop(old)
  forget(old)
  if original(old) then redis.call('DEL', prefix .. old)
  else redis.call('DEL', base .. old) end
end
forget(id)
if ttl > 0 then
  for _, old in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - ttl * 1000)) do drop(old) end
end
local evicted = 0
while tonumber(redis.call('GET', KEYS[4]) or '0') + len > max do
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)
  if #oldest == 0 then redis.call('SET', KEYS[4], 0) break end
  drop(oldest[1])
  if original(oldest[1]) then
    redis.call('ZADD', KEYS[5], now, oldest[1])
    redis.call('ZREMRANGEBYRANK', KEYS[5], 0, -1025)
  end
  evicted = evicted + 1
end
redis.call('ZADD', KEYS[2], now, id)
redis.call('HSET', KEYS[3], id, len)
redis.call('INCRBY', KEYS[4], len)
if ttl > 0 then
  for i = 2, 5 do redis.call('PEXPIRE', KEYS[i], ttl) end
end
"""

# Every script's arguments. ARGV: the original or record, ttl ms (0: keep), max bytes, the member (a response
# id, d:SCOPE:DIGEST or c:SCOPE:CALL), key prefix of originals, tenant base
_ARGS = """
local data, ttl, max = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local id, prefix, base = ARGV[4], ARGV[5], ARGV[6]
"""

_PUT = (
    _ARGS
    + """
local len = string.len(data)
if len > max then return -1 end
-- The original first: the script's first write is the one Redis refuses when it is full (maxmemory), so
-- a refused original changes nothing; after a first write Redis lets a script finish.
if ttl > 0 then redis.call('SET', KEYS[1], data, 'PX', ttl) else redis.call('SET', KEYS[1], data) end
"""
    + _INDEX
    + "return evicted\n"
)

# The dedup index (SET NX GET, atomic across replicas): the record first stored for this digest, or
# false when it is new, in which case it is indexed (and counted: key and record) like an original.
_SEEN = (
    _ARGS
    + """
local old
if ttl > 0 then
  old = redis.call('SET', KEYS[1], data, 'NX', 'GET', 'PX', ttl)
else
  old = redis.call('SET', KEYS[1], data, 'NX', 'GET')
end
if old then return old end
local len = string.len(KEYS[1]) + string.len(data)
if len > max then redis.call('DEL', KEYS[1]) return false end
"""
    + _INDEX
    + "return false\n"
)

# The record of calls (`remember_call`): the last record of one call in (tenant, scope) replaces the one
# before, indexed (and counted: key and record) like an original. A record the bound cannot take removes
# the one before, so no older record outlives a later call.
_CALL = (
    _ARGS
    + """
local len = string.len(KEYS[1]) + string.len(data)
if len > max then redis.call('DEL', KEYS[1]) return 0 end
if ttl > 0 then redis.call('SET', KEYS[1], data, 'PX', ttl) else redis.call('SET', KEYS[1], data) end
"""
    + _INDEX
    + "return 1\n"
)


def _split_url(url: str) -> tuple[str, int, float]:
    """Our own query parameters (max_bytes, timeout) out of the URL; the rest is redis-py's."""
    from ._clean import parse_size

    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("redis", "rediss", "unix"):
        raise UsageError(
            f"--recovery-url {safe_url(url)!r}: use redis://HOST:PORT/DB (or rediss://, unix://)"
        )
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    max_bytes, timeout = DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT
    rest = []
    for key, value in query:
        try:
            if key == "max_bytes":
                max_bytes = parse_size(value)
            elif key == "timeout":
                timeout = float(value)
                if not timeout > 0:
                    raise ValueError
            else:
                rest.append((key, value))
        except (UsageError, ValueError):
            raise UsageError(
                f"--recovery-url: {key}={value!r} is not valid (e.g. max_bytes=1G, timeout=0.5)"
            ) from None
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(rest))), max_bytes, timeout


class RedisStore:
    """Thread-safe; every method either does its work or raises RecoveryError, never hangs."""

    def __init__(
        self,
        url: str,
        retention: float | None,
        *,
        max_bytes: int | None = None,
        prefix: str = "mcpsqueeze",
    ) -> None:
        try:
            import redis
        except ImportError:
            hint = install_hint("redis", "redis")
            raise UsageError(f"--recovery-url needs the Redis client: {hint}") from None
        plain_url, url_max, url_timeout = _split_url(url)
        self.url = url
        self.retention = retention
        self.max_bytes = max_bytes if max_bytes is not None else url_max
        self.timeout = url_timeout
        self.prefix = prefix
        self._redis_errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        # Only these mean "Redis is not there": skip it for a moment. Others (out of memory, a command
        # this Redis lacks) fail just the one operation.
        self._outages: tuple[type[BaseException], ...] = (
            redis.ConnectionError,
            redis.TimeoutError,
            OSError,
        )
        self._client: redis.Redis = redis.Redis.from_url(
            plain_url,
            socket_timeout=self.timeout,
            socket_connect_timeout=self.timeout,
            retry_on_timeout=False,
            health_check_interval=30,
        )
        self._put = self._client.register_script(_PUT)
        self._seen = self._client.register_script(_SEEN)
        self._call = self._client.register_script(_CALL)
        self._lock = threading.Lock()
        self._down_until = 0.0
        self._last_error = ""
        self._healthy = True  # so an outage is reported once when it starts and once when it ends

    def put(
        self, response_id: str, original: bytes, *, space: Space = DEFAULT, digest: str = ""
    ) -> str | None:
        """Store an original under the tenant, or raise RecoveryError (it was not stored)."""
        require_response_id(response_id)
        base = self._base(space.tenant)
        result = self._script("store an original", self._put, base, "o:" + response_id, response_id, original)
        if result == -1:
            raise RecoveryError(
                f"{len(original)} bytes exceed the Redis recovery store's limit of {self.max_bytes} bytes "
                "per tenant (max_bytes in --recovery-url)"
            )
        return None

    def get(self, response_id: str, *, space: Space = DEFAULT) -> bytes:
        """The original, or RecoveryError saying it is not (or no longer) in Redis."""
        require_response_id(response_id)
        base = self._base(space.tenant)
        value = self._do("read an original", self._client.get, base + "o:" + response_id)
        if value is None:
            if self._do("read an original", self._client.zscore, base + "evicted", response_id) is not None:
                raise RecoveryError(
                    f"Response {response_id} was evicted from the shared recovery store to make room for "
                    f"newer results: it keeps at most {self.max_bytes} bytes per tenant (max_bytes in "
                    "--recovery-url); raise that bound to keep more. Call the tool again."
                )
            keep = f"{self.retention:g} s" if self.retention is not None else "no time limit"
            raise RecoveryError(
                f"Unknown response id {response_id}: the shared recovery store holds no such response for "
                f"this caller (it may belong to another tenant, or have expired: retention {keep}). "
                "Call the tool again."
            )
        assert isinstance(value, bytes)
        return value

    def first_seen(self, scope: str, digest: str, record: bytes, *, space: Space = DEFAULT) -> bytes | None:
        """The dedup index: None when `digest` is new in (tenant, scope) (and `record` is kept for it),
        else the record stored when it was first seen. Atomic across replicas (SET NX GET)."""
        member = f"d:{scope}:{digest}"
        old = self._script(
            "check the dedup index", self._seen, self._base(space.tenant), member, member, record
        )
        return old if isinstance(old, bytes) else None

    def remember_call(self, scope: str, call: str, record: bytes, *, space: Space = DEFAULT) -> None:
        """Keep `record` as what the last `call` of (tenant, scope) showed, for every replica; under the
        tenant's retention and bound like an original."""
        member = _call_member(scope, call)
        self._script(
            "keep the record of a call", self._call, self._base(space.tenant), member, member, record
        )

    def last_call(self, scope: str, call: str, *, space: Space = DEFAULT) -> bytes | None:
        """The record last kept for `call` in (tenant, scope) by any replica, else None."""
        key = self._base(space.tenant) + _call_member(scope, call)
        value = self._do("read the record of a call", self._client.get, key)
        return value if isinstance(value, bytes) else None

    def ping(self) -> bool:
        """True when Redis answers now (resets the back-off)."""
        with self._lock:
            self._down_until = 0.0
        try:
            self._do("ping", self._client.ping)
        except RecoveryError:
            return False
        return True

    def usage(self, tenant: str) -> tuple[int, int]:
        """(entries, bytes) held for one tenant: originals and dedup keys, as max_bytes counts them."""
        base = self._base(tenant)
        count = self._do("count originals", self._client.zcard, base + "idx")
        total = self._do("count bytes", self._client.get, base + "bytes")
        return int(count), int(total or 0)

    def _script(self, what: str, script: Any, base: str, key: str, member: str, data: bytes) -> Any:
        """Run one of the scripts that keep `data` under the tenant's key `base + key` and index it as
        `member` (see `_ARGS`)."""
        ttl_ms = 0 if self.retention is None else max(1, int(self.retention * 1000))
        return self._do(
            what,
            script,
            [base + key, base + "idx", base + "sizes", base + "bytes", base + "evicted"],
            [data, ttl_ms, self.max_bytes, member, base + "o:", base],
        )

    def _base(self, tenant: str) -> str:
        """What every key of the tenant starts with: + "o:ID" an original, + "d:SCOPE:DIGEST" the dedup
        index, + "c:SCOPE:CALL" the record of calls, + "idx", "sizes", "bytes", "evicted" the index of its
        entries (`_INDEX`). {tenant} is a hash tag: one tenant's keys share a slot, so the Lua scripts also
        work on a cluster."""
        if not TENANT_RE.match(tenant):
            raise ValueError(f"not a tenant name: {tenant!r}")
        return f"{self.prefix}:{{{tenant}}}:"

    def _do(self, what: str, func: Any, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            if time.monotonic() < self._down_until:
                raise RecoveryError(f"the Redis recovery store is unavailable ({self._last_error})")
        try:
            result = func(*args, **kwargs)
        except self._redis_errors as exc:
            outage = isinstance(exc, self._outages)
            with self._lock:
                if outage:
                    self._down_until = time.monotonic() + _RETRY_AFTER
                self._last_error = f"{type(exc).__name__}: {exc}"
                was_healthy, self._healthy = self._healthy, self._healthy and not outage
            if was_healthy and outage:
                log.warning(
                    "mcpsqueeze: the Redis recovery store at %s failed (%s); results pass unshrunk "
                    "until it answers again",
                    safe_url(self.url),
                    exc,
                )
            raise RecoveryError(
                f"could not {what} in Redis at {safe_url(self.url)}: {exc}; "
                "results pass unshrunk until it is back"
            ) from exc
        if not self._healthy:
            with self._lock:
                was_healthy, self._healthy = self._healthy, True
            if not was_healthy:
                log.warning("mcpsqueeze: the Redis recovery store answers again; shrinking resumes")
        return result


def _call_member(scope: str, call: str) -> str:
    """The index member of one call's record (the call hashed: its arguments may be long)."""
    return f"c:{scope}:{hashlib.sha256(call.encode()).hexdigest()}"


def safe_url(url: str) -> str:
    """The URL without a password, for messages."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))
