"""File names and text a pull request controls that used to cost a file (an "internal error") or the
whole run (exit 2 blaming the tokenizer): red-team run after issue 15. Each case has a normal file
beside it that must still be reported."""

from __future__ import annotations

import json
import os

import pytest

from conftest import QWEN

# Shared instructions after the clock (more than a block of tokens): M101 with the embedded tokenizer.
POLICY = ("You are the Acme support assistant. Answer questions about orders, shipping and returns in a few "
          "friendly sentences, and cite the policy section you rely on.\n")
TEMPLATE = "Hello {{ name }} at {{ now }}\n" + POLICY


def _project(tmp_path, monkeypatch):
    p = tmp_path / "proj"
    p.mkdir()
    (p / "promptlint.toml").write_text("", encoding="utf-8")
    (p / "ok.j2").write_text(TEMPLATE, encoding="utf-8")
    monkeypatch.chdir(p)
    return p


def _json(cli, *args):
    r = cli("check", "--output-format", "json", *args)
    assert "Traceback" not in r.out + r.err and "internal error" not in r.out + r.err, r.out + r.err
    assert r.code == 1, (r.code, r.err)
    data = json.loads(r.out)
    return sorted((f["path"], f["code"]) for f in data["findings"] + data["errors"]), data


def test_a_file_name_with_an_undecodable_byte_is_checked_with_the_cache_on(tmp_path, monkeypatch, cli):
    # the cache wrote its entry as UTF-8 text: the surrogate-escaped name raised UnicodeEncodeError,
    # an "internal error" on every first run (a fresh CI cache), the file's findings lost
    p = _project(tmp_path, monkeypatch)
    with open(os.path.join(os.fsencode(p), b"odd\xff.j2"), "wb") as f:
        f.write(TEMPLATE.encode())
    for _ in range(2):  # written, then read back from the cache
        found, _data = _json(cli)
        assert found == [("odd\udcff.j2", "M101"), ("ok.j2", "M101")]


def test_a_template_name_too_long_for_its_sidecar_is_checked(tmp_path, monkeypatch, cli):
    # `<stem>.samples.toml` is longer than the 255-byte name: Path.is_file() raised ENAMETOOLONG
    p = _project(tmp_path, monkeypatch)
    long_name = "t" * 250 + ".j2"
    (p / long_name).write_text(TEMPLATE, encoding="utf-8")
    found, _data = _json(cli, "--no-cache")
    assert found == [("ok.j2", "M101"), (long_name, "M101")]
    r = cli("samples", "--write", long_name)
    assert r.code == 2 and "Traceback" not in r.err and "internal error" not in r.err, r.err
    assert r.err.startswith("promptlint: error: ") and "cannot write (File name too long)" in r.err


@pytest.mark.parametrize(
    "files, culprit",
    [
        # a `\u` escape in a samples JSON string
        ({"t.j2": TEMPLATE, "t.samples.json": '{"variables": {"name": "x\\udcffy"}}'}, "t.j2"),
        # the template builds one itself
        ({"t.j2": 'Hello {{ name }} {{ "%c"|format(55296) }}\n'}, "t.j2"),
    ],
)
def test_a_prompt_with_a_lone_surrogate_is_an_e_finding_at_its_file(tmp_path, monkeypatch, cli, files, culprit):
    # it stopped the whole run: "the tokenizer cannot encode the prompt ...; check that it is the
    # model's complete tokenizer.json", exit 2, ok.j2 never reported
    p = _project(tmp_path, monkeypatch)
    for name, text in files.items():
        (p / name).write_text(text, encoding="utf-8")
    found, data = _json(cli, "--no-cache")
    assert (culprit, "E002") in found and ("ok.j2", "M101") in found, found
    message = next(f["message"] for f in data["errors"] if f["path"] == culprit)
    assert "not valid Unicode text (a lone surrogate" in message


def test_a_chat_template_with_a_lone_surrogate_is_an_e_finding_at_its_directory(tmp_path, monkeypatch, cli):
    p = _project(tmp_path, monkeypatch)
    model = p / "model"
    model.mkdir()
    (model / "tokenizer.json").write_bytes(QWEN.read_bytes())
    (model / "tokenizer_config.json").write_text(
        '{"eos_token": "<|im_end|>", "chat_template": "{% for m in messages %}\\ud800{{ m.content }}{% endfor %}"}',
        encoding="utf-8",
    )
    found, _data = _json(cli, "--no-cache", "model", "ok.j2")
    assert found == [("model", "E002"), ("ok.j2", "M101")], found


def test_every_message_is_one_bounded_line_whatever_it_quotes(tmp_path, monkeypatch, cli):
    # 10,000 named chat templates (E002 listed them all: a 69 KB line; a name may hold a line
    # break), and a 200,000-character variable name (M101 quoted it whole)
    p = _project(tmp_path, monkeypatch)
    model = p / "model"
    model.mkdir()
    (model / "tokenizer.json").write_bytes(QWEN.read_bytes())
    names = ["a\n::error::injected"] + [f"t{i}" for i in range(10_000)]
    (model / "tokenizer_config.json").write_text(
        json.dumps({"chat_template": [{"name": n, "template": "{{ messages }}"} for n in names]}), encoding="utf-8")
    long_name = "now_" + "x" * 200_000
    (p / "long.j2").write_text("Hello {{ name }} at {{ %s }}\n" % long_name + POLICY, encoding="utf-8")
    found, data = _json(cli, "--no-cache", "model", "long.j2", "ok.j2")
    assert found == [("long.j2", "M101"), ("model/tokenizer_config.json", "E002"), ("ok.j2", "M101")], found
    for f in data["findings"] + data["errors"]:
        assert len(f["message"]) <= 1001 and "\n" not in f["message"], f["message"][:300]
    r = cli("check", "--no-cache", "--output-format", "concise", "model", "long.j2")
    assert all(len(line) < 1200 for line in r.out.splitlines()), max(map(len, r.out.splitlines()))
    assert not any(line.startswith("::") for line in r.out.splitlines())
