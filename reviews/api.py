"""The desk's endpoints on the crawler API (/api/v1/): the canonical output. Mounted on
the API object of ingest.api, which owns the token authentication."""

from itertools import islice
from typing import Literal

from django.http import HttpRequest, StreamingHttpResponse
from ninja import Query, Router

from dedup_site import roles
from ingest.api import api, require
from reviews.decisions import canonical as view

router = Router()
# Records per page at most (a bound, so that no number reaches the iterator unchecked).
MAX_LIMIT = 1_000_000


@router.get("/canonical", tags=["canonical"])
def canonical(
    request: HttpRequest,
    format: Literal["jsonl", "csv"] = "jsonl",
    accepted_only: bool = False,
    after: str | None = Query(
        None, pattern=r"^(group|document):[0-9]{1,18}$", description='e.g. "group:12"'
    ),
    limit: int | None = Query(None, ge=0, le=MAX_LIMIT),
    bom: bool = False,
) -> StreamingHttpResponse:
    """The deduplicated view, streamed (nothing is deleted): one record per group
    representative and per singleton, with its members' ids and URLs and the decision
    that made it. NDJSON (or CSV). Page with `limit` and `after=<last record's id>`.
    `bom=true` starts a CSV with the UTF-8 byte order mark a spreadsheet needs to read it
    as UTF-8 (the first page only: later pages continue the same file)."""
    require(request, roles.can_view, "read the canonical output (needs read access)")
    records = view.canonical_records(accepted_only=accepted_only, after=after)
    if limit is not None:
        records = islice(records, max(limit, 0))
    if format == "csv":
        return StreamingHttpResponse(
            view.as_csv(records, bom=bom and after is None), content_type="text/csv; charset=utf-8"
        )
    return StreamingHttpResponse(
        view.as_jsonl(records), content_type="application/x-ndjson; charset=utf-8"
    )


api.add_router("/", router)
