"""One captured request: its body, the reply when known, and where it came from. No header is
ever kept (readers and the plugin read bodies and URL paths only): a capture is shared and a
report is printed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

@dataclass
class Request:
    index: int  # 1-based position in its file (the location of file findings)
    body: Dict[str, Any]
    path: str  # the capture file, or the sending code's file (plugin)
    line: int  # the line findings point at: the request's index, or the sending code's line
    conversation: Optional[str] = None  # the capture's own key (conversation/session/page/trace)
    reply: Optional[Dict[str, Any]] = None  # the provider's whole response, when recorded
    provider: Optional[str] = None  # from the endpoint, when the capture names it
    test_id: Optional[str] = None  # plugin: the pytest node id
    where: str = ""  # "request 3" or "tests/test_agent.py:41", for messages
    time: Optional[float] = None  # when it was sent (seconds since the epoch), when the capture says
    # False: the capture cannot carry cache markers (an OTLP trace), so an explicit-caching
    # provider's breakpoints, and what it reused, are unknown
    cache_markers: bool = True
    shape: Any = field(default=None, repr=False, compare=False)  # made once by ``shapes.of``
    # the provider's own count of prompt tokens read from its cache, when the capture reports it
    # (OTLP ``gen_ai.usage.cache_read.input_tokens``)
    cache_read_tokens: Optional[int] = None


@dataclass
class Capture:
    """What a reader got from one file: the usable requests and one line per bad record."""

    path: str
    requests: List[Request] = field(default_factory=list)
    bad: List[str] = field(default_factory=list)
    format: str = ""
