"""Whether a check run fails (its exit code): a module of its own, so that a plain check decides it
without defining the baseline's records (promptlint.base.measurements re-exports it)."""

from __future__ import annotations


def exit_failing(result, baseline, fail_on: str) -> bool:
    """Does the run fail (``baseline``: its ``measurements.Baseline``, or None)? ``regression``: a
    template × scenario lost blocks per request (or no longer renders); ``new-finding``: a finding
    (not a note) the baseline did not have; ``any``: any finding, as without a baseline, or a
    regression."""
    failing = [f for f in result.findings + result.errors if f.severity != "info"]
    regressed = bool(baseline and baseline.regressions)
    if fail_on == "regression":
        return regressed
    if fail_on == "new-finding":
        return any(f.baseline != "existing" for f in failing)
    return bool(failing) or regressed
