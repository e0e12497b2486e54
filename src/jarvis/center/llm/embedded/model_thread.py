"""One long-lived thread that runs every llama.cpp call of a backend.

llama.cpp computes with an OpenMP team of threads that belongs to the thread calling it.
The center calls its backend from a new worker thread for each request; each caller then
gets a team of its own, and on 2 cores the idle teams left behind take a fifth to a third
of the speed from the working one (measured: docs/embedded-llm.md, "One model thread").
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

__all__ = ["ModelThread"]

_T = TypeVar("_T")


class ModelThread:
    """Runs the work handed to it on one daemon thread, in order, and hands back results.

    A daemon thread, so that quitting (Ctrl-C in `jarvis chat`) does not wait for a long
    prompt to be read.
    """

    def __init__(self, name: str = "jarvis-llm") -> None:
        self._jobs: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]
                                      | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    @property
    def ident(self) -> int | None:
        return self._thread.ident

    def run(self, work: Callable[..., _T], *args: Any) -> _T:
        """`work(*args)` on the thread; its result, or its exception raised here."""
        if threading.get_ident() == self._thread.ident:
            return work(*args)  # already on it (a nested call): no queue, no deadlock
        future: Future[_T] = Future()
        self._jobs.put((future, work, args))
        return future.result()

    def stop(self) -> None:
        """Let the thread finish the work queued so far, then end."""
        if self._thread.is_alive() and threading.get_ident() != self._thread.ident:
            self._jobs.put(None)
            self._thread.join()

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            future, work, args = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(work(*args))
            except BaseException as exc:  # handed to the caller, who raises it
                future.set_exception(exc)
