"""Families of the sixth round (issue 29's closing list of what the flow did not follow): each a general rule
with a multi-module project of its own and a clean counter-example.

1. The model named where a chat model is built (``ChatAnthropic(model="claude-3-5-haiku-latest")`` in a factory
   function, a module-level model imported elsewhere, ``self.llm = make_llm()`` in ``__init__``, the name held
   by a settings constant) is the model of the ``invoke`` made on it in another method or module: the
   per-model minimum of a cache breakpoint (M703) is that model's, not the provider's smallest.
"""

from __future__ import annotations

import json

from flow_harness import findings, write
from test_agent_call_shapes import POLICY, enc

# 1,300+ tokens in the pinned tokenizer: over claude-sonnet-4-5's 1,024-token minimum, under claude-3-5-haiku's 2,048
GUIDE = "\n\n".join([POLICY] * 3)
HAIKU_MINIMUM = 2048  # promptlint/data/hosted-cache-minimums.json, anthropic claude-3-5-haiku (vendor table)


def _line(tmp_path, name, needle):
    text = (tmp_path / name).read_text(encoding="utf-8")
    return next(i for i, t in enumerate(text.splitlines(), 1) if needle in t)


# ------------------------------------------------------------- 1. the model named by the constructor

def _constructed(model: str):
    return {
        "guide.py": f'''
            GUIDE = {json.dumps(GUIDE)}
            ''',
        "settings.py": f'''
            FAST_MODEL = "{model}"
            ''',
        "models.py": f'''
            from langchain_anthropic import ChatAnthropic

            from settings import FAST_MODEL


            def make_llm(temperature: float = 0.0):
                return ChatAnthropic(model=FAST_MODEL, temperature=temperature, max_tokens=512)


            triage_model = ChatAnthropic(model_name="{model}", max_tokens=64)
            ''',
        "support.py": '''
            from langchain_core.messages import HumanMessage, SystemMessage

            from guide import GUIDE
            from models import make_llm


            def lookup_order(order_id: str) -> str:
                """Look up an order by number."""
                return order_id


            class SupportAgent:
                def __init__(self) -> None:
                    self.llm = make_llm().bind_tools([lookup_order])

                def system(self) -> SystemMessage:
                    return SystemMessage(content=[
                        {"type": "text", "text": GUIDE, "cache_control": {"type": "ephemeral"}},
                    ])

                def answer(self, question: str) -> str:
                    return self.llm.invoke([self.system(), HumanMessage(question)]).content
            ''',
        "triage.py": '''
            from langchain_core.messages import HumanMessage, SystemMessage

            from guide import GUIDE
            from models import triage_model

            SYSTEM = SystemMessage(content=[{"type": "text", "text": GUIDE, "cache_control": {"type": "ephemeral"}}])


            async def label(ticket: str) -> str:
                reply = await triage_model.ainvoke([SYSTEM, HumanMessage(ticket)])
                return reply.content
            ''',
    }


def test_model_of_a_factory_built_chat_model_sets_the_breakpoint_minimum(tmp_path, qwen):
    write(tmp_path, _constructed("claude-3-5-haiku-latest"))
    report = findings(tmp_path, "support.py")
    assert report == [("M703", "support.py", _line(tmp_path, "support.py", '"cache_control"'))]


def test_model_of_an_imported_chat_model_sets_the_breakpoint_minimum(tmp_path, qwen):
    write(tmp_path, _constructed("claude-3-5-haiku-latest"))
    assert findings(tmp_path, "triage.py") == [("M703", "triage.py", _line(tmp_path, "triage.py", '"cache_control"'))]


def test_constructed_model_figures(tmp_path, qwen):
    """The prefix the breakpoint closes is the guide alone (the system block), counted by hand."""
    from promptlint.driver.lint import lint
    from promptlint.project.config import Settings
    from test_agent_call_shapes import TOKENIZER

    write(tmp_path, _constructed("claude-3-5-haiku-latest"))
    report = lint([str(tmp_path / "support.py")], Settings(tokenizer=str(TOKENIZER), root=tmp_path), use_cache=False)
    (f,) = report.findings
    n = len(enc(qwen, GUIDE))
    assert 1024 < n < HAIKU_MINIMUM
    assert f"closes a {n:,}-token prefix, below the {HAIKU_MINIMUM:,}-token minimum of `claude-3-5-haiku-latest`" in f.message


def test_constructed_model_over_its_minimum_is_clean(tmp_path):
    """The same project on claude-sonnet-4-5 (1,024 tokens): the breakpoint caches, nothing to report."""
    write(tmp_path, _constructed("claude-sonnet-4-5"))
    for name in ("support.py", "triage.py", "models.py"):
        assert findings(tmp_path, name) == []
