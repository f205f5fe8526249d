"""Templates stored in tokenizer_config.json: annotations point at the JSON file's own line and
column (issue 15 item 20), or at chat_template.jinja when it holds the same template; and the
summary lines the reporters print (item 22)."""

from __future__ import annotations

import json
import shutil

from conftest import QWEN

SHARED = "You are the \"Acme\" support assistant – answer politely. " * 30
TEMPLATE = (
    "{{- bos_token }}<|im_start|>system\n"
    "Policies apply.\n"
    "Heute – \"today\" is {{ strftime_now('%Y-%m-%d') }}.\n"
    + SHARED + "<|im_end|>\n"
    "{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def model_dir(tmp_path, jinja_beside: bool = False):
    d = tmp_path / "model"
    d.mkdir()
    shutil.copy(QWEN, d / "tokenizer.json")
    config = {"tokenizer_class": "Qwen2Tokenizer", "bos_token": "<|endoftext|>", "eos_token": "<|im_end|>",
              "chat_template": TEMPLATE}
    (d / "tokenizer_config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")  # ASCII escapes: \u2013
    if jinja_beside:
        (d / "chat_template.jinja").write_text(TEMPLATE, encoding="utf-8")
    return d


def expected_json_position(json_text: str, template_line: int, template_column: int):
    """Line and column of a template character in the JSON text, computed from json.dumps of the
    template's prefix (how many raw characters the escaped prefix takes), not from promptlint."""
    offset = sum(len(l) + 1 for l in TEMPLATE.split("\n")[: template_line - 1]) + template_column - 1
    lines = json_text.split("\n")
    line_no = next(i for i, l in enumerate(lines, 1) if l.lstrip().startswith('"chat_template": "'))
    quote = lines[line_no - 1].index('"chat_template": "') + len('"chat_template": ')
    raw_prefix = len(json.dumps(TEMPLATE[:offset])) - 2
    return line_no, quote + 1 + raw_prefix + 1


def test_json_position_of_a_finding_in_a_stored_template(tmp_path, cli):
    d = model_dir(tmp_path)
    r = cli("check", "--no-cache", "--output-format", "json", "--select", "M101", "model", cwd=tmp_path)
    [f] = r.json()["findings"]
    assert (f["path"], f["line"], f["column"]) == ("model/tokenizer_config.json", 3, 23)  # within the template
    text = (d / "tokenizer_config.json").read_text(encoding="utf-8")
    line, column = expected_json_position(text, 3, 23)
    assert (f["stored_at"]["key"], f["stored_at"]["line"], f["stored_at"]["column"]) == ("chat_template", line, column)
    assert text.split("\n")[line - 1][column - 1 :].startswith("strftime_now")
    assert line <= len(text.split("\n"))  # inside the file, unlike the template's own line 3... of a 1-line string

    gh = cli("check", "--no-cache", "--output-format", "github", "--select", "M101", "model", cwd=tmp_path).out
    assert f"line={line},col={column}," in gh
    assert "(line 3, column 23 of the template stored as `chat_template`)" in gh
    sarif = cli("check", "--no-cache", "--output-format", "sarif", "--select", "M101", "model", cwd=tmp_path).json()
    region = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (line, column)
    full = cli("check", "--no-cache", "--select", "M101", "model", cwd=tmp_path).out
    assert "3 | Heute – \"today\" is {{ strftime_now('%Y-%m-%d') }}." in full  # the template's line, not the JSON's


def test_the_same_template_in_chat_template_jinja_takes_the_annotation(tmp_path, cli):
    model_dir(tmp_path, jinja_beside=True)
    r = cli("check", "--no-cache", "--output-format", "json", "--select", "M101", "model/tokenizer_config.json", cwd=tmp_path)
    [f] = r.json()["findings"]
    assert (f["path"], f["line"], f["column"]) == ("model/chat_template.jinja", 3, 23)
    assert "stored_at" not in f
    assert not any("stored as" in n for n in f.get("notes", []))


def test_rule_all_prints_each_first_sentence_whole(cli):
    out = cli("rule", "--all").out
    pl100 = next(l for l in out.splitlines() if l.startswith("PL100"))
    assert pl100.endswith("A `promptlint: ignore[...]` or `disable[...]` comment suppresses nothing: no finding of the "
                          "codes it names, an unknown code, or an `enable` without its `disable`")


def test_the_embedded_tokenizer_is_named_once(tmp_path, cli):
    (tmp_path / "a.txt").write_text("hello world\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("hello there\n", encoding="utf-8")
    err = cli("diff", "a.txt", "b.txt", cwd=tmp_path).err
    assert "the embedded cl100k_base tokenizer" in err and "(embedded) tokenizer" not in err


def test_a_stored_template_is_mapped_into_its_json_once_for_all_its_findings(tmp_path, cli, monkeypatch):
    """Every finding in a template stored in JSON maps through the same character offsets: they are
    worked out once per template (a long template's scan is then not repeated per finding)."""
    from promptlint.base import json_locate

    d = model_dir(tmp_path)
    config = json.loads((d / "tokenizer_config.json").read_text(encoding="utf-8"))
    # a second hazard after the clock: the last message marked, which the next turn renders otherwise (M204)
    config["chat_template"] = TEMPLATE.replace("{{ m.content }}", "{{ m.content }}{% if loop.last %} (latest){% endif %}")
    (d / "tokenizer_config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    calls = []
    original = json_locate.char_offsets

    def counted(text, quote):
        calls.append(quote)
        return original(text, quote)

    monkeypatch.setattr(json_locate, "char_offsets", counted)
    r = cli("check", "--no-cache", "--output-format", "json", "model", cwd=tmp_path)
    stored = [f for f in r.json()["findings"] if "stored_at" in f]
    assert len(stored) >= 2, [f["code"] for f in r.json()["findings"]]
    assert len(calls) == 1
