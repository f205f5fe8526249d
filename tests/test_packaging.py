"""The installed wheel ships what the linter reads at run time: rule files, schemas, the embedded tokenizer.

Checked in a subprocess outside the source tree, so it sees the installed package (CI installs
the project with pip before running the suite); skipped when the project is not installed.
"""

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # a real end-to-end run (docs/architecture.md, "Tests")

PROBE = """
import json, pathlib, promptlint
root = pathlib.Path(promptlint.__file__).parent
print(json.dumps({"root": str(root), "files": sorted(str(p.relative_to(root)) for p in root.rglob('*') if p.is_file())}))
"""


def test_installed_package_contains_runtime_data(tmp_path):
    r = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, capture_output=True, text=True, env={"PATH": ""})
    if r.returncode != 0:
        pytest.skip("promptlint is not installed in this environment")
    files = set(json.loads(r.stdout)["files"])
    for needed in (
        "_rules/M101.toml",
        "_rules/E001.toml",
        "schemas/config.schema.json",
        "schemas/samples.schema.json",
        "data/cl100k_base.tokenizer.json.gz",
        "data/name_words.toml",
        "data/cl100k_base.bpe",
        "fastbpe/form.py",
        "fastbpe/engine.py",
    ):
        assert needed in files, needed
