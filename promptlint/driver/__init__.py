"""The driver's owner of a run: ``Workspace`` (driver/workspace.py). The per-file driver itself is
promptlint/driver/lint.py (plan -> execute -> finish), the models' merge promptlint/driver/models.py and the
baseline promptlint/driver/baseline.py; a caller asks the Workspace, never those directly."""
