"""Which published versions of the SnapStart functions `infra/deploy.sh` deletes after a deploy.

SAM's ``AutoPublishAlias`` publishes a version of the API and long-poll functions on every deploy that
changes them, and keeps the old ones (``DeletionPolicy: Retain`` on each ``AWS::Lambda::Version``): nothing
ever removes them.  With SnapStart each published version keeps a snapshot cached, billed per GB-second as
long as the version exists (docs/deploy.md, "SnapStart"), so every deploy would add to the bill for good.
After a deploy the script keeps the versions an alias points at and the newest few (``BUTAI_KEEP_VERSIONS``,
default 2: the live one and the one before it, for `aws lambda update-alias` back), and deletes the rest.

    python -m butai_tools.versions functions          the functions that publish versions (logical ids)
    python -m butai_tools.versions select KEEP VERSIONS_JSON ALIASES_JSON
                                                      the versions to delete, one a line, from what
                                                      `aws lambda list-versions-by-function` and
                                                      `aws lambda list-aliases` printed
"""
from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping

from butai_tools import infra

DEFAULT_KEEP = 2


def publishing_functions() -> list[str]:
    """The template's functions whose versions SAM publishes under an alias."""
    resources = infra.build()["Resources"]
    return [logical for logical, resource in resources.items()
            if "AutoPublishAlias" in resource.get("Properties", {})]


def to_delete(versions: Iterable[str], aliased: Iterable[str], keep: int = DEFAULT_KEEP) -> list[str]:
    """Published versions (never ``$LATEST``) that no alias names and that are older than the `keep` newest."""
    if keep < 1:
        raise ValueError(f"keep at least the newest version, not {keep}")
    numbered = sorted({int(v) for v in versions if v != "$LATEST"})
    kept = set(numbered[-keep:]) | {int(v) for v in aliased if v != "$LATEST"}
    return [str(v) for v in numbered if v not in kept]


def select(keep: int, versions: Mapping, aliases: Mapping) -> list[str]:
    named = [a["FunctionVersion"] for a in aliases.get("Aliases") or []]
    named += [v for a in aliases.get("Aliases") or []
              for v in ((a.get("RoutingConfig") or {}).get("AdditionalVersionWeights") or {})]
    return to_delete([v["Version"] for v in versions.get("Versions") or []], named, keep)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["functions"]:
        sys.stdout.write("\n".join(publishing_functions()) + "\n")
        return 0
    if len(args) == 4 and args[0] == "select":
        for version in select(int(args[1]), json.loads(args[2]), json.loads(args[3])):
            sys.stdout.write(version + "\n")
        return 0
    sys.stderr.write("usage: python -m butai_tools.versions functions | select KEEP VERSIONS_JSON ALIASES_JSON\n")
    return 2


if __name__ == "__main__":
    sys.exit(main())
