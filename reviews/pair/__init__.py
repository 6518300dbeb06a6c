"""The pair page's panels and reads: the pair with its two sides and labels, the diffs, and
one panel per channel (SimHash, passages, semantic)."""
