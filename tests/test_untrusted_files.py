"""Files a template pulls in, from an untrusted pull request (issue 15 items 1 and 4).

The project is `tmp_path/proj`; "outside" files sit in `tmp_path/outside` and hold a canary
string that must never appear in any output. Links, FIFOs and devices are real ones.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading

import pytest

from conftest import DATA, QWEN, REPO

CANARY = "canary-7f3a9c-must-not-leak"
TOKENIZER_ARGS = ("--tokenizer", QWEN)


@pytest.fixture
def proj(tmp_path, monkeypatch):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"TOKEN={CANARY}\n", encoding="utf-8")
    p = tmp_path / "proj"
    p.mkdir()
    (p / "promptlint.toml").write_text("", encoding="utf-8")
    monkeypatch.chdir(p)
    return p


def check(cli, *args, fmt="concise"):
    r = cli("check", "--no-cache", *TOKENIZER_ARGS, "--output-format", fmt, *args)
    assert "Traceback" not in r.out + r.err and "internal error" not in r.err, r.err
    assert CANARY not in r.out + r.err
    return r


def codes(r):
    out = []
    for line in r.out.splitlines():
        parts = line.split(": ", 2)
        if len(parts) >= 2 and parts[1][:1] in "EM" and parts[1][1:4].isdigit():
            path, row, _col = parts[0].rsplit(":", 2)
            out.append((os.path.basename(path), int(row), parts[1][:4]))
    return out


# ---------------------------------------------------------------- item 1: nothing read outside the project


def test_include_through_a_symlink_to_the_environment_is_refused(tmp_path):
    # `env.txt -> /proc/self/environ`, included and then used as an include name: the E002 message
    # for a missing template used to carry the whole CI environment, tokens included
    p = tmp_path / "proj"
    p.mkdir()
    (p / "promptlint.toml").write_text("", encoding="utf-8")
    os.symlink("/proc/self/environ", p / "env.txt")
    (p / "t.j2").write_text('{% set e %}{% include "env.txt" %}{% endset %}{% include e %}\n', encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(REPO), CI_SECRET=CANARY)
    r = subprocess.run(
        [sys.executable, "-m", "promptlint", "check", "--no-cache", *map(str, TOKENIZER_ARGS),
         "--output-format", "json", "--evidence", "t.j2"],
        cwd=p, env=env, capture_output=True, text=True, timeout=120,
    )
    assert CANARY not in r.stdout + r.stderr
    errors = json.loads(r.stdout)["errors"]
    assert [(e["code"], e["line"]) for e in errors] == [("E002", 1)], errors
    assert "`env.txt` resolves outside the project" in errors[0]["message"]


def test_symlinked_directory_out_of_the_project_is_refused_with_evidence_on(proj, cli):
    # `etc -> /etc` with --evidence used to put /etc/passwd into the JSON
    os.symlink(proj.parent / "outside", proj / "etc")
    (proj / "t.j2").write_text('Time {{ now }}\n{% include "etc/secret.txt" %}\n', encoding="utf-8")
    r = check(cli, "--evidence", "t.j2", fmt="json")
    errors = r.json()["errors"]
    assert [(e["code"], e["line"]) for e in errors] == [("E002", 2)], errors
    assert "refused, nothing was read" in errors[0]["message"]


def test_link_out_is_refused_for_import_and_extends_too(proj, cli):
    os.symlink(proj.parent / "outside" / "secret.txt", proj / "base.j2")
    (proj / "ext.j2").write_text('{% extends "base.j2" %}\n', encoding="utf-8")
    (proj / "imp.j2").write_text('a\n{% import "base.j2" as b %}\n', encoding="utf-8")
    (proj / "choice.j2").write_text('a\n{% include ["base.j2", "other.j2"] ignore missing %}\n', encoding="utf-8")
    r = check(cli, "ext.j2", "imp.j2", "choice.j2")
    got = codes(r)
    assert ("ext.j2", 1, "E002") in got and ("imp.j2", 2, "E002") in got, r.out
    assert ("choice.j2", 2, "E002") in got, r.out  # `ignore missing` does not skip a refusal
    assert r.out.count("resolves outside the project") == 3


def test_links_that_stay_inside_the_project_still_work(proj, cli):
    (proj / "common").mkdir()
    (proj / "common" / "rules.j2").write_text("Answer politely.\n", encoding="utf-8")
    (proj / "prompts").mkdir()
    os.symlink("../common/rules.j2", proj / "prompts" / "rules.j2")
    (proj / "prompts" / "t.j2").write_text('{% include "rules.j2" %}Q: {{ question }}\n', encoding="utf-8")
    r = check(cli, "prompts/t.j2")
    assert r.code == 0 and not codes(r), r.out


def test_a_template_outside_the_project_keeps_its_own_includes(proj, tmp_path, cli):
    # a file the user points at works where it is, with the includes beside it
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "part.j2").write_text("Shared rules of the shop. " * 40 + "\n", encoding="utf-8")
    (elsewhere / "t.j2").write_text('Time {{ now }}\n{% include "part.j2" %}Q: {{ question }}\n', encoding="utf-8")
    r = check(cli, elsewhere / "t.j2")
    assert codes(r) == [("t.j2", 1, "M101")], r.out


def test_fifo_and_device_includes_are_refused_without_reading(proj, tmp_path, cli):
    os.mkfifo(proj / "pipe.j2")
    os.mkfifo(tmp_path / "outside" / "pipe")
    os.symlink(tmp_path / "outside" / "pipe", proj / "pipe_link.j2")
    os.symlink("/dev/zero", proj / "zero.j2")
    for name in ("pipe.j2", "pipe_link.j2", "zero.j2"):
        (proj / f"use_{name}").write_text(f'a\n{{% include "{name}" %}}\n', encoding="utf-8")
    r = check(cli, "use_pipe.j2", "use_pipe_link.j2", "use_zero.j2")
    got = codes(r)
    assert ("use_pipe.j2", 2, "E005") in got and "`pipe.j2`: not a regular file (a FIFO)" in r.out, r.out
    assert ("use_pipe_link.j2", 2, "E002") in got and ("use_zero.j2", 2, "E002") in got, r.out
    # with the cache on (twice: write, then validate): its dependency check never opens them either
    for _ in range(2):
        again = cli("check", *TOKENIZER_ARGS, "--output-format", "concise", "use_pipe.j2", "use_pipe_link.j2", "use_zero.j2")
        assert codes(again) == got, again.out


def test_a_fifo_named_like_a_chat_template_is_not_opened_for_sniffing(proj):
    # deciding whether a `.jinja` is a chat template read its head with a blocking open()
    from promptlint.chat.source import handles

    os.mkfifo(proj / "x.jinja")
    answer = []
    t = threading.Thread(target=lambda: answer.append(handles(proj / "x.jinja")), daemon=True)
    t.start()
    t.join(30)
    assert answer == [False]


def _model_dir(root, chat_template, extra_files=()):
    d = root / "model"
    d.mkdir()
    shutil.copy(QWEN, d / "tokenizer.json")
    (d / "tokenizer_config.json").write_text(json.dumps({"eos_token": "<|im_end|>", "chat_template": chat_template}), encoding="utf-8")
    for name, target in extra_files:
        os.symlink(target, d / name)
    return d


def test_chat_templates_get_no_loader(proj, cli):
    # transformers renders a chat template from a string: an include is an error there. It used to
    # load `env.txt` (a link out) and raise_exception() put its text in the message.
    template = (
        '{% set e %}{% include "env.txt" %}{% endset %}{{ raise_exception(e) }}'
        "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
    )
    d = _model_dir(proj, template, [("env.txt", proj.parent / "outside" / "secret.txt")])
    (d / "plain.txt").write_text("a file inside the model directory\n", encoding="utf-8")
    r = check(cli, d)
    assert ("tokenizer_config.json", 1, "E002") in codes(r), r.out
    assert "chat templates cannot include, import or extend other templates (`env.txt`)" in r.out
    (d / "tokenizer_config.json").write_text(
        json.dumps({"chat_template": '{% include "plain.txt" %}{% for m in messages %}{{ m.content }}{% endfor %}'}),
        encoding="utf-8",
    )
    r = check(cli, d)
    assert "cannot include" in r.out and "a file inside the model directory" not in r.out, r.out


def test_model_directory_files_linked_out_are_refused(proj, cli):
    d = _model_dir(proj, None, [("chat_template.jinja", proj.parent / "outside" / "secret.txt")])
    r = check(cli, d)
    assert ("chat_template.jinja", 1, "E002") in codes(r), r.out
    assert "resolves outside its directory" in r.out


def test_hugging_face_hub_snapshot_layout_works(proj, tmp_path, cli):
    # models--org--name/snapshots/<rev>/* are symlinks into ../../blobs/: a user-given model directory
    template = (DATA / "chat_templates" / "Qwen-Qwen2.5-7B-Instruct.jinja").read_text(encoding="utf-8")
    config = json.dumps({"eos_token": "<|im_end|>", "bos_token": None})
    hub = tmp_path / "hub" / "models--Qwen--Qwen2.5-7B-Instruct"
    (hub / "blobs").mkdir(parents=True)
    snapshot = hub / "snapshots" / "a09a3545"
    snapshot.mkdir(parents=True)
    plain = tmp_path / "plain_model"
    plain.mkdir()
    for name, data in (("tokenizer.json", QWEN.read_bytes()), ("tokenizer_config.json", config.encode()),
                       ("chat_template.jinja", template.encode())):
        blob = hub / "blobs" / f"blob-{name}"
        blob.write_bytes(data)
        os.symlink(f"../../blobs/blob-{name}", snapshot / name)
        (plain / name).write_bytes(data)
    via_hub = cli("check", "--no-cache", "--output-format", "json", snapshot)
    via_copy = cli("check", "--no-cache", "--output-format", "json", plain)
    assert via_hub.code == via_copy.code and via_hub.code in (0, 1), via_hub.err
    strip = lambda fs: [(f["code"], f["line"], f["column"], f.get("first_divergent_token")) for f in fs]  # noqa: E731
    assert strip(via_hub.json()["findings"]) == strip(via_copy.json()["findings"])
    assert via_hub.json()["errors"] == [] == via_copy.json()["errors"]


LONG = '"first line\\nsecond line " ~ "x" * 5000'
ECHOES = [
    ("t.jinja", "{{ raise_exception(" + LONG + ") }}{% for m in messages %}{{ m.role }}{% endfor %}", "E002"),
    ("undefined.j2", "{{ {}[" + LONG + "] }}", "E004"),
    ("include.j2", "{% include " + LONG + " %}", "E002"),
    ("attr.j2", '{{ "s"|attr("__" ~ ' + LONG + ") }}", "E007"),
    ("tag.j2", "{% first_line" + "x" * 5000 + " %}", "E001"),
]


@pytest.mark.parametrize("name,text,code", ECHOES, ids=[e[0] for e in ECHOES])
def test_template_controlled_error_text_is_one_bounded_line(proj, cli, name, text, code):
    (proj / name).write_text(text, encoding="utf-8")
    r = check(cli, name)
    lines = [line for line in r.out.splitlines() if f" {code} " in line]
    # computed text is described by its length and hash (render/shown.py); a syntax error quotes the source
    assert len(lines) == 1 and ("first" if code == "E001" else "a computed") in lines[0], r.out
    assert "second" not in lines[0]
    assert len(lines[0]) < 600, len(lines[0])


# ---------------------------------------------------------------- item 4: caps count what is pulled in


def test_included_files_count_toward_the_size_cap_together(proj, cli):
    # each file under 2,000,000 bytes, together over it: 1.2 MB of comment in each (cheap to parse)
    (proj / "big_part.j2").write_text("{# " + "x" * 1_200_000 + " #}ok\n", encoding="utf-8")
    (proj / "t.j2").write_text("{# " + "y" * 1_200_000 + " #}\nHello {{ q }}\n{% include 'big_part.j2' %}\n", encoding="utf-8")
    (proj / "alone.j2").write_text("Hello {{ q }}\n{% include 'big_part.j2' %}\n", encoding="utf-8")
    r = check(cli, "t.j2", "alone.j2")
    got = codes(r)
    assert ("t.j2", 3, "E005") in got, r.out
    assert "past 2,000,000 bytes together" in r.out
    assert not [f for f in got if f[0] == "alone.j2" and f[2].startswith("E")], r.out


def test_an_include_over_the_size_cap_alone_is_refused(proj, cli):
    (proj / "huge.j2").write_text("{# " + "x" * 2_100_000 + " #}\n", encoding="utf-8")
    (proj / "t.j2").write_text("Hello\n{% include 'huge.j2' %}\n", encoding="utf-8")
    r = check(cli, "t.j2")
    assert ("t.j2", 2, "E005") in codes(r), r.out


def test_included_files_count_toward_the_token_cap_together(proj, cli, small_template_caps):
    # about 1,000 Jinja tokens each (a constant list of 500 items: two tokens per item), so each
    # alone is far under the cap (2,000 here, a hundredth of the product's) and together they are over it
    part = "{% set a = [" + "1," * 500 + "] %}\n"
    (proj / "part.j2").write_text(part, encoding="utf-8")
    (proj / "t.j2").write_text(part.replace("set a", "set b") + "Hello\n{% include 'part.j2' %}\n", encoding="utf-8")
    (proj / "promptlint.toml").write_text("render-timeout = 300\n", encoding="utf-8")  # only the cap may stop it
    r = check(cli, "t.j2")
    assert ("t.j2", 3, "E006") in codes(r) and "more than 2,000 Jinja tokens together" in r.out, r.out
