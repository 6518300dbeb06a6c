"""Calibration from the desk's labels: the threshold sweeps and the calibration sample, the
action-level errors, the pre-label threshold, and the figures the calibration page
reads."""
