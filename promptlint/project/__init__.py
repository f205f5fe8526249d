"""The project being linted: its configuration, which files to take, the result cache and run manifest, and a git revision's files."""
