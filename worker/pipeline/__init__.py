"""One batch of input messages to decisions (decode, fingerprint, ask the index), and the
output messages each decision produces. Pure, given an index."""
