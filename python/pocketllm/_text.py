"""Text held back while it streams: the end of a text that may still grow
into one of some words (a stop string, a think tag)."""
from __future__ import annotations

from typing import Iterable


def partial_tail(text: str, words: Iterable[str]) -> int:
    """The length of the longest end of text that is a proper prefix of one
    of words (0 when none)."""
    keep = 0
    for w in words:
        for k in range(min(len(w) - 1, len(text)), keep, -1):
            if text.endswith(w[:k]):
                keep = k
                break
    return keep
