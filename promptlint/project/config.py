"""Settings: `[tool.promptlint]` in the nearest pyproject.toml, or promptlint.toml.

Discovery walks up from the first path given (or the current directory); the
closest file that configures promptlint wins, and a pyproject.toml without a
`[tool.promptlint]` table is skipped, as ruff does. Paths in the file are relative
to the file. Command-line options win over the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Tuple

from promptlint.base.paths import safe_resolve
from promptlint.project.config_file import ConfigError, find_config, read_config_file  # noqa: F401 - re-exported


@dataclass(frozen=True)
class Settings:
    """The configuration a run uses: the project's file, then the command line over it."""

    tokenizer: Optional[str] = None  # resolved absolute path, or None for the embedded default
    tokenizer_sha256: Optional[str] = None
    engine: str = "vllm"
    block_size: Optional[int] = None  # None: the engine's default
    templates: Tuple[str, ...] = ()
    exclude: Tuple[str, ...] = ()
    select: Tuple[str, ...] = ()  # empty: all rules
    ignore: Tuple[str, ...] = ()
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    template_env: str = "jinja2"
    # chat templates: how messages reach the template (transformers | vllm | llamacpp; llamacpp is the
    # default when engine = "llamacpp" and no frontend is configured)
    frontend: str = "transformers"
    transformers: int = 5  # chat templates: transformers major version whose semantics apply (4 | 5)
    serving: str = "chat"  # chat: add_special_tokens=False; completions: a pre-rendered prompt, True
    render_timeout: float = 2.0
    max_output: int = 1_000_000
    max_recursion: int = 200  # template nesting levels per render (macros calling themselves)
    # per file: the whole analysis (every render, tokenization and check) — a render under max-output can
    # still be tokenized dozens of times; a directory's unvetted tokenizer is killed at this deadline
    analysis_timeout: float = 60.0
    max_encoded_tokens: int = 2_000_000
    jinja: Tuple[Tuple[str, Tuple[Tuple[str, str], ...]], ...] = ()  # [jinja]: role -> ((name, stub kind), ...)
    cache_minimums: Optional[str] = None  # resolved path of a JSON file merged over the hosted-API minimums table
    # tokenizers: every deployed model, (name, resolved path, sha256 pin, block size, engine); empty: one tokenizer
    tokenizers: Tuple[Tuple[str, str, Optional[str], Optional[int], Optional[str]], ...] = ()
    cost: Optional[Any] = None  # [cost]: a promptlint.arithmetic.cost.CostModel (applied after linting: not in the cache key)
    untrusted: bool = False  # read only files git tracks (commands/options.py): part of the cache key
    config_path: Optional[Path] = None  # the file the settings came from
    root: Path = field(default_factory=Path.cwd)  # the config file's directory (or the base; bare Settings(): cwd)
    # the run's base directory: the caller's working directory, absolute (a daemon serves other
    # directories than its own); typed paths are opened against it and findings named relative to it
    base: Path = field(default_factory=Path.cwd)  # bare Settings() (a library caller): this process's

    def jinja_stubs(self) -> Dict[str, Dict[str, str]]:
        """``[tool.promptlint.jinja]`` as role -> name -> stub kind (promptlint.render.stubs)."""
        return {role: dict(names) for role, names in self.jinja}

    def cache_key(self) -> Tuple:
        return tuple((f.name, getattr(self, f.name)) for f in fields(self) if f.name not in ("config_path", "cost"))


def settings_from(path: Path, data: Dict[str, Any], use_cache: bool = False, base: Optional[Path] = None) -> Settings:
    """Settings of the configuration file ``path`` (as typed: relative to ``base``, when given)."""
    from promptlint.base.paths import based

    root = (based(path, base) if base is not None else path).parent.resolve()
    _validate(path, data, use_cache, root)
    _check_values(path, data)
    kw: Dict[str, Any] = {"config_path": path, "root": root}
    if "tokenizer" in data:
        kw["tokenizer"] = str(safe_resolve(root / data["tokenizer"]))
    if "cache-minimums" in data:
        kw["cache_minimums"] = _cache_minimums(path, project_file(path, root, "cache-minimums", data["cache-minimums"]))
    if "tokenizers" in data:
        kw["tokenizers"] = _tokenizers(path, data, root)
    if "cost" in data:
        kw["cost"] = _cost(path, data["cost"], root)
    simple = {
        "tokenizer-sha256": "tokenizer_sha256",
        "engine": "engine",
        "block-size": "block_size",
        "template-env": "template_env",
        "render-timeout": "render_timeout",
        "max-output": "max_output",
        "max-recursion": "max_recursion",
        "analysis-timeout": "analysis_timeout",
        "max-encoded-tokens": "max_encoded_tokens",
        "frontend": "frontend",
        "transformers": "transformers",
        "serving": "serving",
    }
    for key, attr in simple.items():
        if key in data:
            kw[attr] = data[key]
    for key in ("templates", "exclude", "select", "ignore"):
        if key in data:
            kw[key] = tuple(data[key])
    if "jinja" in data:
        kw["jinja"] = tuple((role, tuple(sorted(names.items()))) for role, names in sorted(data["jinja"].items()))
    if "per-file-ignores" in data:
        kw["per_file_ignores"] = tuple((glob, tuple(codes)) for glob, codes in data["per-file-ignores"].items())
    return Settings(**kw)


