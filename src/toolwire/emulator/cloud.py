"""What the emulator does for the cloud hosts: SigV4 checks and Bedrock's chunk framing.

Owns `check_signature` (the first thing wrong with a request's AWS Signature Version 4, as
Bedrock words it, or None: the emulator recomputes the signature with the credentials it was
given and compares), `exception_event` (an exception Bedrock sends inside an event stream)
and `reframe` (a wire's server-sent events wrapped the way a cloud host
streams them: each event's JSON in an event-stream ``chunk`` as base64, as InvokeModel does).
Must not import a wire's codec module nor compare wire names.
"""

from __future__ import annotations

import base64
import datetime as dt
import hmac
import json
import re
from urllib.parse import urlencode

from toolwire.codecs.eventstream import encode_message
from toolwire.emulator._http import HttpRequest
from toolwire.http.sigv4 import AwsCredentials, sign

AWS_PATHS = ("/model/",)
"""The paths of Bedrock's runtime, where an emulator given AWS credentials checks SigV4."""

_AUTH = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
                   r"SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$")


def check_signature(http: HttpRequest, credentials: AwsCredentials,
                    expected: str = "") -> str | None:
    """Why the request's signature is refused, or None when it is the one we compute (for
    the ``expected`` service when one is named: a signature for another is refused)."""
    auth = http.headers.get("authorization", "")
    found = _AUTH.match(auth)
    if found is None:
        return "Missing Authentication Token: the request carries no AWS Signature Version 4"
    key, _, region, service, names, signature = found.groups()
    if expected and service != expected:
        return f"Credential should be scoped to correct service: '{expected}'."
    if key != credentials.access_key:
        return "The security token included in the request is invalid."
    try:
        when = dt.datetime.strptime(http.headers.get("x-amz-date", ""), "%Y%m%dT%H%M%SZ")
    except ValueError:
        return "The request must carry an X-Amz-Date header in the form 20260101T000000Z"
    token = http.headers.get("x-amz-security-token")
    if (token or None) != credentials.token:
        return "The security token included in the request is invalid."
    signed = {n: http.headers.get(n, "") for n in names.split(";")}
    query = urlencode([(k, v) for k, vs in sorted(http.query.items()) for v in vs])
    url = f"http://{http.headers.get('host', '')}{http.path}" + (f"?{query}" if query else "")
    ours = sign(http.method, url, signed, http.body, credentials, region=region,
                service=service, now=when.replace(tzinfo=dt.UTC))
    expected = ours["Authorization"].rsplit("Signature=", 1)[1]
    if not hmac.compare_digest(expected, signature):
        return ("The request signature we calculated does not match the signature you "
                "provided. Check your AWS Secret Access Key and signing method.")
    return None


def exception_event(kind: str, message: str | None = None) -> bytes:
    """An exception sent inside an event stream, as Bedrock sends one part of the way through
    a reply: ``kind`` (``throttlingException``, ``modelStreamErrorException``,
    ``internalServerException``...) in ``:exception-type``, its message as JSON."""
    said = message or f"The stream was interrupted by {kind}; retry the request."
    return encode_message({":message-type": "exception", ":exception-type": kind,
                           ":content-type": "application/json"},
                          json.dumps({"message": said}).encode())


def reframe(chunks: list[bytes]) -> list[bytes]:
    """Server-sent events as InvokeModelWithResponseStream sends them: each event's JSON,
    base64-encoded, in the ``bytes`` of an event-stream ``chunk`` event."""
    out: list[bytes] = []
    for chunk in chunks:
        for line in chunk.decode("utf-8").splitlines():
            if line.startswith("data:"):
                data = line[5:].strip().encode()
                payload = json.dumps({"bytes": base64.b64encode(data).decode()}).encode()
                out.append(encode_message({":event-type": "chunk",
                                           ":content-type": "application/json",
                                           ":message-type": "event"}, payload))
    return out
