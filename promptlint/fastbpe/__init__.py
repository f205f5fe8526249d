"""A tokenizer that loads fast, proven identical: the compact form of a BPE tokenizer.json.

Parsing a tokenizer.json is the floor every cold run stands on (0.4-1.9 s for a 100-150k
vocabulary, most of it `tokenizers` deserializing the merges). For a BPE tokenizer of the known
families (promptlint.fastbpe.form says which), the first parse also writes a compact form to the
user cache, keyed by the file's sha256, once it is proven to be the same tokenizer
(promptlint.fastbpe.proof: the same serialization, the same encodings of a corpus of hard
strings); later runs tokenize from it without parsing JSON. Where the form also records the engine
proven (promptlint.fastbpe.engine: `tokenizers` for everything but the merges, which run in
Python over the form's table), a load builds no Rust BPE model at all (milliseconds); otherwise
it builds the real `tokenizers.Tokenizer` from the tables. The embedded cl100k_base ships in
this form (promptlint/data/cl100k_base.bpe, made by scripts/build_fast_tokenizer.py).

Any doubt means the tokenizer.json is parsed as before, silently: no form, a form that is
corrupted, changed (its checksum), of another content or proven with another `tokenizers`
version, a tokenizer that is not eligible or not proven (remembered, so it is not tried again),
or PROMPTLINT_FAST_TOKENIZER=0.
"""

from __future__ import annotations

import os
from typing import Dict, Optional, Tuple

from promptlint.fastbpe import engine, form, store

ENV = "PROMPTLINT_FAST_TOKENIZER"
_BUILDS = [0]  # compact forms built in this process (tests read it: built_count())
_LOADS = [0]  # tokenizers built from one (loaded_count())


def enabled() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def load(sha256: str, embedded: bool = False) -> Optional[Tuple[object, int]]:
    """The tokenizer of content ``sha256`` built from a proven compact form, and the size of its
    tokenizer.json; None when there is none to trust (the caller parses the file, then calls
    ``remember``)."""
    found = load_with_header(sha256, embedded)
    return (found[0], found[1]["source_bytes"]) if found is not None else None


def load_with_header(sha256: str, embedded: bool = False) -> Optional[Tuple[object, Dict]]:
    """``load``, with the form's header (its ``extra``: what the form's maker recorded with it)."""
    if not enabled():
        return None
    version = form.tokenizers_version()
    for parts in store.candidates(sha256, embedded):
        if parts.source_sha256 != sha256 or parts.header.get("tokenizers") != version:
            continue
        try:
            tok = engine.build(parts) if parts.header.get("engine") else form.build(parts)
        except BaseException as e:  # an option this tokenizers lacks, a broken table, a panic: parse the file
            _reraise(e)
            continue
        _LOADS[0] += 1
        return tok, dict(parts.header, source_bytes=parts.source_bytes)
    return None


def remember(sha256: str, text: str, original, extra: Optional[Dict] = None) -> None:
    """After ``text`` (a tokenizer.json whose content is ``sha256``) was parsed into ``original``:
    write its compact form to the user cache when it is eligible and proven (``extra``: recorded in
    its header), else a note that it is not, so no later run pays the attempt again."""
    if not enabled() or store.known_unfit(sha256):
        return
    try:
        blob, reason = proven_form(sha256, text, original, extra)
        if blob is not None:
            store.save(sha256, blob)
    except BaseException as e:  # whatever goes wrong here costs the next run time, never this run its tokenizer
        _reraise(e)
        reason = f"not proven ({type(e).__name__})"
    if reason is None:
        _BUILDS[0] += 1
    else:
        store.mark_unfit(sha256, reason)


def proven_form(sha256: str, text: str, original, extra: Optional[Dict] = None) -> Tuple[Optional[bytes], Optional[str]]:
    """The compact form of ``text`` (a tokenizer.json parsed into ``original``) once proven, with
    the engine's verdict in it; or None and why there is none."""
    import gc

    # The parsed JSON is millions of objects alive for the whole build, and the tables and the
    # proof's lists are hundreds of thousands more: each full collection would traverse them all
    # (~10% of the build). Parsed JSON and the tables hold no cycles, so the collector is paused
    # meanwhile (anything cyclic the proof leaves is collected once it resumes).
    paused = gc.isenabled()
    gc.disable()
    try:
        return _proven_form(sha256, text, original, extra)
    finally:
        if paused:
            gc.enable()


def _proven_form(sha256: str, text: str, original, extra: Optional[Dict]) -> Tuple[Optional[bytes], Optional[str]]:
    import json

    from promptlint.fastbpe import proof

    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None, "not JSON"
    reason = form.ineligible(data) if isinstance(data, dict) else "not an object"
    if reason:
        return None, reason
    size = len(text.encode("utf-8"))
    refused = engine.refusal(data)
    verdict = None if refused else engine.verdict_for(data)
    try:
        blob = form.encode(data, sha256, size, verdict, extra)
        parts = form.decode(blob)
        fast = form.build(parts)
    except BaseException as e:  # a panic (PanicException) too: the file's own parse stands
        _reraise(e)
        return None, f"cannot be rebuilt ({type(e).__name__})"
    answers = proof.Answers(original)  # the original's answers on the corpus, asked once for both proofs
    if not proof.proven(fast, original, answers):
        return None, "not proven identical"
    if verdict is not None and not _engine_proven(parts, original, answers):
        blob = form.encode(data, sha256, size, None, extra)  # the form still loads faster than the JSON
    return blob, None


def _engine_proven(parts, original, answers) -> bool:
    from promptlint.fastbpe import proof

    try:
        return proof.engine_proven(engine.build(parts), original, answers)
    except BaseException as e:  # the engine is not used; the form without it is
        _reraise(e)
        return False


def vetted(sha256: str, keep: bool = True) -> bool:
    """Whether an intact form of content ``sha256`` exists, vetted against today's list of known
    regexes: a form is only written for a tokenizer whose every regex is a known family's (its
    shell holds every pattern of the file: the vocabulary and merges hold none), so the file need
    not be read and scanned again. ``keep``: hold the form for the load that follows."""
    if not enabled():
        return False
    parts = store.user_form(sha256, keep=keep)
    return parts is not None and parts.source_sha256 == sha256 and parts.header.get("vetting") == form.vetting_list()


def _reraise(e: BaseException) -> None:
    """^C, exit and promptlint's render deadline pass through; anything else (a Rust panic is a
    BaseException) means only that there is no form."""
    if isinstance(e, (KeyboardInterrupt, SystemExit, GeneratorExit)) or type(e).__name__ == "DeadlineExceeded":
        raise e


def embedded_sha256() -> Optional[str]:
    """The sha256 of the embedded tokenizer.json as the shipped compact form records it (None when
    that form is missing or corrupted: the caller hashes the decompressed JSON)."""
    parts = store.packaged() if enabled() else None
    return parts.source_sha256 if parts is not None else None


def built_count() -> int:
    return _BUILDS[0]


def loaded_count() -> int:
    return _LOADS[0]

