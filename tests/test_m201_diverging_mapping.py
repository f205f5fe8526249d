"""Issue 32, family 8: M201 names the mapping whose key order the prompt actually shows.

An input that holds several mappings (a guest record with a `profile` inside; settings with a
sorted `limits` and an unsorted `style`) was reported under the input's name, with the key order
of the outer mapping as the variant, although the outer order never reaches the prompt. Each
mapping is now reversed alone and the one that parts the render first is named.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import DATA

TOKENIZER = DATA / "tokenizers" / "qwen2.5" / "tokenizer.json"
POLICY = ("Stay policy: check-in from 3pm, check-out by 11am, late check-out on request when rooms allow it.\n"
          "Breakfast is served from 7am to 10am in the lobby restaurant; pets stay free in garden rooms.\n")
QUESTION = {"kind": "per-request", "value": "Can I check out at noon?", "variant": "Is breakfast included?"}


def _check(tmp_path: Path, cli, template: str, variables: dict) -> list:
    (tmp_path / "concierge.j2").write_text(template, encoding="utf-8")
    (tmp_path / "concierge.samples.json").write_text(json.dumps({"variables": variables}), encoding="utf-8")
    r = cli("check", "--tokenizer", TOKENIZER, "--template-env", "transformers", "--no-cache", "--output-format", "json",
            "concierge.j2", cwd=tmp_path)
    return [f for f in r.json()["findings"] if f["code"] == "M201"]


def test_a_mapping_inside_a_record_is_named_by_its_path(tmp_path, cli):
    guest = {"name": "Ana", "tier": "gold", "profile": {"floor": "high", "pillow": "firm", "newspaper": "none"}}
    found = _check(tmp_path, cli, "You are the concierge of Fabrikam Hotels.\nGuest profile: {{ guest.profile | tojson }}\n"
                   + POLICY + "Guest question: {{ question }}\n", {"guest": {"kind": "static", "value": guest}, "question": QUESTION})
    assert [(f["variable"], f["line"]) for f in found] == [("guest.profile", 2)]
    # the variant is the order the prompt shows: profile's keys, not guest's (name, tier, profile)
    assert found[0]["variant"] == "keys of `guest.profile` inserted in reverse order (floor, pillow, newspaper → newspaper, pillow, floor)"
    assert found[0]["message"].startswith("`guest.profile` is serialized in insertion order")
    # the render parts at the first key (`{"floor"` vs `{"newspaper"`): character 59 = len('You are the
    # concierge of Fabrikam Hotels.\nGuest profile: {"'), where Qwen2.5 starts the token `floor`
    assert (found[0]["first_divergent_token"]["char_offset"], found[0]["first_divergent_token"]["base_text"]) == (59, "floor")


def test_the_unsorted_mapping_is_named_not_its_sorted_sibling(tmp_path, cli):
    settings = {"limits": {"nights": 14, "guests": 4, "rooms": 2}, "style": {"tone": "warm", "length": "short", "emoji": "never"}}
    template = ("You are the concierge of Fabrikam Hotels.\n"
                "Limits:{% for k, v in settings.limits | dictsort %} {{ k }}={{ v }}{% endfor %}\n"
                "Style: {{ settings.style | tojson }}\n" + POLICY + "Guest question: {{ question }}\n")
    found = _check(tmp_path, cli, template, {"settings": {"kind": "static", "value": settings}, "question": QUESTION})
    assert [(f["variable"], f["line"]) for f in found] == [("settings.style", 3)]
    assert "(tone, length, emoji → emoji, length, tone)" in found[0]["variant"]


def test_an_input_rendered_in_its_own_order_keeps_its_name(tmp_path, cli):
    meta = {"hotel": "Fabrikam Lisbon", "desk": "front", "shift": "night"}
    template = ("You are the concierge of Fabrikam Hotels.\n{% for k, v in meta.items() %}{{ k }}: {{ v }}\n{% endfor %}"
                + POLICY + "Guest question: {{ question }}\n")
    found = _check(tmp_path, cli, template, {"meta": {"kind": "static", "value": meta}, "question": QUESTION})
    assert [f["variable"] for f in found] == ["meta"]
    assert found[0]["variant"] == "keys inserted in reverse order (hotel, desk, shift → shift, desk, hotel)"


def test_the_fix_sorts_the_named_mapping(tmp_path, cli):
    guest = {"name": "Ana", "tier": "gold", "profile": {"floor": "high", "pillow": "firm", "newspaper": "none"}}
    _check(tmp_path, cli, "You are the concierge of Fabrikam Hotels.\nGuest profile: {{ guest.profile | tojson }}\n"
           + POLICY + "Guest question: {{ question }}\n", {"guest": {"kind": "static", "value": guest}, "question": QUESTION})
    r = cli("check", "--tokenizer", TOKENIZER, "--template-env", "transformers", "--no-cache", "--fix", "concierge.j2", cwd=tmp_path)
    assert "M201 fixed in concierge.j2" in r.out, r.out
    assert "{{ guest.profile | tojson(sort_keys=true) }}" in (tmp_path / "concierge.j2").read_text(encoding="utf-8")
