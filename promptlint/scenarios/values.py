"""Sample values: realistic inputs of an inferred shape, and the second value of each kind.

``shaped_value`` builds an input's value from its ``Shape`` (a list of records with the
fields the template reads, the branches its comparisons select, realistic text chosen by
field name); ``volatile_variant`` and ``per_request_variant`` give the value of the next
request (seconds later, a day later, another id; another question).
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta
from typing import Any, Dict, List, Optional, Tuple

from promptlint.scenarios.shapes import form_of  # noqa: F401 - the form a shape's evidence gives (used here, and re-exported)

PER_REQUEST_SAMPLES = ("How do I reset my password?", "Where is my order #4417?")
_BASE_CLOCK = datetime(2025, 3, 14, 9, 26, 53)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_IDS = ("7f3c9a2e-4b1d-4e8a-9c6f-2d5e8b1a0c34", "c1a9e4d2-8f3b-4a7c-b5e6-9d0f1e2a3b4c")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?")
_ISO_TIME = re.compile(r"\d{2}:\d{2}:\d{2}(\.\d+)?")
# Unix epochs of 2001-09-09 .. 2100: seconds, or milliseconds
_EPOCH_S, _EPOCH_MS = (1_000_000_000, 4_102_444_800), (1_000_000_000_000, 4_102_444_800_000)

# ---------------------------------------------------------------- volatile values


def guess_sub_kind(name: str, value: Any) -> str:
    from promptlint.scenarios.names import name_words

    sub = looks_volatile(value)
    if sub is not None:
        return sub
    words = name_words(name)
    if any(w in ("date", "today", "day") for w in words):
        return "date"
    if words and words[-1] in ("id", "uuid", "nonce", "guid"):
        return "id"
    return "timestamp"


def looks_volatile(value: Any) -> Optional[str]:
    """The volatile sub-kind a samples-file value has by its look (an ISO date/time, an epoch, a UUID), else None."""
    if isinstance(value, datetime):
        return "timestamp"
    if isinstance(value, date):
        return "date"
    if isinstance(value, time):
        return "time"
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return "timestamp" if _is_epoch(value) else None
    if not isinstance(value, str):
        return None
    v = value.strip()
    if _UUID.fullmatch(v):
        return "id"
    if _ISO_DATETIME.fullmatch(v):
        return "timestamp"
    if _ISO_DATE.fullmatch(v):
        return "date"
    if _ISO_TIME.fullmatch(v):
        return "time"
    if v.isdigit() and _is_epoch(int(v)):
        return "timestamp"
    return None


def _is_epoch(n: int) -> bool:
    return _EPOCH_S[0] <= n < _EPOCH_S[1] or _EPOCH_MS[0] <= n < _EPOCH_MS[1]


def volatile_value(sub: Optional[str], as_object: bool = False) -> Any:
    """The base value of a volatile input (``as_object``: a datetime/date the template calls methods on)."""
    if sub == "date":
        return _BASE_CLOCK.date() if as_object else _BASE_CLOCK.date().isoformat()
    if sub == "time":
        return _BASE_CLOCK.time() if as_object else _BASE_CLOCK.strftime("%H:%M:%S")
    if sub == "id":
        return _IDS[0]
    return _BASE_CLOCK if as_object else _BASE_CLOCK.isoformat(sep=" ")


def volatile_number(sub: Optional[str]) -> int:
    """A volatile input the template uses as a number: the base time's Unix epoch (seconds; a date's
    midnight), or a numeric id. Its variant is seconds (a day) later, or another id."""
    import calendar

    if sub == "id":
        return 48213107
    moment = datetime.combine(_BASE_CLOCK.date(), time()) if sub == "date" else _BASE_CLOCK
    return calendar.timegm(moment.utctimetuple())


def _numeric(shape) -> bool:
    """Is the value used as a number (arithmetic, ordered, `| int`, `| float`) and not as a date-time?"""
    from promptlint.scenarios.shapes import NUMBER

    r = shape.find()
    return form_of(r) == NUMBER or (not r.fields and any(label in ("|int", "|float") for label in r.uses))


def _step(moment, delta):
    """The next request's value; the previous one at the end of the calendar (9999-12-31), where
    only the difference matters."""
    try:
        return moment + delta
    except OverflowError:
        return moment - delta


def volatile_variant(value: Any, sub: Optional[str]) -> Any:
    """A second realistic value: seconds later, a day later, or another id of the same shape."""
    if isinstance(value, datetime):
        return _step(value, timedelta(seconds=7))
    if isinstance(value, date):
        return _step(value, timedelta(days=1))
    if isinstance(value, time):
        return _step(datetime.combine(date(2000, 1, 1), value), timedelta(seconds=7)).time()
    if isinstance(value, int) and not isinstance(value, bool) and sub in (None, "timestamp"):
        return value + (7000 if value >= _EPOCH_MS[0] else 7)  # seconds or milliseconds
    if isinstance(value, int) and not isinstance(value, bool) and sub == "date":
        return value + 86400
    if isinstance(value, int) and not isinstance(value, bool) and sub in ("id", "time"):
        return int(_rotate(str(value))) if sub == "id" else value + 7
    if not isinstance(value, str):
        return _rotate(str(value)) if not isinstance(value, (list, dict)) else value
    v = value.strip()
    if sub == "id" and value == _IDS[0]:
        return _IDS[1]
    if sub == "id":
        # Real ids keep their constant prefix ("req-", "trace_"): only the random part changes.
        m = re.match(r"^([A-Za-z]+[-_:])(?=.*\d)", value)
        if m and not _UUID.fullmatch(v):
            return m.group(1) + _rotate(value[m.end():])
    if sub in (None, "timestamp", "date", "time"):
        if v.isdigit() and _is_epoch(int(v)):
            return value.replace(v, str(volatile_variant(int(v), "timestamp")))
        try:
            if sub == "date" or _ISO_DATE.fullmatch(v):
                return value.replace(v, _step(date.fromisoformat(v), timedelta(days=1)).isoformat())
            if sub == "time" and re.fullmatch(r"\d{2}:\d{2}(:\d{2})?", v):
                t = datetime.strptime(v, "%H:%M:%S" if v.count(":") == 2 else "%H:%M")
                fmt = "%H:%M:%S" if v.count(":") == 2 else "%H:%M"
                delta = timedelta(seconds=7) if v.count(":") == 2 else timedelta(minutes=1)
                return value.replace(v, _step(t, delta).strftime(fmt))
            dt = datetime.fromisoformat(v.replace("Z", "+00:00"))
            sep = "T" if "T" in v else " "
            out = _step(dt, timedelta(seconds=7)).isoformat(sep=sep)
            return value.replace(v, out.replace("+00:00", "Z") if v.endswith("Z") else out)
        except ValueError:
            pass
    return _rotate(value)


def _rotate(text: str) -> str:
    """Same shape, different characters: digits and letters shifted by one."""
    out = []
    for ch in text:
        if ch.isdigit():
            out.append(str((int(ch) + 1) % 10))
        elif "a" <= ch <= "z":
            out.append(chr((ord(ch) - 97 + 1) % 26 + 97))
        elif "A" <= ch <= "Z":
            out.append(chr((ord(ch) - 65 + 1) % 26 + 65))
        else:
            out.append(ch)
    changed = "".join(out)
    return changed if changed != text else text + "-2"


def per_request_variant(value: Any) -> Any:
    if isinstance(value, str):
        if value == PER_REQUEST_SAMPLES[0]:
            return PER_REQUEST_SAMPLES[1]
        family = _FAMILY_OF.get(value)
        if family is not None:  # a shaped stand-in (a URL): the next of its family, same opening
            return family[(family.index(value) + 1) % len(family)]
        return "Different request: " + value[::-1]
    if isinstance(value, list):
        return [per_request_variant(v) for v in value] or ["another request"]
    if isinstance(value, dict):
        return {k: per_request_variant(v) for k, v in value.items()}
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    return value


_USER_ROLES = ("user", "human", "customer")
_ASSISTANT_ROLES = ("assistant", "ai", "bot", "model", "agent")


def grown_history(value: List[Any], question: Optional[str] = None) -> List[Any]:
    """A conversation grown by one exchange (M204 on application templates): the previous question
    and an answer. Items with a role (a `user` / `assistant` text) grow by two copies of the last
    user and the last assistant item; other items (one record per exchange, plain texts) by one copy
    of the last item. A copy keeps its short words (roles, names: the same branches are selected)
    and gets the question as its first prose text and the answer as the others."""
    import copy

    question = question or _QUESTIONS[-1]

    def role(item, roles):
        return any(isinstance(s, str) and s.lower() in roles for s in value_leaves(item))

    users = [i for i in value if role(i, _USER_ROLES)]
    answers = [i for i in value if role(i, _ASSISTANT_ROLES)]
    if users and answers:
        grown = [_retext(copy.deepcopy(users[-1]), [question]), _retext(copy.deepcopy(answers[-1]), [_ANSWERS[-1]])]
    else:
        grown = [_retext(copy.deepcopy(value[-1]), [question, _ANSWERS[-1]])]
    return list(value) + grown


def grown_answer() -> str:
    """The assistant's reply that ``grown_history`` adds: what the model generated after turn N."""
    return _ANSWERS[-1]


