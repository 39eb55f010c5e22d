"""Push to the page: a stage's open pages learn of each change over a WebSocket (docs/stage.md, "Push").

``messages`` is the wire protocol, ``connections`` where subscriptions are kept, ``sender`` how a
message reaches a socket, ``service`` the logic (subscribe, fan-out) and ``stream`` the cloud's
fan-out function on the `current` table's stream.  The local runtime serves the same protocol with its
own sockets (butai_tools/local/push.py) and the same service.
"""
