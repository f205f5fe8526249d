"""The loader behind `{% include %}`, `{% import %}` and `{% extends %}` in application templates.

Jinja's ``FileSystemLoader`` follows symlinks and opens whatever the name points at. This one
(a ``jinja2.BaseLoader``) looks a name up in the same search paths, in the same order, but:

- a file whose real path leaves the allowed roots (the project root; the template's own
  directory when the user pointed at a template outside the project) is refused (E002);
- only regular files are read, non-blocking and bounded (``promptlint.render.files``);
- every file is read once per load, and the template and everything it pulls in share one
  byte budget (the 2 MB file cap counted together);
- how every name resolved is recorded, misses included: each candidate path it looked at, so
  the cache can key on the resolution (a file that appears, a nearer file that shadows).

Chat templates get no loader at all (transformers renders them from a string).
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from jinja2 import BaseLoader
from jinja2.exceptions import TemplateError, TemplateNotFound
from jinja2.loaders import split_template_path

from promptlint.render.files import Budget, FileRefused, decode_template, read_confined


UNRESOLVED_INCLUDE = "<promptlint: unresolved include>"  # an include input with no file: rendered as empty


class IncludeRefused(TemplateError):
    """A name the loader will not load (outside the roots, device, too large, ...): an E-finding.

    Not a ``TemplateNotFound``: `ignore missing` and a list of choices must not skip it silently.
    """

    def __init__(self, code: str, message: str):
        super().__init__(message)  # TemplateError.message returns it
        self.code = code


class ConfinedLoader(BaseLoader):
    def __init__(
        self,
        search_paths: Sequence,
        roots: Sequence[str],
        budget: Budget,
        overrides: Optional[Dict[str, str]] = None,
    ):
        self.search_paths = [os.fspath(p) for p in search_paths]
        self.roots = tuple(roots)
        self.budget = budget
        self.overrides = dict(overrides or {})
        self._read: Dict[str, Tuple[str, str]] = {}  # name -> (source, filename): one read per name
        self.looked_at: List[str] = []  # every candidate path, hit or miss, in lookup order

    def get_source(self, environment, template: str) -> Tuple[str, Optional[str], Callable[[], bool]]:
        if template in self.overrides:
            return self.overrides[template], None, lambda: True
        known = self._read.get(template)
        if known is None:
            known = self._read[template] = self._load(template, environment)
        return known[0], known[1], lambda: True  # a load never sees a file change mid-run

    def _load(self, template: str, environment=None) -> Tuple[str, str]:
        from promptlint.render.shown import shown

        pieces = split_template_path(template)  # `..` is refused (TemplateNotFound)
        what = shown(template, environment, "`{}`")  # a computed name by length and hash
        for searchpath in self.search_paths:
            # posixpath, as Jinja: no "drive:" or UNC segment can leave the search path
            candidate = os.path.normpath(posixpath.join(searchpath, *pieces))
            if candidate not in self.looked_at:
                self.looked_at.append(candidate)
            try:
                st = os.stat(candidate)
            except OSError as e:
                if e.errno == errno.ELOOP:  # a symlink loop is not a miss
                    raise IncludeRefused("E005", f"{what} is a symbolic link loop") from None
                continue  # missing (or a dangling link): the next search path, as Jinja does
            if stat.S_ISDIR(st.st_mode):
                continue
            try:
                data = read_confined(
                    candidate,
                    self.roots,
                    self.budget.left,
                    what,
                    f"{what} takes the template and the files it pulls in past {self.budget.total:,} bytes "
                    "together; split or shorten them",
                )
                text = decode_template(data, what)
            except FileRefused as e:
                raise IncludeRefused(e.code, e.message) from None
            self.budget.charge(len(data))
            return text, candidate
        raise TemplateNotFound(template)
