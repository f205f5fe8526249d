"""Leaves shared by everything: plain records, paths, TOML and JSON helpers, dated tables, the rule registry. Standard library only; nothing here depends on a run."""
