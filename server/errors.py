"""Domain errors with their HTTP status on the class.

    ApiError (400 bad_request)
    ├── BadRequest (400)            malformed JSON, wrong types, unknown fields
    ├── Unauthorized (401)          missing or wrong bearer token
    ├── Forbidden (403)             Host / Origin refused
    │   └── SiteModeRefused (403)   a write on a host that is not `collect`
    ├── NotFound (404)
    ├── MethodNotAllowed (405)
    ├── Conflict (409)              e.g. an expired forget confirmation
    ├── RequestTimeout (408)        a body that stops arriving
    ├── PayloadTooLarge (413)
    ├── UnsupportedMediaType (415)
    ├── UnprocessableContent (422)  valid request, content we cannot use (non-HTML page)
    └── UpstreamError (502)         a page we were asked to fetch failed

Every error leaves the server as {"error": {"code", "message", ...extra}} (see
server.security.error_middleware); nothing else, no traceback.
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    status = 400
    code = "bad_request"

    def __init__(self, message: str, *, code: str | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.extra = extra

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, **self.extra}}


class BadRequest(ApiError):
    status = 400
    code = "bad_request"


class Unauthorized(ApiError):
    status = 401
    code = "unauthorized"


class Forbidden(ApiError):
    status = 403
    code = "forbidden"


class SiteModeRefused(Forbidden):
    code = "site_mode"


class NotFound(ApiError):
    status = 404
    code = "not_found"


class MethodNotAllowed(ApiError):
    status = 405
    code = "method_not_allowed"


class Conflict(ApiError):
    status = 409
    code = "conflict"


class RequestTimeout(ApiError):
    status = 408
    code = "request_timeout"


class PayloadTooLarge(ApiError):
    status = 413
    code = "payload_too_large"


class UnsupportedMediaType(ApiError):
    status = 415
    code = "unsupported_media_type"


class UnprocessableContent(ApiError):
    status = 422
    code = "unprocessable"


class UpstreamError(ApiError):
    status = 502
    code = "upstream"
