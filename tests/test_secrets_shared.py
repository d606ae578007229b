"""`Redactor.shared`: the redactor of the process environment, made again exactly when the
environment changes, and the dict change tag that spares comparing the whole environment for
every line written."""

from __future__ import annotations

import os
import sys
import types
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire import secrets
from toolwire.secrets import Redactor

NAME = "TOOLWIRE_TEST_SHARED_TOKEN"


class _NoCompare(dict[Any, Any]):
    """A kept copy of the environment that fails the test if it is compared."""

    def __eq__(self, other: object) -> bool:
        raise AssertionError("the environment was compared")

    __hash__ = None  # type: ignore[assignment]


def _kept_uncomparable() -> None:
    kept = secrets._SHARED[0]
    assert kept is not None
    secrets._SHARED[0] = (_NoCompare(kept[0]), *kept[1:])


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secrets, "_SHARED", [None])
    monkeypatch.delenv(NAME, raising=False)


def test_this_interpreter_has_a_change_tag_that_moves_at_every_change(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert secrets._TAGGED in ([], [True])
    monkeypatch.setattr(secrets, "_TAGGED", [])  # the check made again, here
    d: dict[Any, Any] = {}
    tag = secrets._change_tag(d)
    assert secrets._TAGGED == [True] and tag is not None
    seen = [tag.value]
    for step in (lambda: d.__setitem__("a", 1), lambda: d.get("a"), lambda: d.__setitem__("a", 2),
                 lambda: d.pop("a"), lambda: d.setdefault("b", 3), lambda: d.clear()):
        step()
        seen.append(tag.value)
    assert seen[2] == seen[1]  # a read
    assert len({seen[0], *seen[2:]}) == 6


def test_an_unchanged_environment_is_not_compared() -> None:
    first = Redactor.shared()
    _kept_uncomparable()
    assert Redactor.shared() is first
    assert Redactor.shared() is first


@pytest.mark.parametrize("how", ["set", "replace", "delete", "behind"])
def test_every_change_of_the_environment_makes_it_again(monkeypatch: pytest.MonkeyPatch,
                                                        how: str) -> None:
    if how != "set":
        monkeypatch.setenv(NAME, "a-first-secret-value")
    first = Redactor.shared()
    if how == "set":
        monkeypatch.setenv(NAME, "a-brand-new-secret-value")
    elif how == "replace":  # the same length: the environment's size does not change
        monkeypatch.setenv(NAME, "a-later-secret-value")
    elif how == "delete":
        monkeypatch.delenv(NAME)
    else:  # the mapping behind os.environ changed without os.environ
        data = os.environ._data  # type: ignore[attr-defined]
        monkeypatch.setitem(data, NAME.encode(), b"a-brand-new-secret-value")
    second = Redactor.shared()
    assert second is not first
    shown = second("a-first-secret-value a-brand-new-secret-value a-later-secret-value")
    assert shown.count(f"[redacted: {NAME}]") == (0 if how == "delete" else 1)
    assert Redactor.shared() is second


def test_a_new_mapping_behind_the_environment_is_compared(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    first = Redactor.shared()
    data = os.environ._data  # type: ignore[attr-defined]
    monkeypatch.setattr(os.environ, "_data", dict(data))
    assert Redactor.shared() is first  # the same variables: the same redactor
    os.environ[NAME] = "a-brand-new-secret-value"  # in the new mapping (undone with it)
    second = Redactor.shared()
    assert second is not first and second("a-brand-new-secret-value") == f"[redacted: {NAME}]"


def test_without_a_change_tag_the_environment_is_compared(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.setattr(secrets, "_TAGGED", [False])
    assert secrets._change_tag({}) is None
    first = Redactor.shared()
    assert Redactor.shared() is first
    monkeypatch.setenv(NAME, "a-brand-new-secret-value")
    second = Redactor.shared()
    assert second is not first and second("a-brand-new-secret-value") == f"[redacted: {NAME}]"
    assert Redactor.shared() is second


def test_an_interpreter_without_ctypes_has_no_change_tag(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.setattr(secrets, "_TAGGED", [])
    monkeypatch.setitem(sys.modules, "ctypes", None)  # its import fails
    assert secrets._change_tag({}) is None and secrets._TAGGED == [False]


def test_an_interpreter_other_than_cpython_has_no_change_tag(monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """Where ``id()`` need not be an address, no memory is read at all."""
    monkeypatch.setattr(secrets, "_TAGGED", [])
    monkeypatch.setattr(sys, "implementation", types.SimpleNamespace(name="pypy"))
    monkeypatch.setattr(secrets, "_tag_view", None)  # a read would fail: None is not callable
    assert secrets._change_tag({}) is None and secrets._TAGGED == [False]


class _Still:
    """A tag that never moves."""

    value = 7


class _Moving:
    """A tag that moves at every read, with or without a change."""

    def __init__(self) -> None:
        self.reads = 0

    @property
    def value(self) -> int:
        self.reads += 1
        return self.reads


class _KeysOnly:
    """A tag that moves when a dict's keys change but not when a value is replaced."""

    def __init__(self, data: dict[Any, Any]) -> None:
        self.data = data

    @property
    def value(self) -> tuple[Any, ...]:
        return tuple(sorted(self.data))


def test_a_tag_that_misses_a_replaced_value_is_not_used(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """The check replaces a key's value in place: a tag blind to that is refused."""
    monkeypatch.setattr(secrets, "_TAGGED", [])
    monkeypatch.setattr(secrets, "_tag_view", _KeysOnly)
    assert secrets._change_tag({}) is None and secrets._TAGGED == [False]


@pytest.mark.parametrize("tag", [_Still, _Moving])
def test_a_tag_that_does_not_move_at_changes_alone_is_not_used(
        monkeypatch: pytest.MonkeyPatch, tag: type) -> None:
    monkeypatch.setattr(secrets, "_TAGGED", [])
    monkeypatch.setattr(secrets, "_tag_view", lambda d: tag())
    assert secrets._change_tag({}) is None and secrets._TAGGED == [False]


@given(st.lists(st.tuples(st.sampled_from(["set", "delete", "read"]),
                          st.sampled_from(["A_TOKEN", "B_PASSWORD", "PLAIN"]),
                          st.sampled_from(["short", "a-long-secret-one", "a-long-secret-two"])),
                max_size=12))
def test_the_shared_redactor_is_always_the_one_made_now(steps: list[tuple[str, str, str]]
                                                        ) -> None:
    with mock.patch.dict(os.environ):  # every variable as it was afterwards
        for what, name, value in steps:
            name = f"TOOLWIRE_TEST_SHARED_{name}"
            if what == "set":
                os.environ[name] = value
            elif what == "delete":
                os.environ.pop(name, None)
            assert Redactor.shared().secrets == Redactor().secrets