def _check_values(path: Path, data: Dict[str, Any]) -> None:
    """What JSON Schema lets through: TOML's nan and inf (every comparison with nan is false, so
    `exclusiveMinimum` passes it), integral floats where a count is meant (`block-size = 16.0`),
    and globs that leave the project (`../../**/*`, `/etc/*`)."""
    import math

    for key in ("render-timeout", "analysis-timeout"):
        value = data.get(key)
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{path}: `{key}` must be a finite number of seconds, not {value}")
    for key in ("block-size", "max-output", "max-recursion", "max-encoded-tokens"):
        value = data.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ConfigError(f"{path}: `{key}` must be a whole number (write {key} = 16, not {value!r})")
    if "jinja" in data:
        from promptlint.render.stubs import check_declared

        problem = check_declared(data["jinja"])
        if problem:
            raise ConfigError(f"{path}: {problem}")
    for pattern in data.get("templates", ()):
        parts = pattern.replace("\\", "/").split("/")
        if pattern.startswith(("/", "~")) or (len(pattern) > 1 and pattern[1] == ":") or ".." in parts:
            raise ConfigError(
                f"{path}: `templates` pattern {pattern!r} leaves the project: globs are relative to "
                f"{path.parent} and stay inside it (pass other paths on the command line)"
            )


def _tokenizers(config: Path, data: Dict[str, Any], root: Path) -> Tuple:
    """``tokenizers``: name -> (resolved path, pin, block size, engine), in the file's order."""
    if "tokenizer" in data or "tokenizer-sha256" in data:
        raise ConfigError(f"{config}: give either `tokenizer` or `tokenizers` (one entry per deployed model), not both")
    out = []
    for name, entry in data["tokenizers"].items():
        entry = {"path": entry} if isinstance(entry, str) else entry
        out.append((name, str(safe_resolve(root / entry["path"])), entry.get("sha256"), entry.get("block-size"),
                    entry.get("engine")))
    return tuple(out)


def _cost(config: Path, table: Dict[str, Any], root: Path):
    """The CostModel of ``[cost]``: prices from one source, at least one way to express the loss."""
    import math

    from promptlint.arithmetic.cost import CostConfigError, model_from

    for key, value in table.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{config}: cost: `{key}` must be a finite number, not {value}")
    explicit = [k for k in ("price-per-mtok", "cached-price-per-mtok") if k in table]
    if "provider" in table and explicit:
        raise ConfigError(f"{config}: cost: give either `provider` (and `model`) or `price-per-mtok` and "
                          "`cached-price-per-mtok`, not both")
    if len(explicit) == 1:
        raise ConfigError(f"{config}: cost: `{explicit[0]}` needs its pair: give both `price-per-mtok` and "
                          "`cached-price-per-mtok` (USD per million input tokens, uncached and cached)")
    for key in ("model", "price-table"):
        if key in table and "provider" not in table:
            raise ConfigError(f"{config}: cost: `{key}` names prices of a provider: add `provider`")
    if not ("provider" in table or explicit or "prefill-tokens-per-second" in table):
        raise ConfigError(f"{config}: cost: say what a token costs: `provider` (and `model`), `price-per-mtok` and "
                          "`cached-price-per-mtok`, or `prefill-tokens-per-second` for a self-hosted engine")
    prices = str(project_file(config, root, "cost.price-table", table["price-table"])) if "price-table" in table else None
    try:
        return model_from(table, prices)
    except CostConfigError as e:
        raise ConfigError(f"{config}: cost: {e}") from None


def project_file(config: Path, root: Path, key: str, value: str) -> Path:
    """The resolved path of a table the configuration names, confined to the project like every other
    read: a path whose real path leaves ``root`` (or enters version-control metadata) is a
    configuration error naming the key, with nothing read (the file's keys would reach the message)."""
    import os

    from promptlint.base.paths import vcs_metadata

    resolved = safe_resolve(root / value)
    real, top = os.path.realpath(resolved), os.path.realpath(root)
    try:
        outside = os.path.commonpath([real, top]) != top
    except ValueError:  # another drive
        outside = True
    if outside or vcs_metadata(real, [top]):
        raise ConfigError(
            f"{config}: `{key}` names a file outside the project ({top}) or in version-control metadata; "
            "tables are read from files inside the project only (nothing was read)"
        )
    return resolved


def _cache_minimums(config: Path, table: Path) -> str:
    """The override table's resolved path, checked now so a bad file is one configuration error."""
    from promptlint.arithmetic.compare import CacheTableError, load_cache_minimums

    resolved = safe_resolve(table)
    try:
        load_cache_minimums(resolved)
    except CacheTableError as e:
        raise ConfigError(f"{config}: cache-minimums: {e}") from None
    return str(resolved)


