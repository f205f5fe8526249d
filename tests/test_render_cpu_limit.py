"""`render-timeout` is the render's CPU time, not the wall time a loaded machine stretches.

A render that waits without using the CPU (here a value whose text takes a sleep to make: what a
CI runner busy with other jobs does to any render) is not an E006; one that burns the CPU still is
(tests/test_hostile.py's runaway templates); one stalled far past the limit still ends at the wall
backstop (WALL_BACKSTOP_FACTOR times the limit). On the main thread (signals) and off it (the
watchdog) alike. Before this, a 0.2 s limit turned the 0.6 s wait into "render exceeded the time
limit of 0.2 s".
"""

from __future__ import annotations

import threading
import time

import pytest

from promptlint.render import Limits, RenderError, load_template, render
from promptlint.render.limits import WALL_BACKSTOP_FACTOR

pytestmark = pytest.mark.usefixtures("quiet_heap")  # render limits of 0.5 s: see conftest.quiet_heap


class Waits:
    """A value whose text takes ``seconds`` of waiting (no CPU) to make."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def __str__(self) -> str:
        time.sleep(self.seconds)
        return "ready"


SOURCE = "Status: {{ status }}\n{% for i in range(3) %}line {{ i }}\n{% endfor %}Done.\n"


def _render(tmp_path, limit: float, wait: float):
    limits = Limits(timeout_s=limit)
    loaded = load_template(tmp_path / "t.j2", source=SOURCE, limits=limits)
    try:
        return render(loaded, {"status": Waits(wait)}, limits).text
    except RenderError as e:
        return (e.code, e.message)


def _off_main(fn):
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("r", fn()), daemon=True)
    t.start()
    t.join(60)
    assert not t.is_alive(), "a render off the main thread did not stop"
    return out["r"]


EXPECTED = "Status: ready\nline 0\nline 1\nline 2\nDone."  # Jinja drops the final newline


def test_waiting_past_the_limit_without_cpu_is_not_an_e006_on_the_main_thread(tmp_path):
    assert threading.current_thread() is threading.main_thread()
    assert _render(tmp_path, 0.2, 0.6) == EXPECTED


def test_waiting_past_the_limit_without_cpu_is_not_an_e006_off_the_main_thread(tmp_path):
    assert _off_main(lambda: _render(tmp_path, 0.2, 0.6)) == EXPECTED


@pytest.mark.parametrize("where", ["main", "thread"])
def test_a_render_stalled_past_the_wall_backstop_still_ends(tmp_path, where):
    limit = 0.05
    wait = limit * WALL_BACKSTOP_FACTOR + 1.0  # past the backstop (0.5 s) by a second
    run = (lambda: _render(tmp_path, limit, wait))
    got = run() if where == "main" else _off_main(run)
    assert got == ("E006", "render exceeded the time limit of 0.05 s"), got


def test_another_threads_cpu_is_not_the_renders(tmp_path):
    """The main thread's timer counts the whole process's CPU: a busy thread beside the render
    makes it fire early, and the render's own CPU time decides (it is armed again for the rest)."""
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            sum(range(1000))

    busy = threading.Thread(target=spin, daemon=True)
    busy.start()
    try:
        assert _render(tmp_path, 0.2, 0.8) == EXPECTED
    finally:
        stop.set()
        busy.join(10)
