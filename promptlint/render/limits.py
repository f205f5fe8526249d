"""Per-render limits that hold even against a hostile template: wall time and recursion.

Wall time, in order of preference:

1. main thread with no SIGALRM handler installed: ``setitimer`` + ``SIGALRM`` raise
   ``DeadlineExceeded`` inside whatever Python code is running (a tight
   ``{% for %}`` loop with no output, a macro that buffers its body);
2. any other thread (promptlint used as a library from a worker thread, a server):
   a watchdog timer injects ``DeadlineExceeded`` into the rendering thread with
   ``PyThreadState_SetAsyncExc`` -- the same effect as the signal, no subprocess, no
   ``sys.settrace``; it costs one short-lived timer thread per render (~0.1 ms);
3. other Python implementations: cooperative checks only (between output chunks
   and on every sandboxed call).

Neither 1 nor 2 can interrupt a single long C call; the sandbox's size guards
(``promptlint.render.sandbox``) refuse the operations that could make one.

Recursion: Python's recursion limit is set to the current depth plus a budget of
``max_recursion`` template levels (a Jinja macro call costs about 6 Python frames),
on the main thread only (the limit is process-wide); elsewhere the interpreter's
own limit applies. Either way a runaway recursion is an E006, not a crash.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from functools import lru_cache
from typing import Optional

from promptlint.render.sandbox import DeadlineExceeded

FRAMES_PER_LEVEL = 6  # Python frames one Jinja macro call adds (measured on CPython 3.11)
FRAME_SLACK = 150  # frames for the render machinery itself (tracing, filters, Jinja internals)
MAX_RECURSION_CAP = 500  # template levels; more risks the C stack on CPython


@lru_cache(maxsize=None)
def _set_async_exc():
    """``PyThreadState_SetAsyncExc(thread_id, exc)``; ``exc=None`` clears a pending exception.
    Made on first use (a watchdog off the main thread): ctypes is not imported by every render.

    No ``argtypes``: with ``py_object`` a Python ``None`` would be passed as ``Py_None`` (a
    pending "exception None", surfacing later as a SystemError), not the NULL that clears.
    """
    try:
        import ctypes

        f = ctypes.pythonapi.PyThreadState_SetAsyncExc
    except (ImportError, AttributeError):  # not CPython
        return None
    f.restype = ctypes.c_int

    def set_exc(thread_id: int, exc) -> int:
        return f(ctypes.c_ulong(thread_id), ctypes.py_object(exc) if exc is not None else None)

    return set_exc



def _current_depth() -> int:
    f = sys._getframe(1)
    n = 0
    while f is not None:
        n += 1
        f = f.f_back
    return n


class RenderGuard:
    """``with RenderGuard(env, timeout_s, max_recursion):`` around one render (or compile)."""

    def __init__(self, env, timeout_s: float, max_recursion: Optional[int] = None, max_value_size: Optional[int] = None):
        self.env = env
        self.timeout_s = timeout_s
        self.max_recursion = max_recursion
        self.max_value_size = max_value_size
        self.mechanism = "cooperative"
        self._timer: Optional[threading.Timer] = None
        self._lock = threading.Lock()
        self._done = False
        self._fired = False
        self._old_limit: Optional[int] = None

    @property
    def deadline(self) -> float:
        return self._deadline

    def __enter__(self):
        self._deadline = time.monotonic() + self.timeout_s
        self._saved = (getattr(self.env, "deadline", None), getattr(self.env, "max_value_size", None))
        self.env.deadline = self._deadline
        if self.max_value_size is not None:
            self.env.max_value_size = self.max_value_size
        main = threading.current_thread() is threading.main_thread()
        if main and self.max_recursion is not None:
            levels = max(1, min(self.max_recursion, MAX_RECURSION_CAP))
            self._old_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(_current_depth() + levels * FRAMES_PER_LEVEL + FRAME_SLACK)
        if main and hasattr(signal, "setitimer") and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None):
            self._previous = signal.signal(signal.SIGALRM, _fire_alarm)
            signal.setitimer(signal.ITIMER_REAL, self.timeout_s + 0.05)
            self.mechanism = "signal"
        elif _set_async_exc() is not None:
            self._thread_id = threading.get_ident()
            self._timer = threading.Timer(self.timeout_s + 0.05, self._fire_watchdog)
            self._timer.daemon = True
            self._timer.start()
            self.mechanism = "watchdog"
        return self

    def _fire_watchdog(self) -> None:
        with self._lock:
            if self._done:
                return
            _set_async_exc()(self._thread_id, DeadlineExceeded)
            self._fired = True

    def __exit__(self, *exc) -> bool:
        if self.mechanism == "signal":
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._previous)
        elif self.mechanism == "watchdog":
            self._stop_watchdog()
        if self._old_limit is not None:
            sys.setrecursionlimit(self._old_limit)
        self.env.deadline, saved_size = self._saved
        if saved_size is not None:
            self.env.max_value_size = saved_size
        return False

    def _stop_watchdog(self) -> None:
        """Disarm the watchdog; clear an injected exception not delivered yet.

        An injection that lands while this very method runs (the render finished at the
        deadline) is caught here, once: after ``_done`` is set under the lock nothing can be
        injected any more, and whatever was injected has been delivered or cleared.
        """
        while True:
            try:
                with self._lock:
                    self._done = True
                    if self._fired:
                        _set_async_exc()(self._thread_id, None)
                break
            except DeadlineExceeded:
                continue
        self._timer.cancel()


def _fire_alarm(signum, frame):
    raise DeadlineExceeded()
