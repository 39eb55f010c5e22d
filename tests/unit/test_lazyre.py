"""Module-level patterns are compiled on first use (cold start), and behave as compiled ones."""
import re

import pytest

from chalicelib import lazyre


def test_a_lazy_pattern_compiles_on_first_use_and_then_holds_the_compiled_methods():
    lazy = lazyre.compile(r"(?P<word>ビール|酒)(?:ください)?", re.IGNORECASE)
    assert "search" not in vars(lazy)              # nothing compiled at definition
    assert lazy.pattern == r"(?P<word>ビール|酒)(?:ください)?"
    assert "search" not in vars(lazy)              # the source alone compiles nothing
    found = lazy.search("あ、ビールください")
    assert found is not None and found.group("word") == "ビール"
    assert "search" in vars(lazy) and "finditer" in vars(lazy)
    assert lazy.groupindex == {"word": 1} and lazy.flags & re.IGNORECASE
    assert [m.group(0) for m in lazy.finditer("酒と酒")] == ["酒", "酒"]
    assert lazy.sub("X", "ビール") == "X" and lazy.fullmatch("酒") and not lazy.match("水")


def test_a_match_names_the_compiled_pattern_so_patterns_are_told_apart_by_source():
    one, other = lazyre.compile("a"), lazyre.compile("b")
    found = one.search("cab")
    assert found.re.pattern == one.pattern != other.pattern


def test_a_bad_pattern_fails_where_it_is_used_and_an_unknown_attribute_is_refused():
    broken = lazyre.compile("(")
    with pytest.raises(re.error):
        broken.search("x")
    with pytest.raises(AttributeError):
        lazyre.compile("a").no_such_thing  # noqa: B018


def test_every_module_level_pattern_of_the_lambda_code_compiles():
    """Deferred compiling must not hide a broken pattern until a player's line reaches it."""
    import importlib
    import pkgutil

    import chalicelib
    checked = 0
    for info in pkgutil.walk_packages(chalicelib.__path__, "chalicelib."):
        module = importlib.import_module(info.name)
        for value in list(vars(module).values()):
            if isinstance(value, lazyre._LazyPattern):
                value.search("")
                checked += 1
    assert checked > 200
