"""Encodings a resident process (the daemon, the language server) remembers between requests.

After one Python module or template changes, the files re-analysed with it mostly render the same
prompts as in the last request (an importer of a changed module, a comment edited): encoding them
again is the larger part of the re-check. A resident tokenizer pool gives each LoadedTokenizer one
of these: ``(text, add_special_tokens) -> (ids, offsets)``, kept as flat integer arrays (16-24 bytes
a token, not Python tuples), bounded by the characters it holds, least recently used going first.
A hit is what encoding gives (the same tokenizer object, so the same ids and offsets), handed out
as new lists, and charged to the analysis budget as an encode is.
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from itertools import chain
from typing import List, Optional, Tuple

MAX_CHARS = 2_000_000  # characters of text remembered per tokenizer (about 500k tokens: ~10 MB)
RUN_CHARS = 400_000  # the same within one run (each worker): the recent texts, where its repeats are (~2 MB)
MIN_CHARS = 32  # shorter texts cost less to encode than to remember


class EncodeMemo:
    def __init__(self, max_chars: int = MAX_CHARS):
        self.max_chars = max_chars
        self.chars = 0
        self.hits = 0
        self._kept: "OrderedDict[Tuple[str, bool], Tuple[array, array]]" = OrderedDict()

    def get(self, text: str, add_special_tokens: bool) -> Optional[Tuple[List[int], List[Tuple[int, int]]]]:
        if len(text) < MIN_CHARS:
            return None
        key = (text, add_special_tokens)
        found = self._kept.get(key)
        if found is None:
            return None
        self._kept.move_to_end(key)
        self.hits += 1
        ids, flat = found
        return ids.tolist(), list(zip(flat[0::2], flat[1::2]))

    def put(self, text: str, add_special_tokens: bool, ids, offsets) -> None:
        if len(text) < MIN_CHARS or len(text) > self.max_chars:
            return
        key = (text, add_special_tokens)
        if key in self._kept:
            return
        self._kept[key] = (array("q", ids), array("q", chain.from_iterable(offsets)))
        self.chars += len(text)
        while self.chars > self.max_chars:
            (old, _), _ = self._kept.popitem(last=False)
            self.chars -= len(old)
