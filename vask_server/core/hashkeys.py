"""A set of chunk content hashes that costs 8 bytes a hash.

A large sync asks, for every batch, which of its chunks' hashes already have a stored vector. Held
as a Python set of 32-character strings, the hashes were most of what a sync's read of the chunks
table held; these keys halve it (docs/BENCHMARKS.md, "Memory"). Each is the
integer of its first 16 hex digits, in a sorted array (plus a small set of those added since the
last merge). Two hashes sharing those 64 bits would only make the sync look for a stored vector it
then does not find, and embed the chunk: a key says "maybe present", never "certainly".
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import numpy as np

_HEX = np.full(256, 255, dtype=np.uint8)
_HEX[np.frombuffer(b"0123456789", dtype=np.uint8)] = np.arange(10, dtype=np.uint8)
_HEX[np.frombuffer(b"abcdef", dtype=np.uint8)] = np.arange(10, 16, dtype=np.uint8)
_HEX[np.frombuffer(b"ABCDEF", dtype=np.uint8)] = np.arange(10, 16, dtype=np.uint8)
_SHIFTS = np.arange(60, -1, -4, dtype=np.uint64)  # the 16 digits' places, most significant first


def hash_key(content_hash: str) -> int:
    """The 64-bit key of one hash: its first 16 hex digits; any other text, hashed to 64 bits."""
    head = content_hash[:16]
    if len(head) == 16 and all(c in "0123456789abcdefABCDEF" for c in head):
        return int(head, 16)
    return int.from_bytes(hashlib.blake2b(content_hash.encode(), digest_size=8).digest(), "big")


def keys_of_hex_rows(digits: np.ndarray) -> np.ndarray | None:
    """The keys of many hashes at once, from their first 16 characters as ASCII bytes, one row a
    hash (n x 16 uint8); None if any of them is not hex (then `hash_key` each, to agree with it)."""
    nibbles = _HEX[digits]
    if nibbles.size and int(nibbles.max()) > 15:
        return None
    keys: np.ndarray = np.bitwise_or.reduce(nibbles.astype(np.uint64) << _SHIFTS, axis=1)
    return keys


class HashKeys:
    _MERGE_AT = 65_536  # keys added one sync batch at a time, merged into the array this often

    def __init__(self, keys: np.ndarray | None = None) -> None:
        self._sorted = np.unique(np.asarray(keys, dtype=np.uint64)) if keys is not None else np.zeros(0, np.uint64)
        self._recent: set[int] = set()

    def add(self, hashes: Iterable[str]) -> None:
        self._recent.update(hash_key(h) for h in hashes)
        if len(self._recent) >= self._MERGE_AT:
            recent = np.fromiter(self._recent, dtype=np.uint64, count=len(self._recent))
            self._sorted = np.union1d(self._sorted, recent)
            self._recent = set()

    def maybe_present(self, hashes: Iterable[str]) -> set[str]:
        """Those of `hashes` whose key is held: a superset of those that were added."""
        wanted = list(hashes)
        if not wanted:
            return set()
        keys = np.fromiter((hash_key(h) for h in wanted), dtype=np.uint64, count=len(wanted))
        found = np.zeros(len(wanted), dtype=bool)
        if len(self._sorted):
            at = np.minimum(np.searchsorted(self._sorted, keys), len(self._sorted) - 1)
            found = self._sorted[at] == keys
        return {
            h for h, key, hit in zip(wanted, keys.tolist(), found.tolist(), strict=True) if hit or key in self._recent
        }