def _validate(path: Path, data: Dict[str, Any], use_cache: bool, root: Path) -> None:
    """Check ``data`` against the config schema; a table validated before is remembered in the
    result cache, so a warm run does not import jsonschema."""
    import hashlib
    import json

    digest = hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode("utf-8")).hexdigest()
    cache = None
    if use_cache:
        from promptlint.project.cache import Cache

        cache = Cache(root)
        if cache.memo_get("validated-configs").get(digest):
            return
    from promptlint.schemas import validate

    where = "[tool.promptlint]" if path.name == "pyproject.toml" else ""
    problem = validate("config", data, where.strip("[]"))
    if problem:
        raise ConfigError(f"{path}: {problem}")
    if cache is not None:
        memo = cache.memo_get("validated-configs")
        memo[digest] = True
        cache.memo_put("validated-configs", memo)


def load_settings(
    config_file: Optional[str] = None,
    start: Optional[Path] = None,
    overrides: Optional[Dict[str, Any]] = None,
    use_cache: bool = False,
    *,
    base: Optional[Path] = None,
) -> Settings:
    """Settings from ``--config`` or discovery (from ``start``, else ``base``: the run's working
    directory, absolute), with command-line ``overrides`` applied on top. Relative paths the user
    typed (``config_file``, ``start``, a ``tokenizer`` override) are the caller's: opened against ``base``."""
    from promptlint.base.paths import based

    data: Optional[Dict[str, Any]] = None
    base = Path(base) if base is not None else Path.cwd()  # a library caller's: this process's directory
    if config_file:
        path = Path(config_file)
        if not based(path, base).is_file():
            raise ConfigError(f"{path}: configuration file not found")
        data = read_config_file(based(path, base), shown=path)
        if data is None:
            raise ConfigError(f"{path}: no [tool.promptlint] table in this pyproject.toml")
        settings = settings_from(path, data, use_cache, base=base)
    else:
        found = find_config(based(start, base) if start is not None else base)
        settings = settings_from(*found, use_cache=use_cache) if found else Settings(root=base)
        data = found[1] if found else None
    settings = replace(settings, base=base)
    clean = {k: v for k, v in (overrides or {}).items() if v is not None}
    if "tokenizer" in clean:
        clean["tokenizer"] = str(safe_resolve(based(clean["tokenizer"], base)))
        if "tokenizer_sha256" not in clean and settings.tokenizer != clean["tokenizer"]:
            clean["tokenizer_sha256"] = None  # a pin belongs to the configured file, not to another one
        clean["tokenizers"] = ()  # one tokenizer named on the command line replaces the configured models
    settings = replace(settings, **clean)
    if settings.engine == "llamacpp" and "frontend" not in clean and "frontend" not in (data or {}):
        settings = replace(settings, frontend="llamacpp")  # the llama.cpp server's own request handling
    check_selectors(settings)
    return settings


def check_selectors(settings: Settings) -> None:
    """A selector that names no rule would silently check less (`--select M1O1` selects nothing):
    refuse it, naming the code and where it came from."""
    from promptlint.base.registry import known_codes

    codes = known_codes()
    named = [("select", s) for s in settings.select] + [("ignore", s) for s in settings.ignore]
    named += [(f"per-file-ignores[{glob!r}]", s) for glob, sels in settings.per_file_ignores for s in sels]
    for where, selector in named:
        if not any(c.startswith(selector) for c in codes):
            raise ConfigError(
                f"unknown rule code {selector!r} in {where}: use codes or prefixes such as M101, M1, E "
                "(`promptlint rule --all` lists them)"
            )


def parse_codes(value: Optional[str]) -> Optional[Tuple[str, ...]]:
    """`--select M1,E` -> ("M1", "E")."""
    if value is None:
        return None
    codes = tuple(c.strip().upper() for c in value.split(",") if c.strip())
    for c in codes:
        if not c.isalnum():
            raise ConfigError(f"invalid rule selector {c!r}: use codes or prefixes such as M101, M1, E")
    return codes


def code_enabled(code: str, select: Sequence[str], ignore: Sequence[str]) -> bool:
    """ruff's rule: the most specific matching selector wins; on a tie, ignore wins.

    An empty ``select`` selects every rule (at specificity 0).
    """
    sel = max((len(s) for s in select if code.startswith(s)), default=-1) if select else 0
    ign = max((len(s) for s in ignore if code.startswith(s)), default=-1)
    return sel >= 0 and sel > ign


def ignored_for_file(code: str, rel_path: str, per_file_ignores: Sequence[Tuple[str, Sequence[str]]]) -> bool:
    import fnmatch

    for glob, codes in per_file_ignores:
        if fnmatch.fnmatch(rel_path, glob) or fnmatch.fnmatch(Path(rel_path).name, glob):
            if any(code.startswith(c) for c in codes):
                return True
    return False
