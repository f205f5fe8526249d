"""Per-render limits that hold even against a hostile template: time and recursion.

Time is the CPU time of the rendering thread (``render-timeout`` seconds): a template that
loops forever burns CPU, while a loaded machine (a busy CI runner, a laptop compiling) only
delays a render and must not turn it into an E006. A render stalled without using the CPU
still ends at ``WALL_BACKSTOP_FACTOR`` times the limit in wall time. Enforced, in order of
preference:

1. main thread with no SIGPROF/SIGALRM handler installed: ``setitimer(ITIMER_PROF)`` (the
   process's CPU time) + ``SIGPROF`` raise ``DeadlineExceeded`` inside whatever Python code is
   running (a tight ``{% for %}`` loop with no output, a macro that buffers its body); when the
   process's CPU ran out but the rendering thread's did not (another thread was busy), the
   timer is armed again for the rest; ``ITIMER_REAL`` + ``SIGALRM`` enforce the wall backstop;
2. any other thread (promptlint used as a library from a worker thread, a server): a watchdog
   thread reads the rendering thread's CPU clock and injects ``DeadlineExceeded`` with
   ``PyThreadState_SetAsyncExc`` -- the same effect as the signal, no subprocess, no
   ``sys.settrace``; it costs one short-lived thread per render (~0.1 ms);
3. other Python implementations: cooperative checks only (between output chunks
   and on every sandboxed call: ``Deadline.passed``).

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
WALL_BACKSTOP_FACTOR = 10  # a render stalled without using the CPU ends at this many times its limit
TIMER_SLACK_S = 0.05  # the timers fire this much after the limit: the cooperative checks speak first


class Deadline:
    """One render's limit: ``seconds`` of the rendering thread's CPU time, and the wall backstop.

    ``passed()`` reads the CPU clock (a system call) only once the wall time is past the limit:
    a thread cannot have used more CPU than the wall time that went by.
    """

    __slots__ = ("seconds", "wall", "backstop", "cpu")

    def __init__(self, seconds: float):
        now = time.monotonic()
        self.seconds = seconds
        self.wall = now + seconds
        self.backstop = now + seconds * WALL_BACKSTOP_FACTOR
        self.cpu = time.thread_time() + seconds

    def passed(self) -> bool:
        """In the rendering thread: has the render used its time?"""
        now = time.monotonic()
        if now <= self.wall:
            return False
        return now > self.backstop or time.thread_time() > self.cpu


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
        self._watchdog: Optional[threading.Thread] = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._done = False
        self._fired = False
        self._old_limit: Optional[int] = None

    @property
    def deadline(self) -> Deadline:
        return self._deadline

    def __enter__(self):
        self._deadline = Deadline(self.timeout_s)
        self._saved = (getattr(self.env, "deadline", None), getattr(self.env, "max_value_size", None))
        self.env.deadline = self._deadline
        if self.max_value_size is not None:
            self.env.max_value_size = self.max_value_size
        main = threading.current_thread() is threading.main_thread()
        if main and self.max_recursion is not None:
            levels = max(1, min(self.max_recursion, MAX_RECURSION_CAP))
            self._old_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(_current_depth() + levels * FRAMES_PER_LEVEL + FRAME_SLACK)
        if main and _signals_free():
            self._previous = (signal.signal(signal.SIGPROF, self._on_cpu_timer), signal.signal(signal.SIGALRM, _fire_alarm))
            signal.setitimer(signal.ITIMER_PROF, self.timeout_s + TIMER_SLACK_S)
            signal.setitimer(signal.ITIMER_REAL, self.timeout_s * WALL_BACKSTOP_FACTOR + TIMER_SLACK_S)
            self.mechanism = "signal"
        elif _set_async_exc() is not None:
            self._thread_id = threading.get_ident()
            self._cpu_clock = _own_cpu_clock()
            self._watchdog = threading.Thread(target=self._watch, name="promptlint-render-watchdog", daemon=True)
            self._watchdog.start()
            self.mechanism = "watchdog"
        return self

    def _on_cpu_timer(self, signum, frame):
        """SIGPROF: the process used the limit's CPU time; raise if the rendering (main) thread did."""
        d = self._deadline
        left = d.cpu - time.thread_time()
        if left > 0 and time.monotonic() < d.backstop:  # other threads' CPU: wait for the rest
            signal.setitimer(signal.ITIMER_PROF, left + TIMER_SLACK_S)
            return
        raise DeadlineExceeded()

    def _watch(self) -> None:
        """The watchdog thread: inject ``DeadlineExceeded`` once the rendering thread's CPU time (or
        the wall backstop) is used. The thread's clock is read under the lock, while ``_done`` is
        unset: the rendering thread is alive then (it sets ``_done`` before it can leave)."""
        d = self._deadline
        wait = self.timeout_s + TIMER_SLACK_S
        while not self._stop.wait(wait):
            with self._lock:
                if self._done:
                    return
                now = time.monotonic()
                used = _cpu_time(self._cpu_clock)
                if used is not None and used < d.cpu and now < d.backstop:
                    wait = min(d.cpu - used, d.backstop - now) + TIMER_SLACK_S
                    continue
                _set_async_exc()(self._thread_id, DeadlineExceeded)
                self._fired = True
                return

    def __exit__(self, *exc) -> bool:
        if self.mechanism == "signal":
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGPROF, self._previous[0])
            signal.signal(signal.SIGALRM, self._previous[1])
        elif self.mechanism == "watchdog":
            self._stop_watchdog()
        if self._old_limit is not None:
            sys.setrecursionlimit(self._old_limit)
        self.env.deadline, saved_size = self._saved
        if saved_size is not None:
            self.env.max_value_size = saved_size
        return False

    def _stop_watchdog(self) -> None:
        """Stop the watchdog; clear an injected exception not delivered yet.

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
        self._stop.set()


def _signals_free() -> bool:
    """Both timer signals free for this guard (no profiler or host program handling them)."""
    if not hasattr(signal, "setitimer") or not hasattr(signal, "SIGPROF"):
        return False
    return all(signal.getsignal(s) in (signal.SIG_DFL, None) for s in (signal.SIGPROF, signal.SIGALRM))


def _own_cpu_clock():
    """The calling thread's CPU clock id (read later from the watchdog), None where there is none."""
    try:
        return time.pthread_getcpuclockid(threading.get_ident())
    except (AttributeError, OSError):
        return None


def _cpu_time(clock) -> Optional[float]:
    if clock is None:
        return None  # no per-thread CPU clock: the limit is wall time
    try:
        return time.clock_gettime(clock)
    except OSError:
        return None


def _fire_alarm(signum, frame):
    raise DeadlineExceeded()
