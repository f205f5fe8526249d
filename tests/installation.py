"""A real installation of promptlint for tests that run it isolated (``python -I``), as the Action
and the daemon do: ``-I`` ignores PYTHONPATH, so the checkout under test is put on the path the
way an editable install does, with a ``.pth`` file in a virtual environment of its own. No fixtures
here; no network (``venv --without-pip``; pip, jinja2 and tokenizers come from the test's own
environment through the same ``.pth`` file)."""

from __future__ import annotations

import site
import subprocess
import sys
from pathlib import Path
from typing import Sequence

REPO = Path(__file__).parent.parent


def make(dest: Path, source: Path = REPO, before: Sequence[Path] = ()) -> Path:
    """A virtual environment at ``dest`` importing promptlint from ``source`` (``before``: directories
    searched even earlier, e.g. a dependency's copy); returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(dest)], check=True, capture_output=True, timeout=120)
    [site_packages] = dest.glob("lib/python*/site-packages")
    ours = [p for p in site.getsitepackages() if Path(p).is_dir()]
    lines = [str(p) for p in before] + [str(source)] + ours
    (site_packages / "promptlint-under-test.pth").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dest / "bin" / "python"
