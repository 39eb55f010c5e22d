"""Build butai's word-meaning table from GiNZA's chiVe word vectors.

    pip download --no-deps ja-ginza==5.3.0 -d /tmp/ginza
    python scripts/build_word_meaning.py /tmp/ginza/ja_ginza-5.3.0-py3-none-any.whl

The ``ja_ginza`` wheel (MIT) ships 20,000 rows of chiVe vectors (Apache-2.0,
Works Applications) for 480k Sudachi-normalised words: words left out of the
20,000 rows point to the row nearest to them.  The runtime does not need the
vectors themselves, only which rows are near which, so this script writes:

- every word (hashed: 8 bytes of BLAKE2b of its UTF-8) with its row;
- for every row, the rows whose cosine with it is at least ``--min-cosine``
  (at most ``--neighbours`` of them), cosines quantised to 1/255.

Cosines are taken after centring the vectors (subtracting the mean vector),
which lowers the similarity of every word to frequent "hub" words.

The output is read by ``chalicelib.interpret.ja.meaning`` with the standard
library only (no numpy at run time); this script needs numpy.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import struct
import sys
import zipfile
from array import array
from pathlib import Path

import numpy as np

_MASK = 0xFFFFFFFFFFFFFFFF
OUT = Path(__file__).resolve().parents[1] / "chalicelib" / "interpret" / "ja" / "data" / "meaning.bin"
MAGIC = b"BUTAIWM1"


def spacy_hash(text: str) -> int:
    """spaCy's string hash: MurmurHash64A of the UTF-8 bytes, seed 1."""
    data = text.encode("utf-8")
    m, r = 0xC6A4A7935BD1E995, 47
    h = (1 ^ (len(data) * m)) & _MASK
    blocks = len(data) // 8
    for i in range(blocks):
        k = struct.unpack_from("<Q", data, i * 8)[0]
        k = (k * m) & _MASK
        k ^= k >> r
        k = (k * m) & _MASK
        h ^= k
        h = (h * m) & _MASK
    tail = data[blocks * 8:]
    if tail:
        for i in range(len(tail) - 1, -1, -1):
            h ^= tail[i] << (8 * i)
        h = (h * m) & _MASK
    h ^= h >> r
    h = (h * m) & _MASK
    h ^= h >> r
    return h


def read_int_map(blob: bytes) -> dict[int, int]:
    """A msgpack map of unsigned integers to unsigned integers (spaCy's key2row)."""
    if blob[0] == 0xDF:
        count, pos = struct.unpack_from(">I", blob, 1)[0], 5
    elif blob[0] == 0xDE:
        count, pos = struct.unpack_from(">H", blob, 1)[0], 3
    else:
        raise ValueError("key2row: not a msgpack map")

    def unsigned(pos: int) -> tuple[int, int]:
        tag = blob[pos]
        if tag < 0x80:
            return tag, pos + 1
        size = {0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8}.get(tag)
        if size is None:
            raise ValueError(f"key2row: unexpected msgpack tag {tag:#x}")
        return int.from_bytes(blob[pos + 1:pos + 1 + size], "big"), pos + 1 + size

    out = {}
    for _ in range(count):
        key, pos = unsigned(pos)
        value, pos = unsigned(pos)
        out[key] = value
    return out


def word_key(word: str) -> int:
    return int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "little")


def _useful(word: str) -> bool:
    if not word or len(word) > 16:
        return False
    return any(ch.isalnum() for ch in word)


def build(wheel: Path, min_cosine: float, neighbours: int) -> bytes:
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        vocab = next(n.rsplit("/", 1)[0] for n in names if n.endswith("/vocab/vectors"))
        vectors = np.load(io.BytesIO(z.read(vocab + "/vectors")))
        key2row = read_int_map(z.read(vocab + "/key2row"))
        strings = json.loads(z.read(vocab + "/strings.json"))
    rows = vectors.shape[0]
    words: dict[int, int] = {}
    for word in strings:
        if not _useful(word):
            continue
        row = key2row.get(spacy_hash(word))
        if row is not None:
            words[word_key(word)] = row
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True).clip(1e-9)
    unit = unit - unit.mean(axis=0)
    unit = unit / np.linalg.norm(unit, axis=1, keepdims=True).clip(1e-9)
    offsets = array("I", [0])
    near_rows = array("H")
    near_sims = array("B")
    for start in range(0, rows, 2000):
        block = unit[start:start + 2000] @ unit.T
        for i, sims in enumerate(block):
            row = start + i
            sims[row] = -1.0
            top = np.argpartition(-sims, neighbours)[:neighbours]
            top = top[sims[top] >= min_cosine]
            top = top[np.argsort(-sims[top])]
            near_rows.extend(int(t) for t in top)
            near_sims.extend(int(round(float(sims[t]) * 255)) for t in top)
            offsets.append(len(near_rows))
    keys = sorted(words)
    key_array = array("Q", keys)
    row_array = array("H", (words[k] for k in keys))
    header = json.dumps({
        "rows": rows, "words": len(keys), "min_cosine": min_cosine, "neighbours": neighbours,
        "source": "chiVe word vectors (Apache-2.0, Works Applications) as shipped in ja_ginza (MIT)",
        "wheel": wheel.name, "cosine": "centred", "scale": 255,
    }, ensure_ascii=False).encode("utf-8")
    if sys.byteorder != "little":
        for a in (key_array, row_array, offsets, near_rows):
            a.byteswap()
    return b"".join([MAGIC, struct.pack("<I", len(header)), header, key_array.tobytes(), row_array.tobytes(),
                     offsets.tobytes(), near_rows.tobytes(), near_sims.tobytes()])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheel", type=Path, help="the ja_ginza wheel")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--min-cosine", type=float, default=0.35)
    parser.add_argument("--neighbours", type=int, default=128)
    args = parser.parse_args(argv)
    blob = build(args.wheel, args.min_cosine, args.neighbours)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(blob)
    print(f"{args.out}: {len(blob) / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
