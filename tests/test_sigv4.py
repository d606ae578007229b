"""AWS Signature Version 4: toolwire's signer against botocore's, byte for byte.

For a fixed set of requests (paths with characters that need escaping, a model ARN already
escaped once, dot segments, query strings, session tokens, streamed bodies) our
``Authorization`` header equals botocore's `SigV4Auth`. Credentials come from the environment
or the shared credentials file, and expiring ones are fetched again before a signature. Every
retried attempt carries its own date and a signature botocore computes alike for that date.
"""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from toolwire.http.sigv4 import (
    AwsCredentials,
    Refreshing,
    SigV4Signer,
    credential_chain,
    file_credentials,
    sign,
)

KEY, SECRET = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
TOKEN = "FQoGZXIvYXdzE//tok=="
ARN = "arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic.claude"
HOST = "https://bedrock-runtime.us-east-1.amazonaws.com"
BODY = b'{"messages":[{"role":"user","content":[{"text":"gr\xc3\xbc\xc3\x9fe"}]}]}'

CASES = [
    ("POST", f"{HOST}/model/anthropic.claude-3-haiku-20240307-v1:0/converse", BODY, None),
    ("POST", f"{HOST}/model/{ARN}/converse-stream", BODY, None),
    ("POST", f"{HOST}/model/a%20b%2Fc/invoke", BODY, TOKEN),
    ("POST", f"{HOST}/model/x/./y/../converse", b"", None),
    ("POST", f"{HOST}//model//double//converse", BODY, TOKEN),
    ("GET", f"{HOST}/async-invoke?maxResults=10&statusEquals=Completed&nextToken=a%2Bb", b"",
     None),
    ("GET", f"{HOST}/async-invoke?b=2&a=1&a=0&empty=", b"", TOKEN),
    ("POST", "http://127.0.0.1:8123/model/m/converse", BODY, TOKEN),
    ("POST", "https://bedrock-runtime.eu-west-1.amazonaws.com:443/model/m~x/converse", BODY,
     None),
]


def botocore_sign(method: str, url: str, body: bytes | io.BytesIO, token: str | None,
                  headers: dict[str, str]) -> dict[str, str]:
    request = AWSRequest(method=method, url=url, data=body, headers=dict(headers))
    SigV4Auth(Credentials(KEY, SECRET, token), "bedrock", "us-east-1").add_auth(request)
    return dict(request.headers.items())


@pytest.mark.parametrize(("method", "url", "body", "token"), CASES,
                         ids=[f"{m} {u.split('/', 3)[-1][:40]}" for m, u, _, _ in CASES])
def test_our_signature_equals_botocores(method: str, url: str, body: bytes,
                                        token: str | None) -> None:
    headers = {"Content-Type": "application/json", "Accept": "application/json",
               "User-Agent": "not signed", "X-Extra": "  two   spaces  "}
    theirs = botocore_sign(method, url, body, token, headers)
    when = dt.datetime.strptime(theirs["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(
        tzinfo=dt.UTC)
    ours = sign(method, url, headers, body, AwsCredentials(KEY, SECRET, token),
                region="us-east-1", service="bedrock", now=when)
    assert ours["Authorization"] == theirs["Authorization"]
    assert ours["X-Amz-Date"] == theirs["X-Amz-Date"]
    assert ours.get("X-Amz-Security-Token") == theirs.get("X-Amz-Security-Token")


def test_a_streamed_body_is_signed_piece_by_piece_as_botocore_signs_the_whole() -> None:
    url = f"{HOST}/model/m/converse"
    theirs = botocore_sign("POST", url, io.BytesIO(BODY * 50), TOKEN, {})
    when = dt.datetime.strptime(theirs["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(
        tzinfo=dt.UTC)
    pulled: list[int] = []

    def pieces() -> Iterator[bytes]:
        for i in range(50):
            pulled.append(i)
            yield BODY

    ours = sign("POST", url, {}, pieces(), AwsCredentials(KEY, SECRET, TOKEN),
                region="us-east-1", service="bedrock", now=when)
    assert ours["Authorization"] == theirs["Authorization"]
    assert len(pulled) == 50


def test_a_signature_changes_with_the_time_and_the_body() -> None:
    creds = AwsCredentials(KEY, SECRET)
    url = f"{HOST}/model/m/converse"
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    first = sign("POST", url, {}, BODY, creds, region="us-east-1", service="bedrock", now=t0)
    later = sign("POST", url, {}, BODY, creds, region="us-east-1", service="bedrock",
                 now=t0 + dt.timedelta(seconds=1))
    other = sign("POST", url, {}, BODY + b" ", creds, region="us-east-1", service="bedrock",
                 now=t0)
    assert len({first["Authorization"], later["Authorization"], other["Authorization"]}) == 3


def test_credentials_from_the_environment_then_the_shared_file(tmp_path: Path) -> None:
    env = {"AWS_ACCESS_KEY_ID": "AKENV", "AWS_SECRET_ACCESS_KEY": "s", "AWS_SESSION_TOKEN": "t"}
    source = credential_chain(env)
    assert source is not None and source() == AwsCredentials("AKENV", "s", "t")
    shared = tmp_path / "credentials"
    shared.write_text("[default]\naws_access_key_id = AKDEF\naws_secret_access_key = d\n\n"
                      "[work]\naws_access_key_id=AKWORK\naws_secret_access_key=w\n"
                      "aws_session_token=tw\n", encoding="utf-8")
    file_env = {"AWS_SHARED_CREDENTIALS_FILE": str(shared)}
    assert file_credentials(file_env) == AwsCredentials("AKDEF", "d")
    work = credential_chain({**file_env, "AWS_PROFILE": "work"})
    assert work is not None and work() == AwsCredentials("AKWORK", "w", "tw")
    assert file_credentials({**file_env, "AWS_PROFILE": "missing"}) is None
    assert credential_chain({"AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none")}) is None


def test_expiring_credentials_are_fetched_again_before_they_expire() -> None:
    now = [dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)]
    issued: list[int] = []

    def fetch() -> AwsCredentials:
        issued.append(len(issued))
        return AwsCredentials(f"AK{len(issued)}", "s", "tok",
                              expires=now[0] + dt.timedelta(hours=1))

    source = Refreshing(fetch, clock=lambda: now[0])
    signer = SigV4Signer(source, region="us-east-1", service="bedrock")
    url = f"{HOST}/model/m/converse"
    first = signer("POST", url, {}, BODY)["Authorization"]
    now[0] += dt.timedelta(minutes=50)
    assert signer("POST", url, {}, BODY)["Authorization"].split("/")[0] == first.split("/")[0]
    assert source.fetches == 1
    now[0] += dt.timedelta(minutes=6)  # four minutes left: under the margin
    assert "Credential=AK2/" in signer("POST", url, {}, BODY)["Authorization"]
    assert source.fetches == 2


