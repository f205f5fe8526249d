# Rule definitions (TOML) ship as package data of `promptlint._rules`.
