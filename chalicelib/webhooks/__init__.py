"""Webhooks: a stage POSTs each new reply, signed, to the URL its agent registered."""
