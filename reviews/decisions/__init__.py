"""Group decisions: the record, merges, splits, restores, automatic merging and acceptance,
the group page's reads, the audit log and the deduplicated corpus built from them."""
