"""The static embeddings of the packaged all-MiniLM-L6-v2: the model's input token vectors,
mean-pooled over a text's word pieces (special tokens left out) and L2-normalised, read
with numpy from the package's safetensors file, tokenised by ``tokenizers``; no torch."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from qualspec.analysis import embeddings_available, mean_pairwise_similarity
from qualspec.analysis._static_embeddings import (
    StaticEmbedder,
    load_static_embedder,
    model_files,
    read_token_matrix,
)

PARIS = "The capital of France is Paris."
LONG = (
    "The capital of France is Paris, a city on the Seine known for its museums, its cafes "
    "and the Eiffel Tower."
)
LONG_NEAR = LONG.replace("cafes", "bakeries").replace(".", "!")
PARIS_AGAIN = "Paris is the capital city of France."
UNRELATED = "Ibuprofen should not exceed 1200 mg a day without a doctor."


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_the_same_text_gets_the_same_vector_and_near_duplicates_cosine_one() -> None:
    assert embeddings_available()
    embedder = load_static_embedder()
    vectors = embedder.encode([PARIS, PARIS, PARIS_AGAIN, UNRELATED, LONG, LONG_NEAR])
    assert vectors.shape == (6, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vectors[0], vectors[1])
    # embedded alone or in a batch: the same vector
    assert np.allclose(embedder.encode([PARIS])[0], vectors[0], atol=1e-6)
    again, unrelated = cosine(vectors[0], vectors[2]), cosine(vectors[0], vectors[3])
    near = cosine(vectors[4], vectors[5])  # one word of 20 changed, and the full stop
    assert near > 0.95 and again > 0.9
    assert unrelated < 0.5
    # a bag of word vectors: the same words in another order are the same answer
    swapped = embedder.encode(["France is the capital of Paris."])[0]
    assert cosine(swapped, vectors[0]) > 0.999
    assert mean_pairwise_similarity([PARIS, PARIS], "embeddings") == 1.0


def test_the_run_path_needs_no_torch() -> None:
    weights, tokenizer = model_files()
    assert weights is not None and weights.suffix == ".safetensors"
    assert tokenizer is not None and tokenizer.name == "tokenizer.json"
    matrix = read_token_matrix(weights)
    assert isinstance(matrix, np.memmap)  # rows are read as tokens need them
    assert matrix.shape == (30522, 384)


def write_safetensors(path: Path, name: str, dtype: str, data: bytes, shape: list[int]) -> None:
    header = {
        "__metadata__": {"format": "pt"},
        "other.weight": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
        name: {"dtype": dtype, "shape": shape, "data_offsets": [4, 4 + len(data)]},
    }
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0\0\0\0" + data)


@pytest.mark.parametrize("dtype", ["F32", "F16", "BF16"])
def test_mean_pooling_over_a_matrix_read_from_safetensors(tmp_path: Path, dtype: str) -> None:
    rows = np.array([[0, 0], [1, 0], [0, 2], [4, 4]], dtype=np.float32)
    if dtype == "F32":
        data = rows.tobytes()
    elif dtype == "F16":
        data = rows.astype("<f2").tobytes()
    else:  # bfloat16: the high half of each float32
        data = (rows.view(np.uint32) >> 16).astype("<u2").tobytes()
    path = tmp_path / "model.safetensors"
    write_safetensors(path, "bert.embeddings.word_embeddings.weight", dtype, data, [4, 2])
    matrix = read_token_matrix(path)
    pieces = {"a b b": [0, 1, 2, 2, 3], "nothing": [0, 3], "c": [3, 2]}
    embedder = StaticEmbedder(matrix, lambda texts: [pieces[t] for t in texts], special=[0, 3])
    mean = embedder.encode(["a b b", "nothing", "c"], normalize_embeddings=False)
    # [0] and [3] are special: left out; "nothing" has no tokens left, so zeros
    assert np.allclose(mean, [[1 / 3, 4 / 3], [0.0, 0.0], [0.0, 2.0]], atol=1e-6)
    unit = embedder.encode(["a b b", "nothing", "c"])
    assert np.allclose(unit[0], np.array([1, 4]) / np.sqrt(17))
    assert unit[1].tolist() == [0.0, 0.0] and unit[2].tolist() == [0.0, 1.0]


def test_a_file_without_the_matrix_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "other.safetensors"
    write_safetensors(path, "something.else", "F32", b"\0" * 8, [1, 2])
    with pytest.raises(ValueError, match="no tensor named"):
        read_token_matrix(path)
    (tmp_path / "junk.safetensors").write_bytes(b"\xff" * 16)
    with pytest.raises(ValueError, match="not a safetensors file"):
        read_token_matrix(tmp_path / "junk.safetensors")


def test_without_tokenizers_the_same_vectors_come_through_sentence_transformers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from qualspec.analysis import _static_embeddings

    direct = load_static_embedder().encode([PARIS, UNRELATED])
    monkeypatch.setattr(_static_embeddings, "_has_tokenizers", lambda: False)
    load_static_embedder.cache_clear()
    try:
        through = load_static_embedder().encode([PARIS, UNRELATED])
    finally:
        load_static_embedder.cache_clear()
    assert np.allclose(through, direct, atol=1e-5)