def test_botocores_credential_chain_as_an_option(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config"
    config.write_text("[profile ops]\naws_access_key_id = AKOPS\n"
                      "aws_secret_access_key = o\naws_session_token = to\n", encoding="utf-8")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    env = {"TOOLWIRE_AWS_CREDENTIALS": "botocore", "AWS_PROFILE": "ops",
           "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none")}
    source = credential_chain(env)  # neither the environment nor the file has keys
    assert source is not None and source() == AwsCredentials("AKOPS", "o", "to")


async def test_each_retry_is_signed_anew_with_its_own_date_as_botocore_would(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    import botocore.auth

    from toolwire.emulator import Emulator, Fault
    from toolwire.http.client import HttpModel, RetryPolicy
    from toolwire.http.endpoints import parse_model_id
    from toolwire.transcript import Message, Request

    creds = AwsCredentials(KEY, SECRET, TOKEN)
    ticks = [dt.datetime(2026, 3, 1, 23, 59, 51, tzinfo=dt.UTC)]

    def clock() -> dt.datetime:  # each attempt is signed 7 s after the one before
        ticks.append(ticks[-1] + dt.timedelta(seconds=7))
        return ticks[-1]

    script = [Fault(kind="rate_limit", retry_after=0), Fault(kind="server_error"),
              {"text": "signed three times"}]
    async with Emulator(script, aws_credentials=creds) as emu:
        endpoint = parse_model_id(f"bedrock:anthropic.claude-x@{emu.base_url}",
                                  {"AWS_REGION": "us-east-1"})
        endpoint = dataclasses.replace(endpoint, signer=SigV4Signer(
            lambda: creds, region="us-east-1", service="bedrock", clock=clock))
        model = HttpModel(endpoint, retry=RetryPolicy(base=0.001, max_wait=0.01))
        reply = await model.complete(Request(model="m", messages=(Message.user("hi"),)))
        await model.aclose()
    assert reply.text == "signed three times"
    sent = emu.received
    dates = [r.headers["x-amz-date"] for r in sent]
    # the second retry falls on the next day: its credential scope names that day
    assert dates == ["20260301T235958Z", "20260302T000005Z", "20260302T000012Z"]
    assert len({r.headers["authorization"] for r in sent}) == 3
    assert len({r.raw for r in sent}) == 1  # the same bytes, signed three times
    for attempt in sent:  # botocore signs each attempt's bytes at that attempt's date
        names = attempt.headers["authorization"].split("SignedHeaders=")[1].split(",")[0]
        kept = {n: attempt.headers[n] for n in names.split(";")
                if n not in ("host", "x-amz-date", "x-amz-security-token")}
        when = dt.datetime.strptime(attempt.headers["x-amz-date"], "%Y%m%dT%H%M%SZ")
        monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda when=when: when)
        theirs = AWSRequest(method="POST", url=f"{emu.base_url}{attempt.path}",
                            data=attempt.raw, headers=kept)
        SigV4Auth(Credentials(KEY, SECRET, TOKEN), "bedrock", "us-east-1").add_auth(theirs)
        assert theirs.headers["Authorization"] == attempt.headers["authorization"]
        assert theirs.headers["X-Amz-Date"] == attempt.headers["x-amz-date"]
