"""AWS Signature Version 4 and AWS credentials, written over hashlib and hmac.

Owns `AwsCredentials`, the credential sources (`env_credentials`, `file_credentials`,
`credential_chain`, and `BotocoreCredentials` for company setups when botocore is installed),
`sign` (the headers one request needs: ``Authorization``, ``X-Amz-Date`` and, for temporary
credentials, ``X-Amz-Security-Token``), `verify` (a received request's signature checked
against the key pairs a server takes) and `SigV4Signer` (signs every attempt anew, asking its
source for credentials each time, so credentials that expire are refreshed before they do).
The canonical request follows botocore's signer byte for byte: the path normalised and
percent-encoded once more (a model ARN's ``%3A`` is signed as ``%253A``), the query pairs
sorted as written, every header but a few signed, the body's SHA-256. Must not import the
transport, the client, a codec or anything that does network I/O; reads only the environment
and the shared credentials file.
"""

from __future__ import annotations

import configparser
import datetime as dt
import hashlib
import hmac
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from toolwire.errors import ConfigError

_UNSIGNED = frozenset({"expect", "transfer-encoding", "user-agent", "x-amzn-trace-id",
                       "authorization"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
REFRESH_BEFORE = dt.timedelta(minutes=5)
"""Credentials that expire sooner than this are refreshed before a request is signed."""


@dataclass(frozen=True, slots=True)
class AwsCredentials:
    """An access key, its secret, and for temporary credentials a session token and expiry."""

    access_key: str
    secret_key: str
    token: str | None = None
    expires: dt.datetime | None = None

    def __repr__(self) -> str:
        return f"AwsCredentials(access_key={self.access_key!r}, ...)"

    def expiring(self, now: dt.datetime) -> bool:
        return self.expires is not None and self.expires - now <= REFRESH_BEFORE


# --------------------------------------------------------------------------- signing


def _normalized_path(path: str) -> str:
    """Dot segments and repeated slashes removed, then percent-encoded (once more)."""
    if not path:
        return "/"
    kept: list[str] = []
    for segment in path.split("/"):
        if segment == "..":
            if kept:
                kept.pop()
        elif segment and segment != ".":
            kept.append(segment)
    clean = ("/" if path.startswith("/") else "") + "/".join(kept)
    if path.endswith("/") and kept:
        clean += "/"
    return quote(clean, safe="/~")


def _query(query: str) -> str:
    if not query:
        return ""
    pairs = [pair.partition("=") for pair in query.split("&")]
    return "&".join(f"{k}={v}" for k, v in sorted((k, v) for k, _, v in pairs))


def _host(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    if port is not None and port != _DEFAULT_PORTS.get(parts.scheme):
        host += f":{port}"
    return host


def _payload_hash(body: bytes | Iterable[bytes]) -> str:
    if isinstance(body, bytes | bytearray | memoryview):
        return hashlib.sha256(body).hexdigest()
    digest = hashlib.sha256()
    for chunk in body:  # a streamed body: hashed piece by piece, never joined
        digest.update(chunk)
    return digest.hexdigest()


def _key(secret: str, date: str, region: str, service: str) -> bytes:
    key = ("AWS4" + secret).encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


def canonical_request(method: str, url: str, headers: Mapping[str, str],
                      payload_hash: str) -> tuple[str, str]:
    """The canonical request, and the signed header names (``a;b;c``)."""
    parts = urlsplit(url)
    signed: dict[str, list[str]] = {}
    for name, value in headers.items():
        lname = name.lower()
        if lname not in _UNSIGNED:
            signed.setdefault(lname, []).append(" ".join(str(value).split()))
    if "host" not in signed:
        signed["host"] = [_host(url)]
    names = sorted(signed)
    lines = "".join(f"{n}:{','.join(signed[n])}\n" for n in names)
    names_text = ";".join(names)
    request = "\n".join([method.upper(), _normalized_path(parts.path), _query(parts.query),
                         lines, names_text, payload_hash])
    return request, names_text


def sign(method: str, url: str, headers: Mapping[str, str], body: bytes | Iterable[bytes],
         credentials: AwsCredentials, *, region: str, service: str,
         now: dt.datetime | None = None) -> dict[str, str]:
    """The headers that sign this request: ``Authorization``, ``X-Amz-Date`` and, with a
    session token, ``X-Amz-Security-Token``. ``headers`` are the ones that will be sent."""
    moment = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    stamp = moment.strftime("%Y%m%dT%H%M%SZ")
    date = stamp[:8]
    added = {"X-Amz-Date": stamp}
    if credentials.token:
        added["X-Amz-Security-Token"] = credentials.token
    drop = {"x-amz-date", "x-amz-security-token", "authorization", "date"}
    to_sign = {k: v for k, v in headers.items() if k.lower() not in drop} | added
    canonical, names = canonical_request(method, url, to_sign, _payload_hash(body))
    scope = f"{date}/{region}/{service}/aws4_request"
    text = "\n".join(["AWS4-HMAC-SHA256", stamp, scope,
                      hashlib.sha256(canonical.encode()).hexdigest()])
    signature = hmac.new(_key(credentials.secret_key, date, region, service), text.encode(),
                         hashlib.sha256).hexdigest()
    added["Authorization"] = (f"AWS4-HMAC-SHA256 Credential={credentials.access_key}/{scope}, "
                              f"SignedHeaders={names}, Signature={signature}")
    return added


MAX_SKEW = dt.timedelta(minutes=15)
"""How far a signed request's time may be from the receiver's clock (AWS takes 15 minutes)."""

_AUTHORIZATION = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/,\s]+)/(?P<date>\d{8})/(?P<region>[^/,\s]+)/"
    r"(?P<service>[^/,\s]+)/aws4_request,\s*SignedHeaders=(?P<names>[a-z0-9\-;.]+),\s*"
    r"Signature=(?P<signature>[0-9a-f]{64})")


