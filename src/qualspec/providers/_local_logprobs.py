"""Token log-probabilities of an embedded model's answer, read from the logits it kept.

llama-cpp-python's own ``logprobs`` ranks the whole vocabulary in Python for every answer
token (seconds per token on a busy machine). The model here is loaded with ``logits_all``,
so after a completion every answer position's logits are still in ``llama.scores``; the
top alternatives are picked with numpy instead, the same numbers at a small cost. As in
llama-cpp-python, they are the model's probabilities before any grammar.
"""

from __future__ import annotations

from typing import Any

from qualspec.providers._base import TokenLogprob

__all__ = ["answer_logprobs"]


def _piece(llama: Any, token: int, before: list[int]) -> str:
    text: bytes = llama.detokenize([token], prev_tokens=before)
    return text.decode("utf-8", errors="ignore")


def answer_logprobs(
    llama: Any, prompt_tokens: int, completion_tokens: int, text: str, top: int
) -> tuple[TokenLogprob, ...] | None:
    """Each answer token with its log-probability and the ``top`` most likely there, or
    None when the model's state does not hold the answer just made.

    The answer's tokens are those evaluated after the prompt (``llama.input_ids``); the
    last one (sampled, never evaluated when the answer ran out of tokens) is what the
    others leave of ``text``.
    """
    import numpy as np

    evaluated = [int(t) for t in llama.input_ids[prompt_tokens : int(llama.n_tokens)]]
    if prompt_tokens < 1 or completion_tokens < 1:
        return None
    if len(evaluated) not in (completion_tokens, completion_tokens - 1):
        return None
    rows = np.asarray(llama.scores[prompt_tokens - 1 : prompt_tokens - 1 + completion_tokens])
    count = min(max(top, 1), rows.shape[1] - 1)
    out: list[TokenLogprob] = []
    spelled = ""
    for index, row in enumerate(rows.astype(np.float64)):
        peak = row.max()
        logprobs = row - (peak + np.log(np.exp(row - peak).sum()))
        best = np.argpartition(-logprobs, count)[:count]
        best = best[np.argsort(-logprobs[best], kind="stable")]
        before = evaluated[:index]
        alternatives = tuple((_piece(llama, int(i), before), float(logprobs[i])) for i in best)
        if index < len(evaluated):
            token = evaluated[index]
            piece = _piece(llama, token, before)
            logprob = float(logprobs[token])
        else:  # the last token: what is left of the text, found among the alternatives
            piece = text[len(spelled) :]
            found = [lp for alt, lp in alternatives if alt == piece]
            if not found:
                return None
            logprob = found[0]
        out.append(TokenLogprob(piece, logprob, alternatives))
        spelled += piece
    return tuple(out)
