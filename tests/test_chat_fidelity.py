"""Fidelity: promptlint renders every corpus chat template x built-in scenario exactly as
transformers' `apply_chat_template(..., tokenize=False)` does, and encodes it to the same ids;
where transformers raises, promptlint raises an E-coded RenderError carrying the same message."""

from __future__ import annotations

import copy
from datetime import datetime

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never the hub: tokenizers are built from local files
transformers = pytest.importorskip("transformers")

from chat_helpers import model_dir, template_names  # noqa: E402
from hf_tokenizers import hf_tokenizer as shared_hf_tokenizer  # noqa: E402
from promptlint.chat.request import ChatProfile  # noqa: E402
from promptlint.chat.run import ChatTemplate  # noqa: E402
from promptlint.chat.scenarios import builtin_requests  # noqa: E402
from promptlint.chat.source import load_source  # noqa: E402
from promptlint.render import RenderError  # noqa: E402
from promptlint.tokenization.tokens import load, resolve  # noqa: E402

NOW = datetime(2025, 3, 14, 9, 26, 53)
# the installed transformers' major version decides the semantics under test (a 4.x CI job runs this file too)
MAJOR = int(transformers.__version__.split(".")[0])
SCENARIOS = list(builtin_requests())


class _FrozenDatetime(datetime):
    @classmethod
    def now(cls, tz=None):
        return NOW


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("chat-fidelity")


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch):
    from transformers.utils import chat_template_utils

    monkeypatch.setattr(chat_template_utils, "datetime", _FrozenDatetime)


_PL = {}


def hf_tokenizer(template, directory):
    """One transformers tokenizer per tokenizer file (per test process, shared with the other chat
    tests: tests/hf_tokenizers.py); the template's special tokens set on it."""
    return shared_hf_tokenizer(directory / "tokenizer.json", template, load_source(directory).templates["default"])


def promptlint_chat(template, directory):
    if template not in _PL:
        _PL[template] = (ChatTemplate(load_source(directory), ChatProfile(transformers=MAJOR)), load(resolve(str(directory))))
    return _PL[template]


def apply_hf(tok, request):
    return tok.apply_chat_template(
        copy.deepcopy(request.messages),
        tools=copy.deepcopy(request.tools),
        documents=copy.deepcopy(request.documents),
        add_generation_prompt=bool(request.add_generation_prompt),
        tokenize=False,
        **copy.deepcopy(request.kwargs),
    )


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("template", template_names())
def test_render_equals_transformers(template, scenario, workdir):
    directory = model_dir(template, workdir)
    tok = hf_tokenizer(template, directory)
    chat, pl_tok = promptlint_chat(template, directory)
    request = builtin_requests()[scenario]
    try:
        expected = apply_hf(tok, request)
    except Exception as e:  # the template refuses this conversation
        with pytest.raises(RenderError) as info:
            chat.render(request, NOW)
        assert info.value.code.startswith("E")
        assert str(e) in info.value.message
        return
    rendered, _, _ = chat.render(request, NOW)
    assert rendered.text == expected
    ids = pl_tok.encode(rendered.text, add_special_tokens=False).ids
    assert ids == tok.encode(expected, add_special_tokens=False)
