"""Prometheus text exposition format: just enough to read two scrapes of /metrics."""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, Iterable, Optional, Tuple

from promptlint.doors import bounded_io

Series = Tuple[str, FrozenSet[Tuple[str, str]]]

_LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+\S+)?\s*$')
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')


class ScrapeError(ValueError):
    pass


def _unescape(v: str) -> str:
    return v.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")


def parse(lines: Iterable[str], name: str = "<scrape>") -> Dict[Series, float]:
    return _parse(lines, name)[0]


def _parse(lines: Iterable[str], name: str) -> Tuple[Dict[Series, float], Optional[float]]:
    """The samples, and the latest sample timestamp (ms) if any sample carries one."""
    out: Dict[Series, float] = {}
    stamp: Optional[float] = None
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line)
        if not m:
            raise ScrapeError(f"{name}:{n}: not a Prometheus text-format sample; pass a raw /metrics scrape")
        labels = []
        body = m.group(3) or ""
        pos = 0
        while pos < len(body):
            lm = _LABEL.match(body, pos)
            if not lm:
                raise ScrapeError(f"{name}:{n}: malformed labels; pass a raw /metrics scrape")
            labels.append((lm.group(1), _unescape(lm.group(2))))
            pos = lm.end()
        try:
            value = float(m.group(4))
        except ValueError:
            raise ScrapeError(f"{name}:{n}: sample value {m.group(4)!r} is not a number") from None
        out[(m.group(1), frozenset(labels))] = value
        if m.group(5):
            try:
                ts = float(m.group(5))
            except ValueError:
                raise ScrapeError(f"{name}:{n}: sample timestamp {m.group(5).strip()!r} is not a number") from None
            stamp = ts if stamp is None else max(stamp, ts)
    return out, stamp


def load(path: str) -> Dict[Series, float]:
    return load_timed(path)[0]


def load_timed(path: str) -> Tuple[Dict[Series, float], Optional[float]]:
    with bounded_io.open_stream(path) as f:
        try:
            data = bounded_io.read_stream(f, bounded_io.MAX_INPUT_BYTES, "the scrape")
        except bounded_io.InputRefused as e:
            raise ScrapeError(f"{path}: {e}; pass one raw /metrics scrape per file") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ScrapeError(f"{path}:{line}: not UTF-8 text; pass a raw /metrics scrape") from None
    return _parse(text.split("\n"), path)
