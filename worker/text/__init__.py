"""Text to fingerprints: normalisation, units and shingles, hashing, SimHash, IDF weights.
Pure: numpy and xxhash only."""
