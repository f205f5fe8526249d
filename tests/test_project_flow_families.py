"""The families the second unseen set (test_project_flow_unseen.py) missed, closed with variants:

- part of a volatile value is still volatile (a slice or an index of an id, a stamp);
- an object of a class of the linted files rendered as text (``str(obj)``, ``f"{obj}"``, ``"{}".format(obj)``)
  is what its ``__str__`` (or ``__format__``) returns;
- a dataclass/pydantic field's default written through ``field(default=...)``, ``field(default_factory=...)``
  (a lambda or a callable such as ``datetime.now``) or ``Field(default_factory=...)``.

Each variant is a two-module project with one hazard, expected at the line that makes it (M101); each
family has a clean counterpart.
"""

from __future__ import annotations

import pytest

from test_project_flow import PS, check, project, where
from test_agent_call_shapes import line_of

SENDER = f'''
    import anthropic

    from parts import system_text

    client = anthropic.Anthropic()


    def ask(question):
        return client.messages.create(model="claude-sonnet-4-5", max_tokens=200, system=system_text() + {PS},
                                      messages=[{{"role": "user", "content": question}}])
    '''

SLICES = {
    "hex slice": ("import uuid\n\n\ndef system_text():\n    return 'Session ' + uuid.uuid4().hex[:8] + '. '\n", "uuid.uuid4()"),
    "str slice": ("import uuid\n\n\ndef system_text():\n    return f'Trace {str(uuid.uuid4())[:8]}. '\n", "uuid.uuid4()"),
    "isoformat cut to minutes": ("from datetime import datetime\n\n\ndef system_text():\n"
                                 "    stamp = datetime.now().isoformat()[:16]\n    return f'At {stamp}. '\n", "datetime.now()"),
}

RENDERED = {
    "str(obj)": "str(Header())",
    "f-string": 'f"{Header()}"',
    "str.format": '"{}".format(Header())',
}

DEFAULTS = {
    "default_factory=lambda": "stamp: str = field(default_factory=lambda: datetime.now().isoformat())",
    "default_factory=callable": "stamp: datetime = field(default_factory=datetime.now)",
    "field(default=...)": "stamp: str = field(default=str(datetime.now()))",
    "pydantic Field": "stamp: str = Field(default_factory=lambda: datetime.now().strftime('%H:%M:%S'))",
}


@pytest.mark.parametrize("style", sorted(SLICES))
def test_part_of_a_volatile_value_is_volatile(tmp_path, style):
    source, needle = SLICES[style]
    src = project(tmp_path, {"parts.py": source, "client.py": SENDER})
    assert where(check(tmp_path, "client.py")) == [("M101", "parts.py", line_of(src["parts.py"], needle))]


@pytest.mark.parametrize("style", sorted(RENDERED))
def test_an_object_rendered_as_text_is_its_str(tmp_path, style):
    src = project(tmp_path, {"parts.py": f'''
        import time


        class Header:
            def __str__(self):
                return "Clock " + time.strftime("%H:%M:%S") + ". "


        def system_text():
            return {RENDERED[style]}
        ''', "client.py": SENDER})
    assert where(check(tmp_path, "client.py")) == [("M101", "parts.py", line_of(src["parts.py"], "time.strftime"))]


def test_an_object_with_a_static_str_is_clean(tmp_path):
    project(tmp_path, {"parts.py": '''
        class Header:
            def __str__(self):
                return "Nordwind support. "


        def system_text():
            return str(Header())
        ''', "client.py": SENDER})
    assert check(tmp_path, "client.py") == []


@pytest.mark.parametrize("style", sorted(DEFAULTS))
def test_a_field_default_made_per_object(tmp_path, style):
    src = project(tmp_path, {"parts.py": f'''
        from dataclasses import dataclass, field
        from datetime import datetime

        from pydantic import BaseModel, Field


        @dataclass
        class Header:
            team: str
            {DEFAULTS[style]}


        def system_text():
            h = Header("Nordwind support")
            return f"{{h.stamp}} {{h.team}}. "
        ''', "client.py": SENDER})
    assert where(check(tmp_path, "client.py")) == [("M101", "parts.py", line_of(src["parts.py"], "stamp: "))]


def test_a_constant_field_default_is_clean(tmp_path):
    project(tmp_path, {"parts.py": '''
        from dataclasses import dataclass, field


        @dataclass
        class Header:
            team: str
            version: str = field(default="2024-06")


        def system_text():
            h = Header("Nordwind support")
            return f"{h.team} (policy {h.version}). "
        ''', "client.py": SENDER})
    assert check(tmp_path, "client.py") == []
