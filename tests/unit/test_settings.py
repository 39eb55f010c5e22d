"""One settings object, read from the environment once, builds every service.

The model settings (classifier, free conversation, expression judge) are part of `Settings`; the
services are built from that object alone, so nothing read later from the environment can make one
part of a process disagree with another.
"""
import re
from pathlib import Path

import pytest

from chalicelib import context
from chalicelib.config import Settings

ROOT = Path(__file__).resolve().parents[2]
READERS = {"config.py", "llm/settings.py", "observability.py"}


def test_only_the_settings_modules_read_the_environment():
    readers = set()
    for path in (ROOT / "chalicelib").rglob("*.py"):
        if re.search(r"os\.environ|os\.getenv|getenv\(", path.read_text(encoding="utf-8")):
            readers.add(path.relative_to(ROOT / "chalicelib").as_posix())
    assert readers == READERS


def test_the_model_settings_come_with_the_settings():
    settings = Settings.from_env({
        "BUTAI_CLASSIFIER": "lexical+sagemaker", "BUTAI_SAGEMAKER_ENDPOINT": "butai-classifier",
        "BUTAI_CLASSIFIER_TIMEOUT": "3", "BUTAI_MODEL_URL": "http://127.0.0.1:8000/v1", "BUTAI_MODEL": "qwen",
        "BUTAI_EXPRESSION_JUDGE": "openai", "BUTAI_EXPRESSION_TIMEOUT": "1.5", "BUTAI_MODEL_RETRIES": "2"})
    models = settings.models
    assert (models.classifier.name, models.classifier.options["endpoint"], models.classifier.options["timeout"]) \
        == ("lexical+sagemaker", "butai-classifier", 3.0)
    assert models.generator.name == "openai"
    assert (models.generator.options["base_url"], models.generator.options["model"],
            models.generator.options["retries"]) == ("http://127.0.0.1:8000/v1", "qwen", 2)
    assert (models.judge.name, models.judge.options["timeout"], models.judge.options["base_url"]) \
        == ("openai", 1.5, "http://127.0.0.1:8000/v1")
    with pytest.raises(TypeError):
        models.classifier.options["endpoint"] = "another"       # read once, never edited afterwards


def test_the_embedded_default_needs_no_model():
    models = Settings.from_env({}).models
    assert (models.classifier.name, models.generator.name, models.judge.name) == ("lexical", None, "lexicon")
    assert Settings().models == models


@pytest.mark.parametrize("environ, field", [
    ({"BUTAI_MODEL_MODE": "loud"}, "BUTAI_MODEL_MODE"),
    ({"BUTAI_GENERATOR": "openai"}, "BUTAI_GENERATOR"),
    ({"BUTAI_GENERATOR": "sagemaker"}, "BUTAI_GENERATOR"),
    ({"BUTAI_GENERATOR": "telepathy"}, "BUTAI_GENERATOR"),
])
def test_a_bad_model_setting_fails_when_the_settings_are_read(environ, field):
    with pytest.raises(ValueError, match=field):
        Settings.from_env(environ)


def test_services_are_built_from_the_settings_object_alone(aws_settings, monkeypatch):
    # The environment says something else entirely: the built services must not read it.
    monkeypatch.setenv("BUTAI_CLASSIFIER", "openai")
    monkeypatch.setenv("BUTAI_GENERATOR", "telepathy")
    monkeypatch.setenv("BUTAI_EXPRESSION_JUDGE", "nonsense")
    settings = aws_settings.with_(
        region="eu-west-1", aws_endpoint="http://127.0.0.1:9",
        models=Settings.from_env({"BUTAI_CLASSIFIER": "lexical+sagemaker",
                                  "BUTAI_SAGEMAKER_ENDPOINT": "butai-classifier"}).models)
    built = context.build(settings)
    backend = built.director.library.backend_factory()
    assert backend.name == "lexical+sagemaker"
    client = backend.model.client
    # the endpoint's client comes from the same settings: region and endpoint override hold
    assert client.meta.region_name == "eu-west-1"
    assert client.meta.endpoint_url == "http://127.0.0.1:9"
    assert built.director.talker.generator is None
    assert built.stage.judge.name == "lexicon"