def value_leaves(value: Any):
    """Every scalar inside nested dicts and lists."""
    if isinstance(value, dict):
        for v in value.values():
            yield from value_leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from value_leaves(v)
    else:
        yield value


def _retext(value: Any, texts: List[str]) -> Any:
    """``value`` with its prose (strings with a space) replaced by ``texts`` in order, the last repeated."""
    if isinstance(value, dict):
        return {k: _retext(v, texts) for k, v in value.items()}
    if isinstance(value, list):
        return [_retext(v, texts) for v in value]
    if isinstance(value, str) and " " in value.strip():
        return texts.pop(0) if len(texts) > 1 else texts[0]
    return value


# ---------------------------------------------------------------- values of a shape

# Realistic text by the last word of a field's name: two values for the base render, two for
# the next request. Chosen so renders read like real prompts (and tokenize like them).
_QUESTIONS = PER_REQUEST_SAMPLES + (
    "Can I change the delivery address?",
    "Do you ship to Canada?",
    "How long does a refund take?",
    "Is the two-person tent waterproof?",
)
_ANSWERS = (
    "Open Settings > Account and choose Reset password.",
    "Order #4417 shipped on Monday and arrives on Thursday.",
    "Yes, until the parcel leaves the warehouse.",
    "Yes, shipping to Canada takes five to seven business days.",
    "Refunds reach your card within 5 business days.",
    "Yes, its seams are taped and the fly is rated to 3,000 mm.",
)
_PASSAGES = (
    "Refunds are issued to the original payment method within 5 business days of receiving the returned item.",
    "Orders over 50 dollars ship free; express shipping costs 15 dollars and takes one to two business days.",
    "Gift cards never expire and can be combined with one promotional code per order.",
    "Damaged items must be reported within 14 days of delivery with a photo of the damage.",
)
_FAMILIES: Dict[str, Tuple[Any, ...]] = {}
for _words, _values in (
    (("question", "query", "input", "prompt", "ask", "request", "utterance", "human"), _QUESTIONS),
    (("answer", "response", "output", "reply", "completion", "ai", "assistant", "bot"), _ANSWERS),
    (("content", "text", "body", "passage", "chunk", "snippet", "excerpt", "document", "doc", "context", "message",
      "summary", "observation", "result", "value", "page"), _PASSAGES),
    (("title", "heading", "subject", "topic", "section"), ("Refund policy", "Shipping times", "Gift cards", "Damaged items")),
    (("name", "author", "user", "customer", "username"), ("Ada Lovelace", "Grace Hopper", "Alan Turing", "Katherine Johnson")),
    (("url", "link", "href", "uri"), ("https://docs.example.com/refunds", "https://docs.example.com/shipping",
                                     "https://docs.example.com/gift-cards", "https://docs.example.com/damage")),
    (("source", "file", "filename", "path"), ("refunds.md", "shipping.md", "gift-cards.md", "damage.md")),
    (("description", "desc"), ("Look up an order by its number.", "Track a parcel by its tracking code.",
                               "Issue a refund for an order.", "Check whether an item is in stock.")),
    (("thought", "reasoning", "plan"), ("I need the order status before I can answer.", "The order has shipped; I can answer now.",
                                        "I should check the refund policy first.", "The policy answers the question.")),
    (("action", "tool", "function", "tool_name"), ("search_orders", "track_parcel", "issue_refund", "check_stock")),
    (("arguments", "args", "parameters", "action_input", "tool_input"), ('{"order_id": "4417"}', '{"tracking": "1Z999"}',
                                                                       '{"order_id": "4420"}', '{"sku": "TENT-2P"}')),
    (("id", "key", "uid"), ("doc-1", "doc-2", "doc-3", "doc-4")),
):
    for _w in _words:
        _FAMILIES[_w] = _values
