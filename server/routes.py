"""Every feature's route declarations, in one list: the app's route table, the OpenAPI document
and docs/api.md (`python -m server.routes > docs/api.md`) are built from it."""

from __future__ import annotations

from server import health, openapi, proof
from server.api import Api
from server.dataio import routes as dataio_routes
from server.governance import routes as governance_routes
from server.library import routes as library_routes
from server.memory import routes as memory_routes


def route_apis() -> list[Api]:
    return [
        health.api,
        proof.api,
        governance_routes.api,
        memory_routes.api,
        library_routes.api,
        dataio_routes.api,
        openapi.api,
    ]


if __name__ == "__main__":
    print(openapi.markdown(route_apis()), end="")
