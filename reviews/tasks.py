from dedup_site.task_policy import db_task


@db_task()
def automerge_run(group_ids: list[int] | None = None) -> dict[str, int]:
    from reviews import decisions  # no import cycle

    return decisions.automerge_run(group_ids=group_ids)
