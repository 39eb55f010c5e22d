"""butai's agent-side toolkit: a Python client for a stage (see :mod:`butai.client`)."""
from .client import RetryPolicy, Stage, new_request_id
from .errors import (
                     ButaiError,
                     ConfigError,
                     Conflict,
                     ConnectionFailed,
                     Forbidden,
                     InvalidRequest,
                     NotFound,
                     PayloadTooLarge,
                     RateLimited,
                     ServerError,
                     StageError,
                     Unauthorized,
                     UnsupportedMediaType,
)

__all__ = [
    "Stage", "RetryPolicy", "new_request_id",
    "ButaiError", "ConfigError", "ConnectionFailed", "StageError", "InvalidRequest", "Unauthorized", "Forbidden",
    "NotFound", "Conflict", "PayloadTooLarge", "UnsupportedMediaType", "RateLimited", "ServerError",
]
