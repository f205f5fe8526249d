"""The driver's owner of a run: ``Workspace`` (driver/workspace.py). The per-file driver itself is
promptlint/lint.py (plan -> execute -> finish), the models' merge promptlint/models.py and the
baseline promptlint/baseline.py; a caller asks the Workspace, never those directly."""
