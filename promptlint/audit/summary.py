"""Token-weighted sums: ratios are sums of numerators over sums of denominators, never a
mean of per-request or per-replica ratios; "n/a" when the denominator is zero."""

from __future__ import annotations

from typing import Any, Dict

from promptlint.audit.classify import ALL_CLASSES

NA = "n/a"


def ratio(num: float, den: float) -> Any:
    return NA if not den else num / den


class Totals:
    __slots__ = ("requests", "prompt_tokens", "cached_tokens", "observed_prompt_tokens", "ceiling_tokens",
                 "ceiling_inst_tokens", "lost", "classes", "over_ceiling_tokens", "usage_only")

    def __init__(self) -> None:
        self.requests = 0
        self.prompt_tokens = 0
        self.cached_tokens = 0
        self.observed_prompt_tokens = 0  # P of requests whose cached tokens were reported
        self.ceiling_tokens = 0
        self.ceiling_inst_tokens = 0
        self.over_ceiling_tokens = 0
        self.usage_only = 0
        self.lost: Dict[str, int] = {}
        self.classes: Dict[str, list] = {}  # class -> [requests, tokens]

    def add(self, row: Dict[str, Any]) -> None:
        P = row["prompt_tokens"]
        O = row["cached_tokens"]
        self.requests += 1
        self.prompt_tokens += P
        if O is not None:
            self.cached_tokens += O
            self.observed_prompt_tokens += P
        if row["ceiling_tokens"] is None:
            self.usage_only += 1
        else:
            self.ceiling_tokens += row["ceiling_tokens"]
            self.ceiling_inst_tokens += row["ceiling_inst_tokens"]
        self.over_ceiling_tokens += row.get("over_ceiling_tokens") or 0
        for k, n in row["lost"].items():
            self.lost[k] = self.lost.get(k, 0) + n
        c = self.classes.setdefault(row["class"], [0, 0])
        c[0] += 1
        if row["class"] == "M0":
            c[1] += P
        elif row["class"] == "HIT":
            c[1] += O or 0

    def as_dict(self) -> Dict[str, Any]:
        classes = {}
        for c in ALL_CLASSES + ("unobserved",):
            n_req = self.classes.get(c, [0, 0])[0]
            if c in ("HIT", "M0"):
                tokens = self.classes.get(c, [0, 0])[1]
            else:
                tokens = self.lost.get(c, 0)
            if c == "unobserved" and not n_req and not tokens:
                continue
            classes[c] = {"requests": n_req, "tokens": tokens, "share": ratio(tokens, self.prompt_tokens)}
        return {
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens,
            "ceiling_tokens": self.ceiling_tokens,
            "ceiling_inst_tokens": self.ceiling_inst_tokens,
            "over_ceiling_tokens": self.over_ceiling_tokens,
            "usage_only_requests": self.usage_only,
            "observed_ratio": ratio(self.cached_tokens, self.observed_prompt_tokens),
            "ceiling_ratio": ratio(self.ceiling_tokens, self.prompt_tokens),
            "ceiling_inst_ratio": ratio(self.ceiling_inst_tokens, self.prompt_tokens),
            "realised_share": ratio(self.cached_tokens, self.ceiling_inst_tokens),
            "classes": classes,
        }


class Summary:
    """Pooled totals plus breakdowns per instance, tenant and revision."""

    BY = ("instance", "tenant", "model_rev", "template_rev")

    def __init__(self) -> None:
        self.total = Totals()
        self.by: Dict[str, Dict[str, Totals]] = {k: {} for k in self.BY}

    def add(self, row: Dict[str, Any]) -> None:
        self.total.add(row)
        for k in self.BY:
            d = self.by[k]
            t = d.get(row[k])
            if t is None:
                t = d[row[k]] = Totals()
            t.add(row)

    def as_dict(self) -> Dict[str, Any]:
        out = self.total.as_dict()
        out["by"] = {k: {label: t.as_dict() for label, t in sorted(v.items())} for k, v in self.by.items()}
        return out
