"""The record key and the signing of lines, where they are kept between uses: a key read once
is the key the file holds whenever it is asked for again, and a line's MAC is the standard
HMAC-SHA256 of the chain, whichever object computes it.

Real files in a state directory of the test's own; hypothesis replaces, removes and moves the
key between reads.
"""

from __future__ import annotations

import hmac
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolwire import records, signing
from toolwire.errors import ConfigError


def _read_fresh(env: dict[str, str]) -> bytes:
    """The key as a process that never read one before would read it."""
    kept = dict(records._KEYS)
    records._KEYS.clear()
    try:
        return records.record_key(env)
    finally:
        records._KEYS.clear()
        records._KEYS.update(kept)


_STEP = st.sampled_from(["read", "replace", "rewrite", "remove", "other folder", "back"])


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(_STEP, min_size=1, max_size=12), seed=st.integers(0, 2**31))
def test_a_kept_key_is_the_key_the_file_holds(tmp_path: Path, steps: list[str],
                                              seed: int) -> None:
    """Every read gives the bytes a fresh read gives, whatever happened to the file since the
    key was first read: replaced by a new file, rewritten in place (at a later time), removed
    (a new key is made), or the state directory moved elsewhere and back."""
    base = tmp_path / str(seed)
    folders = [base / "a", base / "b"]
    env = {"TOOLWIRE_STATE_DIR": str(folders[0])}
    when = 1_700_000_000_000_000_000 + seed
    for step in steps:
        key_file = Path(env["TOOLWIRE_STATE_DIR"]) / records.KEY_FILE
        if step == "replace" and key_file.exists():
            new = key_file.with_name("new.key")
            new.write_bytes(os.urandom(records.KEY_BYTES))
            os.replace(new, key_file)
        elif step == "rewrite" and key_file.exists():
            with key_file.open("r+b") as f:
                f.write(os.urandom(records.KEY_BYTES))
            when += 1_000_000_000  # a second later than any write before it
            os.utime(key_file, ns=(when, when))
        elif step == "remove":
            key_file.unlink(missing_ok=True)
        elif step == "other folder":
            env = {"TOOLWIRE_STATE_DIR": str(folders[1])}
        elif step == "back":
            env = {"TOOLWIRE_STATE_DIR": str(folders[0])}
        got = records.record_key(env)
        assert got == _read_fresh(env)
        assert got == (Path(env["TOOLWIRE_STATE_DIR"]) / records.KEY_FILE).read_bytes()


def test_a_kept_key_that_became_a_link_is_refused_as_before(tmp_path: Path) -> None:
    env = {"TOOLWIRE_STATE_DIR": str(tmp_path / "state")}
    records.record_key(env)
    key_file = tmp_path / "state" / records.KEY_FILE
    elsewhere = tmp_path / "elsewhere.key"
    elsewhere.write_bytes(os.urandom(records.KEY_BYTES))
    key_file.unlink()
    key_file.symlink_to(elsewhere)
    with pytest.raises(ConfigError, match="cannot be read"):
        records.record_key(env)


@given(key=st.binary(min_size=1, max_size=80),
       bodies=st.lists(st.binary(max_size=200).map(lambda b: b"{" + b + b"}"), max_size=6))
def test_each_line_mac_is_the_standard_hmac_of_the_chain(key: bytes,
                                                         bodies: list[bytes]) -> None:
    signer, previous = signing.Signer(key), b"toolwire record 1"
    for body in bodies:
        signed = signer.sign(body)
        mac = hmac.new(key, previous + b"\n" + body, "sha256").hexdigest().encode()
        assert signed.endswith(b'"mac":"' + mac + b'"}')
        previous = mac


_SETTING = st.one_of(st.none(), st.text(st.characters(blacklist_characters="\0",
                                                         blacklist_categories=["Cs"]),
                                        max_size=12))


@settings(max_examples=60, deadline=None)
@given(values=st.tuples(_SETTING, _SETTING, _SETTING))
def test_the_state_settings_are_read_from_the_environment_as_os_environ_get_reads_them(
        values: tuple[str | None, ...]) -> None:
    """`records._settings` reads the process environment from the bytes it keeps: it finds
    what `os.environ.get` finds, set or not, and a mapping that is not the environment is
    read with its own ``get``."""
    before = {name: os.environ.get(name) for name in records._SETTINGS}
    try:
        for name, value in zip(records._SETTINGS, values, strict=True):
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        assert records._settings(os.environ) == tuple(map(os.environ.get, records._SETTINGS))
        given = {name: value for name, value in zip(records._SETTINGS, values, strict=True)
                 if value is not None}
        assert records._settings(given) == values
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