# names whose values have a shape every real value shares (`url`: `https://…`): an input named so gets
# that shape, and its next-request variant is another of the same family (the opening stays shared)
_SHAPED = {w: _FAMILIES[w] for w in ("url", "link", "href", "uri", "filename", "path")}
_FAMILY_OF = {v: f for f in _SHAPED.values() for v in f}
_PARENTS = {
    "tool": {"tool", "tools", "function", "functions", "action", "actions", "command", "commands", "skill", "skills", "plugin", "plugins", "call", "calls"},
    "param": {"argument", "arguments", "args", "arg", "parameter", "parameters", "params", "param", "properties", "fields", "field", "columns", "inputs"},
    "org": {"company", "organization", "organisation", "org", "business", "vendor", "brand", "team", "department"},
}
_BY_PARENT = {
    ("tool", "name"): ("search_orders", "track_parcel", "issue_refund", "check_stock"),
    ("param", "name"): ("order_id", "tracking_code", "reason", "sku"),
    ("param", "type"): ("string", "integer", "string", "boolean"),
    ("org", "name"): ("Acme Corporation", "Globex", "Initech", "Umbrella Health"),
}


def _parent_class(words) -> Optional[str]:
    last = words[-1] if words else ""
    return next((cls for cls, names in _PARENTS.items() if last in names), None)


