"""The embedded backend's model thread: one thread runs all the work, in order."""

from __future__ import annotations

import threading

import pytest

from jarvis.center.llm.embedded.model_thread import ModelThread


def test_work_from_any_caller_runs_on_the_one_thread() -> None:
    worker = ModelThread()
    seen: list[int] = []

    def where() -> int:
        seen.append(threading.get_ident())
        return len(seen)

    assert worker.run(where) == 1
    callers = [threading.Thread(target=worker.run, args=(where,)) for _ in range(3)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert len(seen) == 4 and set(seen) == {worker.ident}
    assert worker.ident != threading.get_ident()
    worker.stop()


def test_an_exception_reaches_the_caller_and_the_thread_goes_on() -> None:
    worker = ModelThread()

    def fail() -> None:
        raise ValueError("bad model file")

    with pytest.raises(ValueError, match="bad model file"):
        worker.run(fail)
    assert worker.run(lambda x: x * 2, 21) == 42
    worker.stop()


def test_a_nested_call_runs_in_place_and_stop_ends_the_thread() -> None:
    worker = ModelThread()
    assert worker.run(lambda: worker.run(lambda: "inner")) == "inner"
    worker.stop()
    assert not any(t.ident == worker.ident for t in threading.enumerate())
