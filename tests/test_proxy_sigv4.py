"""A proxy started with an AWS key pair lets in requests signed with it (AWS SigV4, as boto3
signs), each signature checked over the request as it came: its method, path, query, signed
headers and body, within 15 minutes of the proxy's clock. botocore signs; the proxy checks."""

from __future__ import annotations

import datetime as dt
import json

import httpx2
import pytest

from proxy_harness import running_proxy
from toolwire.emulator import Emulator
from toolwire.http.sigv4 import AwsCredentials, sign

pytest.importorskip("uvicorn")
boto3 = pytest.importorskip("boto3")

PAIR = ("AKIATOOLWIRETEST", "the-secret-key")
BODY = {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}


def client(url: str, key: str = PAIR[0], secret: str = PAIR[1]):  # type: ignore[no-untyped-def]
    from botocore.config import Config

    return boto3.client("bedrock-runtime", endpoint_url=url, region_name="eu-west-1",
                        aws_access_key_id=key, aws_secret_access_key=secret,
                        config=Config(retries={"max_attempts": 1}, signature_version="v4"))


@pytest.mark.parametrize("model", ["claude", "arn:aws:bedrock:eu-west-1:123456789012:"
                                              "inference-profile/eu.anthropic.claude:0"])
def test_a_request_boto3_signed_with_the_pair_is_let_in(model: str) -> None:
    """A model ARN is percent-encoded in the path, and signed encoded once more: the
    proxy checks the path as it came on the wire."""
    with Emulator([{"text": "signed and sealed"}]) as emu, \
            running_proxy(f"openai:m@{emu.base_url}", aws_keys=(PAIR,)) as url:
        said = client(url).converse(modelId=model, **BODY)
    assert said["output"]["message"]["content"][0]["text"] == "signed and sealed"


def test_a_wrong_secret_or_an_unknown_key_is_refused_and_named() -> None:
    from botocore.exceptions import ClientError

    with Emulator([]) as emu, \
            running_proxy(f"openai:m@{emu.base_url}", aws_keys=(PAIR,)) as url:
        with pytest.raises(ClientError) as wrong_secret:
            client(url, secret="not-the-secret").converse(modelId="claude", **BODY)
        with pytest.raises(ClientError) as unknown:
            client(url, key="AKIASOMEONEELSE").converse(modelId="claude", **BODY)
        assert emu.received == []
    assert wrong_secret.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert "does not match" in str(wrong_secret.value)
    assert "AKIASOMEONEELSE is not one this server takes" in str(unknown.value)


def signed_request(url: str, body: bytes, when: dt.datetime) -> dict[str, str]:
    headers = {"content-type": "application/json", "host": url.split("//", 1)[1]}
    added = sign("POST", url + "/model/claude/converse", headers, body,
                 AwsCredentials(*PAIR), region="eu-west-1", service="bedrock", now=when)
    return {**headers, **added}


def test_a_body_changed_after_signing_or_an_old_signature_is_refused() -> None:
    body = json.dumps(BODY).encode()
    now = dt.datetime.now(dt.UTC)
    with Emulator([{"text": "only once"}]) as emu, \
            running_proxy(f"openai:m@{emu.base_url}", aws_keys=(PAIR,)) as url:
        headers = signed_request(url, body, now)
        fine = httpx2.post(url + "/model/claude/converse", content=body, headers=headers)
        changed = httpx2.post(url + "/model/claude/converse",
                              content=body.replace(b"hi", b"ho"), headers=headers)
        old = httpx2.post(url + "/model/claude/converse", content=body,
                          headers=signed_request(url, body, now - dt.timedelta(minutes=20)))
        unsigned = httpx2.post(url + "/model/claude/converse", content=body)
    assert fine.status_code == 200, fine.text
    assert changed.status_code == 403 and "does not match" in changed.text
    assert old.status_code == 403 and "15 minutes" in old.text
    assert unsigned.status_code == 401 and "signed with its AWS key pair" in unsigned.text
    assert len(emu.received) == 1


def test_without_a_pair_a_signed_request_is_told_to_use_the_key() -> None:
    with Emulator([]) as emu, running_proxy(f"openai:m@{emu.base_url}", key="k") as url:
        reply = httpx2.post(url + "/model/claude/converse", json=BODY,
                            headers=signed_request(url, json.dumps(BODY).encode(),
                                                   dt.datetime.now(dt.UTC)))
    assert reply.status_code == 401
    assert "AWS_BEARER_TOKEN_BEDROCK" in reply.text
