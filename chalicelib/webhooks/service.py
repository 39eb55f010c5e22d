"""The webhook routes' logic: register, show, delete and test a stage's webhook (agent key)."""
from __future__ import annotations

from .. import ids
from ..config import Settings
from ..errors import Conflict, NotFound, ValidationFailed
from ..stage.service import AGENT, StageService
from ..stage.store import GuardFailed, StageKind
from . import signing, targets
from .delivery import Sender, ping_body
from .models import (
    SHOWN_DELIVERIES,
    WebhookConfig,
    WebhookCreated,
    WebhookDeleted,
    WebhookDelivery,
    WebhookRequest,
    WebhookTestResult,
    WebhookView,
)
from .store import DynamoWebhookStore

SIGNATURE_FORMAT = (f"{signing.SIGNATURE_HEADER}: {signing.SCHEME}=<hex HMAC-SHA256(secret, "
                    f"\"<{signing.ID_HEADER}>.<{signing.TIMESTAMP_HEADER}>.<raw body>\")>")


class WebhookService:
    def __init__(self, stages: StageService, store: DynamoWebhookStore, settings: Settings,
                 sender: Sender | None = None):
        self.stages = stages
        self.store = store
        self.local = settings.local_webhooks
        self.sender = sender or Sender(local=self.local)

    def set(self, stage_id: str, key: str | None, request: WebhookRequest) -> WebhookCreated:
        stage = self.stages.check_key(stage_id, key, agent_only=True)
        if stage.kind == StageKind.SCENARIO:
            raise Conflict("a scenario stage's replies are answered by its director; webhooks are for agent "
                           "stages", "stage_id", code="scenario_stage")
        try:
            target = targets.parse(request.url, local=self.local)
            try:
                targets.resolve(target, local=self.local, resolver=self.sender.resolver)
            except targets.TargetRefused as exc:
                # A name that does not resolve (yet) is taken: every delivery resolves and checks it again,
                # and `webhook test` / `webhook show` say that it does not resolve.  A name that resolves to
                # an address inside is refused now.
                if exc.reason != "dns_failed":
                    raise
        except targets.TargetRefused as exc:
            raise ValidationFailed(f"url refused ({exc.reason}): {exc}", "url", code="webhook_url_refused") from None
        config = WebhookConfig(url=request.url, secret=signing.new_secret(),
                               created_at=ids.iso_from_ms(ids.id_time_ms(ids.new_id())))
        try:
            self.store.set(stage_id, self.stages._guard(key, AGENT), config)
        except GuardFailed:
            # The key was rotated between the check and the write.
            raise self.stages.auth_error(stage_id, key, AGENT) from None
        return WebhookCreated(url=config.url, secret=config.secret, created_at=config.created_at,
                              signature_header=SIGNATURE_FORMAT)

    def show(self, stage_id: str, key: str | None) -> WebhookView:
        self.stages.check_key(stage_id, key, agent_only=True)
        config = self._config(stage_id)
        deliveries = [WebhookDelivery(reply_id=d.reply_id, status=d.status, attempts=d.attempts,
                                      last_status=d.last_status, last_error=d.last_error, updated_at=d.updated_at)
                      for d in self.store.deliveries(stage_id, SHOWN_DELIVERIES)]
        return WebhookView(url=config.url, created_at=config.created_at, deliveries=deliveries)

    def delete(self, stage_id: str, key: str | None) -> WebhookDeleted:
        self.stages.check_key(stage_id, key, agent_only=True)
        try:
            return WebhookDeleted(deleted=self.store.delete(stage_id, self.stages._guard(key, AGENT)))
        except GuardFailed:
            raise self.stages.auth_error(stage_id, key, AGENT) from None

    def test(self, stage_id: str, key: str | None) -> WebhookTestResult:
        """Sends one signed `webhook.test` event now (no retries) and says how the receiver answered."""
        self.stages.check_key(stage_id, key, agent_only=True)
        config = self._config(stage_id)
        event_id = "test_" + ids.new_id()
        outcome = self.sender.send(config, event_id, ping_body(stage_id))
        return WebhookTestResult(ok=outcome.ok, status=outcome.status, error=outcome.error, ms=outcome.ms)

    def _config(self, stage_id: str) -> WebhookConfig:
        config = self.store.get(stage_id)
        if config is None:
            raise NotFound("this stage has no webhook; register one with PUT /stages/{stage_id}/webhook", "stage_id",
                           code="webhook_not_found")
        return config
