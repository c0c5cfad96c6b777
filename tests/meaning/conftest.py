"""Fixtures of the meaning tests."""

from __future__ import annotations

import pytest

from server.meaning import minilm
from testkit.skips import skip_unless_optional


@pytest.fixture
def second_model() -> None:
    """The second model's wheel is installed (`pytestmark = pytest.mark.usefixtures("second_model")`)."""
    if not minilm.available():
        skip_unless_optional("the second model's wheel is not installed (scripts/setup installs it)")