def verify(method: str, url: str, headers: Mapping[str, str], body: bytes,
           keys: Mapping[str, str], *, now: dt.datetime | None = None) -> str | None:
    """None when the request's ``Authorization`` is a SigV4 signature made with one of
    ``keys`` (access key id to secret key) over this very request; else what is wrong, in
    words for the client. ``url`` is the request's URL as it came (its path and query as
    written on the wire), ``headers`` with lowercase names."""
    found = _AUTHORIZATION.fullmatch(headers.get("authorization", "").strip())
    if found is None:
        return "the Authorization header is not an AWS4-HMAC-SHA256 signature"
    secret = keys.get(found["key"])
    if secret is None:
        return f"the access key id {found['key']} is not one this server takes"
    stamp = headers.get("x-amz-date", "")
    try:
        moment = dt.datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=dt.UTC)
    except ValueError:
        return "the signed request has no X-Amz-Date header of the form 20260101T000000Z"
    if stamp[:8] != found["date"]:
        return "the signature's date is not the date of X-Amz-Date"
    if abs((now or dt.datetime.now(dt.UTC)) - moment) > MAX_SKEW:
        return "the request was signed more than 15 minutes from now; check the client's clock"
    names = found["names"].split(";")
    if "host" not in names or any(name not in headers for name in names):
        return "a header the signature names (Host at least) is not in the request"
    payload = hashlib.sha256(body).hexdigest()
    declared = headers.get("x-amz-content-sha256", payload)
    if declared != payload:
        return "X-Amz-Content-SHA256 is not the body's hash"
    canonical, _ = canonical_request(method, url, {n: headers[n] for n in names}, declared)
    scope = f"{found['date']}/{found['region']}/{found['service']}/aws4_request"
    text = "\n".join(["AWS4-HMAC-SHA256", stamp, scope,
                      hashlib.sha256(canonical.encode()).hexdigest()])
    expected = hmac.new(_key(secret, found["date"], found["region"], found["service"]),
                        text.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, found["signature"]):
        return ("the AWS signature does not match this request: a wrong secret key for "
                f"{found['key']}, or the request was changed after it was signed")
    return None


# --------------------------------------------------------------------------- credentials

CredentialSource = Callable[[], AwsCredentials]
"""Gives the credentials to sign with now; called before every signature."""


