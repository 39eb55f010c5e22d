"""infra/classifier: Docker cannot build here, so the Dockerfile is parsed and
serve.sh is run with a stand-in `vllm` that prints the arguments it got."""
import os
import re
import shlex
import stat
import subprocess
from pathlib import Path

import pytest

from butai_tools import infra

ROOT = Path(__file__).resolve().parents[2]
CLASSIFIER = ROOT / "infra" / "classifier"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = (CLASSIFIER / "Dockerfile").read_text(encoding="utf-8")
    logical, current = [], ""
    for line in text.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        current += line.rstrip("\\").rstrip() + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            keyword, _, rest = current.strip().partition(" ")
            logical.append((keyword.upper(), rest.strip()))
            current = ""
    return logical


def test_base_image_is_vllm_pinned_by_digest():
    # A tag can be moved to another image; the digest cannot. The tag stays for the reader (and the image tag).
    froms = [args for keyword, args in instructions() if keyword == "FROM"]
    assert len(froms) == 1
    image = froms[0].split()[0]
    assert re.fullmatch(r"vllm/vllm-openai:v\d+\.\d+\.\d+@sha256:[0-9a-f]{64}", image), image


def test_sagemaker_contract_port_and_entrypoint():
    found = dict(instructions())
    assert found["EXPOSE"] == "8080"
    assert found["ENTRYPOINT"] == '["/usr/local/bin/butai-serve"]'
    assert "serve.sh /usr/local/bin/butai-serve" in found["COPY"]
    script = CLASSIFIER / "serve.sh"
    assert script.stat().st_mode & stat.S_IXUSR
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0


def test_image_defaults_match_the_stack_defaults():
    env = {}
    for keyword, args in instructions():
        if keyword == "ENV":
            env.update(dict(pair.split("=", 1) for pair in shlex.split(args)))
    params = infra.parameters()
    assert env["MODEL_ID"] == params["ClassifierModelId"]["Default"]
    assert int(env["MAX_MODEL_LEN"]) == params["ClassifierMaxModelLen"]["Default"]
    assert env["PORT"] == "8080"
    # One log-probability per option letter (A–Z) and `none`.
    assert int(env["MAX_LOGPROBS"]) >= 27


@pytest.fixture
def run_serve(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "vllm").write_text('#!/usr/bin/env bash\nfor a in "$@"; do printf "%s\\n" "$a"; done\n')
    (fake / "vllm").chmod(0o755)

    def run(*args, **env):
        base = {"PATH": f"{fake}:{os.environ['PATH']}", "MODEL_ID": "Qwen/Qwen3-4B-Instruct-2507",
                "MAX_MODEL_LEN": "8192", "MAX_LOGPROBS": "32", "GPU_MEMORY_UTILIZATION": "0.90", "PORT": "8080"}
        result = subprocess.run([str(CLASSIFIER / "serve.sh"), *args], env={**base, **env},
                                capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
        return result.stdout.splitlines()
    return run


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_serve_starts_vllm_with_the_classifier_settings(run_serve):
    argv = run_serve("serve")             # SageMaker's `docker run IMAGE serve`
    assert argv[0] == "serve" and argv[1] == "Qwen/Qwen3-4B-Instruct-2507"
    assert "serve" not in argv[2:]
    assert flag(argv, "--port") == "8080" and flag(argv, "--host") == "0.0.0.0"
    assert flag(argv, "--served-model-name") == "Qwen/Qwen3-4B-Instruct-2507"
    assert flag(argv, "--max-model-len") == "8192"
    assert flag(argv, "--max-logprobs") == "32"
    assert "--enable-prefix-caching" in argv
    assert "--structured-outputs-config" not in argv      # vLLM's auto backend unless asked


def test_serve_maps_the_environment_to_flags(run_serve):
    argv = run_serve("serve", "--seed", "1", MODEL_ID="org/model", SERVED_MODEL_NAME="clf", SAGEMAKER_BIND_TO_PORT="9090",
                     SM_VLLM_MAX_NUM_SEQS="128", SM_VLLM_ENFORCE_EAGER="", STRUCTURED_OUTPUTS_BACKEND="xgrammar")
    assert argv[1] == "org/model"
    assert flag(argv, "--port") == "9090"
    assert flag(argv, "--served-model-name") == "clf"
    assert flag(argv, "--max-num-seqs") == "128"
    assert "--enforce-eager" in argv
    assert flag(argv, "--structured-outputs-config") == '{"backend": "xgrammar"}'
    assert argv[-2:] == ["--seed", "1"]


@pytest.mark.parametrize("value", ["true", "TRUE", "True", ""])
def test_a_true_boolean_is_a_bare_flag(run_serve, value):
    # vLLM's booleans take no value: `--enforce-eager true` stops the server before it starts.
    argv = run_serve("serve", SM_VLLM_ENFORCE_EAGER=value)
    at = argv.index("--enforce-eager")
    assert at == len(argv) - 1 or argv[at + 1].startswith("--")
    assert "true" not in [a.lower() for a in argv]


def test_a_false_boolean_is_the_no_flag_and_wins_over_the_default(run_serve):
    argv = run_serve("serve", SM_VLLM_ENABLE_PREFIX_CACHING="false", SM_VLLM_ENFORCE_EAGER="False")
    assert "--no-enforce-eager" in argv and "--enforce-eager" not in argv
    assert "false" not in [a.lower() for a in argv]
    # serve.sh turns prefix caching on; the operator's --no- form comes after it, and argparse takes the last
    assert argv.index("--enable-prefix-caching") < argv.index("--no-enable-prefix-caching")


def test_a_value_that_is_not_a_boolean_is_passed_as_the_flags_value(run_serve):
    argv = run_serve("serve", SM_VLLM_MAX_NUM_SEQS="64", SM_VLLM_KV_CACHE_DTYPE="fp8")
    assert flag(argv, "--max-num-seqs") == "64" and flag(argv, "--kv-cache-dtype") == "fp8"


def test_serve_refuses_to_start_without_a_model(tmp_path):
    result = subprocess.run([str(CLASSIFIER / "serve.sh")], env={"PATH": os.environ["PATH"]},
                            capture_output=True, text=True, timeout=30)
    assert result.returncode != 0 and "MODEL_ID" in result.stderr
