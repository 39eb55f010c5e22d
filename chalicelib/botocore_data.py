"""botocore sessions whose data files (endpoints, service models) decode into plain dicts.

botocore decodes every data file with ``object_pairs_hook=OrderedDict``; for the
1.2 MB endpoint file and the DynamoDB and S3 models a new process reads before
its first request, that hook is about a quarter of making the two clients
(~75 ms of ~300 ms, measured side by side in new processes).  Plain dicts keep
insertion order, which is all botocore relies on; the files, their search path
(AWS_DATA_PATH included) and the order they are tried in stay botocore's.
"""
from __future__ import annotations

import gzip
import json
import os

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


def session() -> botocore.session.Session:
    """A new botocore session whose loader (botocore's, search path and all) decodes into dicts."""
    core = botocore.session.get_session()
    core.get_component("data_loader").file_loader = PlainJSONFileLoader()
    return core