def env_credentials(env: Mapping[str, str]) -> AwsCredentials | None:
    """``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY`` and ``AWS_SESSION_TOKEN``, if set."""
    key, secret = env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY")
    if not key or not secret:
        return None
    return AwsCredentials(key, secret, env.get("AWS_SESSION_TOKEN") or None)


def file_credentials(env: Mapping[str, str]) -> AwsCredentials | None:
    """The profile (``AWS_PROFILE``, else ``default``) of the shared credentials file
    (``AWS_SHARED_CREDENTIALS_FILE``, else ``~/.aws/credentials``), if it has keys."""
    path = Path(env.get("AWS_SHARED_CREDENTIALS_FILE") or Path.home() / ".aws" / "credentials")
    profile = env.get("AWS_PROFILE") or env.get("AWS_DEFAULT_PROFILE") or "default"
    parser = configparser.RawConfigParser()
    try:
        parser.read_string(path.expanduser().read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, configparser.Error):
        return None
    if not parser.has_section(profile):
        return None
    section = parser[profile]
    key, secret = section.get("aws_access_key_id"), section.get("aws_secret_access_key")
    if not key or not secret:
        return None
    return AwsCredentials(key.strip(), secret.strip(),
                          (section.get("aws_session_token") or "").strip() or None)


class BotocoreCredentials:
    """Credentials from botocore's own chain (SSO, web identity, instance and container
    roles...), refreshed by botocore as they near expiry. Needs ``toolwire[aws]``."""

    def __init__(self, profile: str | None = None) -> None:
        try:
            import botocore.session  # type: ignore[import-untyped]
        except ImportError:
            raise ConfigError("AWS credentials from SSO, roles or web identity need botocore: "
                              "pip install 'toolwire[aws]'") from None
        session = botocore.session.Session(profile=profile)
        self._creds: Any = session.get_credentials()
        if self._creds is None:
            raise ConfigError("botocore found no AWS credentials; log in (aws sso login) or "
                              "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")

    def __call__(self) -> AwsCredentials:
        frozen = self._creds.get_frozen_credentials()  # refreshes when near expiry
        return AwsCredentials(frozen.access_key, frozen.secret_key, frozen.token or None)


class Refreshing:
    """A credential source that asks ``fetch`` again when the last credentials near expiry."""

    def __init__(self, fetch: CredentialSource,
                 clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC)
                 ) -> None:
        self._fetch = fetch
        self._clock = clock
        self._current: AwsCredentials | None = None
        self._lock = threading.Lock()
        self.fetches = 0

    def __call__(self) -> AwsCredentials:
        with self._lock:
            current = self._current
            if current is None or current.expiring(self._clock()):
                current = self._current = self._fetch()
                self.fetches += 1
            return current


def credential_chain(env: Mapping[str, str] | None = None) -> CredentialSource | None:
    """Where credentials come from: the environment, then the shared credentials file, then
    botocore's chain when ``TOOLWIRE_AWS_CREDENTIALS=botocore``; None when none has any."""
    env = os.environ if env is None else env
    found = env_credentials(env) or file_credentials(env)
    if found is not None:
        return lambda: found
    if env.get("TOOLWIRE_AWS_CREDENTIALS") == "botocore":
        return BotocoreCredentials(env.get("AWS_PROFILE"))
    return None


class SigV4Signer:
    """Signs each attempt anew: fresh credentials from ``source``, a fresh date (from
    ``clock``, the current UTC time unless given)."""

    def __init__(self, source: CredentialSource, *, region: str, service: str,
                 clock: Callable[[], dt.datetime] | None = None) -> None:
        self.source = source
        self.region = region
        self.service = service
        self.clock = clock

    def __call__(self, method: str, url: str, headers: Mapping[str, str],
                 body: bytes) -> dict[str, str]:
        return sign(method, url, headers, body, self.source(), region=self.region,
                    service=self.service, now=self.clock() if self.clock is not None else None)


__all__ = [
    "MAX_SKEW",
    "REFRESH_BEFORE",
    "AwsCredentials",
    "BotocoreCredentials",
    "CredentialSource",
    "Refreshing",
    "SigV4Signer",
    "canonical_request",
    "credential_chain",
    "env_credentials",
    "file_credentials",
    "sign",
    "verify",
]
