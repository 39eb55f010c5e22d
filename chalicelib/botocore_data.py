"""botocore sessions whose data files (endpoints, service models) decode into plain dicts.

botocore decodes every data file with ``object_pairs_hook=OrderedDict``; for the
1.2 MB endpoint file and the DynamoDB and S3 models a new process reads before
its first request, that hook is about a quarter of making the two clients
(~75 ms of ~300 ms, measured side by side in new processes).  Plain dicts keep
insertion order, which is all botocore relies on; the files, their search path
(AWS_DATA_PATH included) and the order they are tried in stay botocore's.

The sessions made here share one loader per search path: what it has read is
plain data, so a session made later (another endpoint's, or after a SnapStart
restore drops the sessions: chalicelib/snapstart.py) does not read and decode
the same files again.
"""
from __future__ import annotations

import gzip
import json
import os
import threading

import botocore.session
from botocore.loaders import JSONFileLoader

# botocore's own order: the plain file first, then the compressed one.
_OPENERS = ((".json", open), (".json.gz", gzip.open))


class PlainJSONFileLoader(JSONFileLoader):
    def load_file(self, file_path):
        for ext, opener in _OPENERS:
            path = file_path + ext
            if os.path.isfile(path):
                with opener(path, "rb") as fp:
                    return json.loads(fp.read().decode("utf-8"))
        return None


_loaders: dict[tuple[str, ...], object] = {}
_loaders_lock = threading.Lock()


def session() -> botocore.session.Session:
    """A new botocore session whose loader (botocore's, search path and all) decodes into dicts, shared with
    the other sessions of the same search path."""
    core = botocore.session.get_session()
    own = core.get_component("data_loader")
    with _loaders_lock:
        loader = _loaders.get(tuple(own.search_paths))
        if loader is None:
            own.file_loader = PlainJSONFileLoader()
            loader = _loaders[tuple(own.search_paths)] = own
    core.register_component("data_loader", loader)
    return core
