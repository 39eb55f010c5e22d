"""A tiny llama-architecture GGUF model, written with the `gguf` package, for tests that run a real
llama.cpp server.  Its answers mean nothing; what it is built for is the plumbing.

- The vocabulary holds the answer labels (``A`` … ``Z``, ``none``), the pieces of ``{"answer": …}``,
  a few hiragana, and all 256 byte-fallback tokens (Japanese prompts tokenise as bytes; llama.cpp needs a
  token for every byte it meets).  Whitespace bytes score low, so a JSON grammar's optional spaces stay
  empty and a constrained answer is always ``{"answer":"X"}``.
- One layer with random weights (seeded).  The embeddings carry a constant on dimension 0 and, for the
  quote character only, a constant on dimension 1; the output rows read those two dimensions.  So the
  next-token logits depend on the current token in a way chosen here: after a quote the labels
  lead (``B`` first, then ``none``, ``A``, ``C`` …) so that a constrained answer has its label
  probabilities in the top log-probabilities; anywhere else the hiragana lead, so free text is
  Japanese and never ends by itself (its length is ``max_tokens``).
"""
from __future__ import annotations

import string
from pathlib import Path

import numpy as np

LABELS = [*string.ascii_uppercase, "none"]
HIRAGANA = list("あいうえおかきくけこさしすせそたちつてとなにぬねのまみむめもよらりるれろわをん")
STRUCTURE = ["{", "}", '"', ":", "answer", ","]
CHAT_TEMPLATE = ("{% for message in messages %}{{ message['role'] }}: {{ message['content'] }}\n{% endfor %}"
                 "assistant:")
N_EMBD, N_HEAD, N_FF, N_LAYER = 32, 2, 64, 1
WHITESPACE_BYTES = ("<0x09>", "<0x0A>", "<0x0D>", "<0x20>")
# label order after a quote: B, none, A, C, D, … (distinct so that greedy decoding is deterministic)
LABEL_ORDER = ["B", "none", "A", *[c for c in string.ascii_uppercase if c not in "AB"]]


def vocabulary() -> tuple[list[str], list[int], list[float]]:
    tokens, types, scores = ["<unk>", "<s>", "</s>"], [2, 3, 3], [0.0, 0.0, 0.0]
    for value in range(256):
        tokens.append(f"<0x{value:02X}>")
        types.append(6)
        scores.append(0.0)
    for piece in [*LABELS, *STRUCTURE, *HIRAGANA]:
        if piece not in tokens:
            tokens.append(piece)
            types.append(1)
            scores.append(-float(len(tokens)) / 1000.0)
    return tokens, types, scores


def write_tiny_model(path: Path, seed: int = 7, n_ctx: int = 32768) -> Path:
    import gguf

    tokens, types, scores = vocabulary()
    index = {t: i for i, t in enumerate(tokens)}
    n_vocab = len(tokens)
    rng = np.random.default_rng(seed)

    embedding = (rng.standard_normal((n_vocab, N_EMBD)) * 0.1).astype(np.float32)
    embedding[:, 0] = 10.0
    embedding[:, 1] = 0.0
    for quote in ('"', "<0x22>"):
        embedding[index[quote], 1] = 10.0

    output = np.zeros((n_vocab, N_EMBD), dtype=np.float32)
    for piece in HIRAGANA:
        output[index[piece], 0] = 4.0           # free text: hiragana
        output[index[piece], 1] = -4.0          # … but not right after a quote
    for rank, label in enumerate(LABEL_ORDER):
        output[index[label], 1] = 3.0 - 0.02 * rank
    for piece in STRUCTURE:
        output[index[piece], 0] = 1.0           # beats the newline in a grammar's optional space
    output[index["</s>"], 0] = 0.5
    for piece in WHITESPACE_BYTES:
        output[index[piece], 0] = -2.0

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("butai-tiny-test")
    writer.add_context_length(n_ctx)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYER)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_vocab_size(n_vocab)
    writer.add_file_type(0)                     # all F32
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_scores(scores)
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(True)
    writer.add_chat_template(CHAT_TEMPLATE)

    def small(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    writer.add_tensor("token_embd.weight", embedding)
    for layer in range(N_LAYER):
        prefix = f"blk.{layer}."
        writer.add_tensor(prefix + "attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        writer.add_tensor(prefix + "attn_q.weight", small(N_EMBD, N_EMBD))
        writer.add_tensor(prefix + "attn_k.weight", small(N_EMBD, N_EMBD))
        writer.add_tensor(prefix + "attn_v.weight", small(N_EMBD, N_EMBD))
        writer.add_tensor(prefix + "attn_output.weight", small(N_EMBD, N_EMBD))
        writer.add_tensor(prefix + "ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        writer.add_tensor(prefix + "ffn_gate.weight", small(N_FF, N_EMBD))
        writer.add_tensor(prefix + "ffn_up.weight", small(N_FF, N_EMBD))
        writer.add_tensor(prefix + "ffn_down.weight", small(N_EMBD, N_FF))
    writer.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    writer.add_tensor("output.weight", output)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
