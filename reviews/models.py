"""Review desk models (labels, decisions) arrive with the review desk."""
