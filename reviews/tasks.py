from dedup_site.task_policy import db_task


@db_task()
def automerge_run(group_ids: list[int] | None = None) -> dict[str, int]:
    from reviews import decisions  # no import cycle

    return decisions.automerge_run(group_ids=group_ids)


@db_task()
def prelabel_compute() -> int:
    """The beat task: recompute the pre-label score histograms and suggestions."""
    from reviews import prelabel  # no import cycle

    return prelabel.prelabel_compute()
