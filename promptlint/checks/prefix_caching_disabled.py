"""M701 prefix-caching-disabled: the engine is launched or configured with prefix caching off.

The launch-configuration analyzer scans lines with ``FLAGS``; the Python analyzer finds the
flags (``FLAG``) in argv strings and the keyword arguments in code. Both word their findings
with ``message``/``help_text`` (rules/M701.toml ``[data.wording]``).
"""

from __future__ import annotations

from promptlint.base import lazy_re, registry

CODES = registry.implements(__name__, "M701")

# a flag on its own (a command line, an argv element)
FLAG = lazy_re.compile(r"--no-enable-prefix-caching\b|--disable-radix-cache\b|--no-prefix-caching\b")
# launch configurations: the flags, and YAML/env/JSON settings that turn the cache off
FLAGS = lazy_re.compile(
    r"(?P<flag>--no-enable-prefix-caching\b|--disable-radix-cache\b|--no-prefix-caching\b)"
    r"|(?P<key>\b(?:enable[-_]prefix[-_]caching)\b[\"']?\s*[:=]\s*[\"']?(?:false|False|0)\b)"
    r"|(?P<radix>\bdisable[-_]radix[-_]cache\b[\"']?\s*[:=]\s*[\"']?(?:true|True|1)\b)"
)
# what a directory walk looks for before it takes a launch configuration
MARKERS = (b"prefix-caching", b"prefix_caching", b"radix-cache", b"radix_cache")


def message(setting: str) -> str:
    return registry.get("M701").data["wording"]["message"].format(setting=setting)


def help_text() -> str:
    return registry.get("M701").data["wording"]["help"]