_SCORES = ("score", "similarity", "relevance", "confidence", "probability", "distance", "weight")
# a conversation as one text: other questions than the one being asked
_HISTORY_TEXT = tuple(f"User: {q}\nAssistant: {a}" for q, a in zip(_QUESTIONS[2:] + _QUESTIONS[:2], _ANSWERS[2:] + _ANSWERS[:2]))
MAX_ITEMS = 4  # a list gets two items, more when its items' fields select more branches
MAX_DEPTH = 6


class Method(str):
    """A method of an application object the template calls (`tool.to_tool_calling_prompt()`): text
    that returns itself when called, so the call renders as sample text."""

    def __call__(self, *args: Any, **kwargs: Any) -> str:
        return str(self)


class _Builder:
    def __init__(self, root: str, role_sub: Optional[str], per_request: bool, variant: bool):
        self.root = root
        self.sub = role_sub  # "history" / "retrieved" / "input" / None
        self.per_request = per_request
        self.variant = variant

    def value(self, shape, path: Tuple[str, ...], index: int, depth: int = 0, turn: int = 0, part: int = 0) -> Any:
        """The value of ``shape`` at ``path`` for item ``index``; ``turn`` is the index of the input's own
        item (a conversation's turn), ``part`` the index inside it (a turn's content parts)."""
        from promptlint.scenarios.shapes import BOOL, DATETIME, LIST, MAPPING, METHOD, NUMBER, TEXT, WEAK_LIST

        r = shape.find()
        if METHOD in r.categories():
            return Method(self.text(path, index, depth > 0, turn, part))
        form = form_of(r)
        if depth > MAX_DEPTH:
            form = TEXT
        if form == LIST or form == WEAK_LIST:
            item = r.element_if_any()
            n = item_count(r) if item is not None else 2
            item = item or _blank()
            return [self.value(item, path, i, depth + 1, i if depth == 0 else turn, 0 if depth == 0 else i) for i in range(n)]
        if form == "tuple":
            n = 1 + max(int(k[1:]) for k in r.fields if k.startswith("#"))
            return [self.value(r.fields.get(f"#{i}") or _blank(), path + (f"#{i}",), index, depth + 1, turn, part) for i in range(n)]
        if form == MAPPING:
            keys = [k for k in r.fields] or ["key_a", "key_b"]
            out = {}
            for k in keys:
                sub = r.fields.get(k) or r.element_if_any() or _blank()
                out[k] = self.value(sub, path + (k,), index, depth + 1, turn, part)
            return out
        choices = literal_choices(r, path)
        if choices:
            v = choices[index % len(choices)]
            if v is not None:
                return v
        if form == DATETIME:
            return _BASE_CLOCK
        if form == NUMBER:
            return self.number(path, index)
        if form == BOOL:
            return True
        return _fit_length(self.text(path, index, depth > 0, turn, part), r.lengths)

    def number(self, path: Tuple[str, ...], index: int) -> Any:
        from promptlint.scenarios.names import name_words

        words = name_words(path[-1]) if path else ()
        if words and words[-1] in _SCORES:
            return (0.92, 0.87, 0.81, 0.78)[index % 4]
        return index + 1

    def text(self, path: Tuple[str, ...], index: int, nested: bool, turn: int, part: int) -> str:
        """Realistic text for item ``index`` at ``path``: an input's own text takes a family's first two
        samples (this request, the next), texts inside it the following ones, so they do not repeat it."""
        from promptlint.scenarios.names import name_words

        v = 1 if self.variant else 0

        def pick(family, k: int = index) -> str:
            return family[(v if not nested else 2 + 2 * k + v) % len(family)]

        fields = [p for p in path if not p.startswith("#")]
        if not fields:  # the input itself (or its items) is text
            family = _SHAPED.get(name_words(self.root)[-1] if name_words(self.root) else "")
            family = family or {"input": _QUESTIONS, "retrieved": _PASSAGES, "history": _HISTORY_TEXT}.get(self.sub or "")
            if family is not None:
                return pick(family)
        else:
            words = name_words(fields[-1])
            if words and words[-1] in ("role", "speaker", "sender"):
                return ("user", "assistant")[index % 2]  # the same turns in both requests
            parent = name_words(fields[-2] if len(fields) > 1 else self.root)
            by_parent = _BY_PARENT.get((_parent_class(parent), words[-1] if words else ""))
            if by_parent is not None:  # a tool's or an argument's name, not a person's
                return pick(by_parent)
            family = (_FAMILIES.get("_".join(words[-2:])) or _FAMILIES.get(words[-1])) if words else None
            if family is not None:
                if self.sub == "history" and family is _PASSAGES:  # a turn's content: a question, then an answer
                    return pick(_QUESTIONS if turn % 2 == 0 else _ANSWERS, turn // 2 * 2 + part)
                return pick(family)
        label = ".".join([self.root] + fields)
        if self.variant:
            return f"another {label} {index + 1}"
        return f"sample {label}" + (f" {index + 1}" if index else "")


def _blank():
    from promptlint.scenarios.shapes import Shape

    return Shape()


def literal_choices(shape, path: Tuple[str, ...]) -> List[Any]:
    """The values that select each branch a template compares this value against (None: any other text)."""
    from promptlint.scenarios.names import name_words

    r = shape.find()
    choices = [v for v in r.eq if v not in r.avoid] + [v for v in r.ne if v not in r.eq and v not in r.avoid]
    words = name_words(path[-1]) if path and not path[-1].startswith("#") else ()
    if words and words[-1] in ("role", "speaker", "sender") and (r.eq or r.ne):
        choices += [v for v in ("user", "assistant") if v not in choices]
    choices += [v for v in ("user", "assistant") if words and words[-1] in ("role", "speaker", "sender") and r.avoid and v not in choices + r.avoid]
    if (choices or r.avoid) and not [v for v in r.eq if v not in r.avoid]:
        choices.append(None)  # no `==` branch to select: also one value that is none of the literals
    return choices


def item_count(shape) -> int:
    """Two items, or one per branch the items' fields select (at most MAX_ITEMS); a count that a
    raising branch's `|length` test rejects is avoided."""
    n = 2
    r = shape.find()
    item = r.element_if_any()
    if item is not None:
        for name, sub in item.find().fields.items():
            n = max(n, len(literal_choices(sub, (name,))))
        n = max(n, len(literal_choices(item, ())))
    n = min(n, MAX_ITEMS)
    fits = [k + d for _, k in r.lengths for d in (0, 1, -1) if 0 <= k + d <= 3 * MAX_ITEMS]
    for count in [n, 1, 2, 3, MAX_ITEMS, 0] + sorted(fits):
        if not any(_holds(op, count, k) for op, k in r.lengths):
            return count
    return n


def _fit_length(text: str, lengths) -> str:
    """``text`` cut or padded to a length no raising branch's `|length` test rejects."""
    if not lengths:
        return text
    wanted = sorted({len(text)} | {max(0, k + d) for _, k in lengths for d in (0, 1, -1)}, key=lambda n: abs(n - len(text)))
    for n in wanted:
        if not any(_holds(op, n, k) for op, k in lengths):
            return text[:n] if n <= len(text) else text + ("abcdefghij" * (n // 10 + 1))[: n - len(text)]
    return text


def _holds(op: str, a: int, b: int) -> bool:
    return {"eq": a == b, "ne": a != b, "lt": a < b, "gt": a > b, "lteq": a <= b, "gteq": a >= b}.get(op, False)


def shaped_value(name: str, shape, kind: str, sub: Optional[str]) -> Tuple[Any, Any]:
    """(value, variant) of an inferred input; variant None means the kind's default."""
    from promptlint.scenarios.shapes import DATETIME

    r = shape.find() if shape is not None else _blank()
    if kind == "volatile":
        if _numeric(r):  # `ts | int`, `created_at / 1000`, `request_id + 1`: a number, as the application has it
            return volatile_number(sub), None
        as_object = form_of(r) == DATETIME or bool(r.categories() & {DATETIME})
        return volatile_value(sub, as_object=as_object and sub != "id"), None
    per_request = kind == "per-request"
    value = _Builder(name, sub if per_request else None, per_request, False).value(r, (), 0)
    if not per_request:
        return value, None
    variant = _Builder(name, sub, True, True).value(r, (), 0)
    if variant == per_request_variant(value) or variant == value:
        variant = None
    return value, variant


def describe(shape) -> str:
    """The shape in words, for a samples-file comment: 'a list of records, each with .role, .content (iterated at line 3)'."""
    from promptlint.scenarios.shapes import DATETIME, LIST, MAPPING, leaves

    r = shape.find()
    form = form_of(r)
    uses = sorted(r.uses.items(), key=lambda kv: _line_key(kv[1][1]))
    evidence = ", ".join(f"{label} at {where}" for label, (_, where) in uses[:3])
    fields = [f for f in dict.fromkeys(leaves(r)) if f != "[]"]
    what = {"tuple": "a pair", DATETIME: "a date-time", MAPPING: "a mapping", "text": "text", "number": "a number", "bool": "a flag"}.get(form, form)
    if form == LIST:
        item = r.element_if_any()
        records = item is not None and form_of(item) == MAPPING
        what = "a list of records" if records else "a list"
        if records:
            fields = [f[2:] if f.startswith("[].") else f for f in fields]
            what += ", each with"
        else:
            what += " with"
    else:
        what += " with"
    if fields:
        what += " " + ", ".join(fields[:6]) + (", ..." if len(fields) > 6 else "")
    else:
        what = what[: -len(" with")].rstrip(",").replace(", each", "")
    choices = [repr(c) for c in r.eq]
    if choices:
        what += f", compared with {', '.join(choices)}"
    return f"{what}{' (' + evidence + ')' if evidence else ''}"


def _line_key(where: str):
    m = re.search(r"line (\d+)$", where)
    return (" " in where.split("line")[0].strip(), int(m.group(1)) if m else 0)
