"""Skip rules for tests that need something outside Python: allowed only outside CI."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

IN_CI = bool(os.environ.get("CI"))
SHARED = Path(__file__).resolve().parents[2] / "shared"


def require_executable(name: str, why: str) -> str:
    """The path of `name`; in CI its absence fails the test, elsewhere it skips with the reason."""
    path = shutil.which(name)
    if path is None:
        message = f"{name} is not installed ({why}); .ci/run installs it"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return path


def require_shared() -> Path:
    """The workspace's ../shared folder (present in CI, absent in a user's clone)."""
    if not SHARED.is_dir():
        message = f"{SHARED} is missing (the workspace's shared data)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return SHARED
