"""The agent protocol: speak, reply, fetch_replies, getStage."""
