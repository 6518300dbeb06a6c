"""The review queue: its pairs and groups, their counts, the claims on them, and what the
queue keeps so that a page does not read every pair (review states, tallies, watermarks,
compiled statements)."""
