"""Candidate channels: one module per channel, each saying what the channel is.

A channel (``base.Channel``) names its bit and evidence key (``ingest.core.channels``),
how it probes for neighbours when documents are searched (``search``) and when a page is
checked (``check_probe``), the score it reads of a pair and the evidence it records
(``evidence``), when it nominates (``nominates``), the score calibration sweeps
(``score``, ``pair_field``) and what the pair view shows (``panel_template``,
``panel_context``). ``registry`` lists the channels in display order; the pair builder,
the check API, the desk's panels and the calibration loop over it, and
``registry.evidence`` is the one rule turning a pair's scores into its channels and
evidence. ``thresholds`` holds the thresholds and method keys the desk reads.

This module imports nothing, so that any module may import ``ingest.channels.thresholds``.
"""
