"""Every environment variable butai's Lambda code reads, in one place.

The modules that read them take the names from here; ``tests/unit/test_env.py``
fails on a ``BUTAI_*`` name used anywhere in ``chalicelib/`` that is not listed.
"""
# -- storage and assets (config.Settings)
REGION_VARS = ("AWS_REGION", "AWS_DEFAULT_REGION")
TABLE_CURRENT = "BUTAI_TABLE_CURRENT"
TABLE_LOG = "BUTAI_TABLE_LOG"
TABLE_PENDING = "BUTAI_TABLE_PENDING"
BUCKET = "BUTAI_BUCKET"
AWS_ENDPOINT = "BUTAI_AWS_ENDPOINT"          # the moto server locally; unset in the cloud
ASSETS_URL = "BUTAI_ASSETS_URL"
PAGE_URL = "BUTAI_PAGE_URL"
DEFAULT_CHARACTER = "BUTAI_DEFAULT_CHARACTER"
MANIFEST_TTL = "BUTAI_MANIFEST_TTL"
RETENTION_DAYS = "BUTAI_RETENTION_DAYS"
PLAYERS_SEE_DEBUG = "BUTAI_PLAYERS_SEE_DEBUG"
AUDIO_ORIGINS = "BUTAI_AUDIO_ORIGINS"
DEPLOYMENT_STAGE = "BUTAI_DEPLOYMENT_STAGE"  # dev, prod …: set by the template, for logs only
LOCAL = "BUTAI_LOCAL"                        # "1" in the local runtime: readable logs and metrics
PUSH_ENDPOINT = "BUTAI_PUSH_ENDPOINT"        # the WebSocket API's connection-management URL (push fan-out)
VOICE = "BUTAI_VOICE"                        # "1": a voice worker renders lines without audio (docs/stage.md)
STACK = "BUTAI_STACK"                        # the CloudFormation stack: every metric's `stack` dimension

# -- the one switch for a model (llm/settings.py)
MODEL_URL = "BUTAI_MODEL_URL"
MODEL = "BUTAI_MODEL"
MODEL_API_KEY = "BUTAI_MODEL_API_KEY"
MODEL_MODE = "BUTAI_MODEL_MODE"
MODEL_RETRIES = "BUTAI_MODEL_RETRIES"

# -- the input classifier (interpret/backends)
CLASSIFIER = "BUTAI_CLASSIFIER"
CLASSIFIER_TIMEOUT = "BUTAI_CLASSIFIER_TIMEOUT"
CLASSIFIER_BREAKER_FAILURES = "BUTAI_CLASSIFIER_BREAKER_FAILURES"   # failures in a row that open it; 0: none
CLASSIFIER_BREAKER_SECONDS = "BUTAI_CLASSIFIER_BREAKER_SECONDS"     # how long it stays open before a probe
CLASSIFIER_LABELS = "BUTAI_CLASSIFIER_LABELS"
CONTEXT_LIMIT = "BUTAI_CONTEXT_LIMIT"
SAGEMAKER_ENDPOINT = "BUTAI_SAGEMAKER_ENDPOINT"
SAGEMAKER_MODEL = "BUTAI_SAGEMAKER_MODEL"
OPENAI_BASE_URL = "BUTAI_OPENAI_BASE_URL"
OPENAI_MODEL = "BUTAI_OPENAI_MODEL"
OPENAI_API_KEY = "BUTAI_OPENAI_API_KEY"
TRANSFORMERS_MODEL = "BUTAI_TRANSFORMERS_MODEL"
TRANSFORMERS_DEVICE = "BUTAI_TRANSFORMERS_DEVICE"

# -- free conversation (talk.py)
GENERATOR = "BUTAI_GENERATOR"
GENERATOR_BASE_URL = "BUTAI_GENERATOR_BASE_URL"
GENERATOR_MODEL = "BUTAI_GENERATOR_MODEL"
GENERATOR_API_KEY = "BUTAI_GENERATOR_API_KEY"
GENERATOR_ENDPOINT = "BUTAI_GENERATOR_ENDPOINT"
GENERATOR_TIMEOUT = "BUTAI_GENERATOR_TIMEOUT"

# -- the expression judge (expression/judges.py)
EXPRESSION_JUDGE = "BUTAI_EXPRESSION_JUDGE"
EXPRESSION_TIMEOUT = "BUTAI_EXPRESSION_TIMEOUT"


def names() -> set[str]:
    return {v for k, v in globals().items() if k.isupper() and isinstance(v, str)}
