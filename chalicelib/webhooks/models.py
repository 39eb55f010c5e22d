"""Webhook records (between the layers) and the API's request and response shapes."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .targets import MAX_URL_LENGTH

DeliveryStatus = Literal["retrying", "delivered", "failed"]
SHOWN_DELIVERIES = 20


@dataclass(frozen=True)
class WebhookConfig:
    url: str
    secret: str
    created_at: str


@dataclass(frozen=True)
class DeliveryRecord:
    """Where one reply's delivery stands; rewritten after every attempt (keyed by the reply id)."""
    reply_id: str
    status: DeliveryStatus
    attempts: int
    updated_at: str
    last_status: int | None = None
    last_error: str | None = None


class WebhookRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    url: str = Field(min_length=1, max_length=MAX_URL_LENGTH,
                     description="Where each new reply is POSTed: an https URL on a public address "
                                 "(http://127.0.0.1 in a local run).")


class WebhookCreated(BaseModel):
    url: str
    secret: str = Field(description="The signing secret, shown only now: keep it to verify deliveries.")
    created_at: str
    signature_header: str = Field(description="How deliveries are signed.")


class WebhookDelivery(BaseModel):
    reply_id: str
    status: DeliveryStatus
    attempts: int
    last_status: int | None = Field(default=None, description="The receiver's last HTTP status, if it answered.")
    last_error: str | None = None
    updated_at: str


class WebhookView(BaseModel):
    url: str
    created_at: str
    deliveries: list[WebhookDelivery] = Field(description=f"The last {SHOWN_DELIVERIES} deliveries, newest first.")


class WebhookDeleted(BaseModel):
    deleted: bool


class WebhookTestResult(BaseModel):
    ok: bool = Field(description="The receiver answered 2xx.")
    status: int | None = None
    error: str | None = None
    ms: float
