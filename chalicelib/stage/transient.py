"""Which storage failures a retry may cure: the store stayed busy, or DynamoDB or S3 answered "busy or
briefly broken" (botocore has already retried those with backoff and jitter).

The routes answer them with a 503 and Retry-After; the director lets them through rather than answering
the reply with a notice, so the player's retry plays the turn. Botocore is imported on the first failure:
a turn that succeeds never needs it here.
"""
from __future__ import annotations

from .store import StoreUnavailable

TRANSIENT_CODES = frozenset({
    "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded", "Throttling",
    "InternalServerError", "InternalFailure", "ServiceUnavailable", "ServiceUnavailableException",
    "TransactionInProgressException", "TransactionConflictException", "LimitExceededException",
    "SlowDown", "RequestTimeout",
})


def transient(exc: BaseException) -> bool:
    """Whether ``exc`` is a storage failure that a retry shortly after may cure."""
    from botocore.exceptions import ClientError, HTTPClientError
    from botocore.exceptions import ConnectionError as BotoConnectionError

    if isinstance(exc, StoreUnavailable | BotoConnectionError | HTTPClientError):
        return True
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        return error.get("Code") in TRANSIENT_CODES or status >= 500
    return False
