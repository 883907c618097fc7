"""Validation documents that are also training documents, found by their digests as ``prepare`` reads them.

    overlap = ValOverlap(active=val_source is not None)
    overlap.add(is_val, digest)            # each document's blake2b digest, as the reader hashes it
    overlap.check(train_source, val_source)  # UserError when a validation document is a training document

A ``--val-source`` file that is a byte-for-byte copy of a document of the source (``cp corpus/b.txt bcopy.txt;
prepare corpus --val-source bcopy.txt``) was trained on and then scored as held-out text, without a word (issue 30
round 18, F181, G119), although prepare digests every document. Without a validation source the split is a hash of
each document's text, so two copies always land in the same split; only an explicit validation source can overlap.
Each digest is kept as its first 8 bytes (8 bytes a document: 80 MB for 10 million), compared once all are read.
"""

from __future__ import annotations

from array import array

import numpy as np

from ..errors import UserError


class ValOverlap:
    """The training and validation digests of one ``prepare`` call (nothing kept when ``active`` is False)."""

    def __init__(self, active: bool):
        self.active = active
        self.digests = (array("Q"), array("Q"))  # train, validation

    def add(self, is_val: bool, digest: bytes) -> None:
        if self.active:
            self.digests[int(bool(is_val))].append(int.from_bytes(digest[:8], "little"))

    def check(self, source, val_source) -> None:
        """UserError naming both sources when a validation document's text is also a training document's."""
        train, val = (np.frombuffer(d, dtype=np.uint64) if len(d) else np.zeros(0, np.uint64) for d in self.digests)
        if not self.active or not len(train) or not len(val):
            return
        shared = int(np.isin(val, train).sum())
        if shared:
            raise UserError(f"{shared:,} of the {len(val):,} documents of the validation source "
                            f"{val_source.description} are also documents of the source {source.description} (the "
                            f"same text, byte for byte): the model would be scored on text it trained on; take them "
                            f"out of the source, or pass a --val-source whose documents are not in it")
