"""HTTP routes (placeholder until the feature lands)."""

from __future__ import annotations

from server.api import Api

api = Api()
