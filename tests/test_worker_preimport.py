"""A cold run that forks workers imports what their analyses import once, in the driver, before the
fork (analyzers.preimport: each analyzer's WORKER_IMPORTS): the workers do not import jinja2 and
the analysis modules again, and share their pages."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from conftest import QWEN, REPO

SCRIPT = """
import sys
from promptlint.driver import parallel
real = parallel.run
def run(units, analyse_unit, workers):
    sys.stderr.write('AT_FORK ' + ' '.join(sorted(sys.modules)) + '\\n')
    yield from real(units, analyse_unit, workers)
parallel.run = run
from promptlint.cli import main
sys.exit(main(['check', '--no-cache', '--jobs', '2', '--output-format', 'concise']))
"""


def test_the_driver_imports_the_analysis_modules_before_forking(tmp_path):
    (tmp_path / "tok").mkdir()
    shutil.copy(QWEN, tmp_path / "tok" / "tokenizer.json")
    (tmp_path / "promptlint.toml").write_text('tokenizer = "tok/tokenizer.json"\n', encoding="utf-8")
    for i in range(4):  # four files, 24 kB: enough to fork (parallel.MIN_FILES, MIN_BYTES)
        (tmp_path / f"t{i}.j2").write_text(f"Time {{{{ now }}}}\nYou are assistant {i}.\n" + "Cite the refund policy. " * 250,
                                           encoding="utf-8")
    r = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tmp_path, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert r.returncode == 1 and r.stdout.count("M101") == 4, r.stdout + r.stderr
    at_fork = set(r.stderr.split("AT_FORK ", 1)[1].split("\n", 1)[0].split())
    assert {"jinja2", "promptlint.render.environments", "promptlint.analysis.template_run", "promptlint.checks"} <= at_fork
    assert "promptlint.chat.run" not in at_fork  # no chat template among the files: not the chat analyzer's imports
