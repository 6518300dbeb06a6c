"""Crawler-facing HTTP API, /api/v1/ (token auth, OpenAPI schema at /api/v1/openapi.json)."""

import hashlib
from collections.abc import Callable
from dataclasses import asdict
from dataclasses import fields as dataclass_fields
from datetime import UTC, datetime
from typing import Any, Literal, get_type_hints

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI, Schema, Status
from ninja.errors import HttpError, ValidationError
from ninja.security import HttpBearer
from pydantic import Field, ValidationInfo, create_model, field_validator, model_validator

from dedup_site import roles
from ingest import candidates, services, vectors
from ingest.core.extract import extract
from ingest.core.readers import (
    RawRecord,
    fetchable_url_problem,
    fetched_at_problem,
    text_problem,
    url_problem,
)
from ingest.models import ApiToken

MAX_DOCUMENTS_PER_REQUEST = 1000


class TokenAuth(HttpBearer):
    """A token acts as its user does now: a revoked token, or one whose user is
    deactivated, is a 401; each endpoint then checks the user's current role."""

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        digest = hashlib.sha256(token.encode("utf-8")).hexdigest()
        return (
            ApiToken.objects.select_related("user")
            .filter(key_sha256=digest, revoked_at=None, user__is_active=True)
            .first()
        )


def require(request: HttpRequest, allowed: Callable[..., bool], what: str) -> None:
    token: ApiToken = request.auth  # type: ignore[attr-defined]
    if not allowed(token.user):
        raise HttpError(403, f"the token's user may not {what}")


def _docs_access(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The schema and docs page: for logged-in users and API token holders, or for
    anyone when API_DOCS_PUBLIC is set."""

    def wrapped(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        user = request.user
        allowed = settings.API_DOCS_PUBLIC or (user.is_authenticated and user.is_active)
        if not allowed and request.headers.get("Authorization", "").startswith("Bearer "):
            allowed = TokenAuth()(request) is not None
        if not allowed:
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return wrapped


api = NinjaAPI(
    title="Dedup Desk API",
    version="1",
    urls_namespace="api",
    auth=TokenAuth(),
    docs_decorator=_docs_access,
    description=(
        "Send crawled pages to the desk (crawler or admin role); ask whether a page is a "
        "duplicate (crawler role or read access); read the canonical output (read access)."
    ),
)


@api.exception_handler(ValidationError)
def validation_failed(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    """A payload that fails validation is a 400 naming the field, not a 422."""
    errors = [
        {"field": ".".join(str(p) for p in err.get("loc", ()) if p != "body"), "error": err["msg"]}
        for err in exc.errors
    ]
    return api.create_response(request, {"detail": "invalid payload", "errors": errors}, status=400)


DocType = Literal["article", "product", "short", "listing", "forum", "other"]


class DocumentIn(Schema):
    url: str = Field(min_length=1, max_length=8192, description="The fetched URL (http/https).")
    html: str = Field(description="The response body, as text.")
    status: int = Field(200, ge=100, le=599, description="HTTP status.")
    fetched_at: datetime | None = Field(None, description="ISO 8601; defaults to now.")
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP response headers.")
    final_url: str | None = Field(None, description="URL after redirects.")
    doc_type: DocType | None = None

    @field_validator("url", "final_url")
    @classmethod
    def http_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return value
        problem = url_problem(value, snapshot=info.field_name == "url") or (
            fetchable_url_problem(value)
        )
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("html")
    @classmethod
    def encodable_html(cls, value: str) -> str:
        # NUL may stay: the body is stored as bytes (and then screened as binary).
        return _encodable(value)

    @field_validator("headers")
    @classmethod
    def storable_headers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, text in value.items():
            problem = text_problem(name) or text_problem(text)
            if problem is not None:
                # Name the header without echoing characters that cannot be shown.
                shown = name if text_problem(name) is None else "a header name"
                raise ValueError(f"{shown}: {problem}")
        return value

    @field_validator("fetched_at")
    @classmethod
    def plausible_fetch_time(cls, value: datetime | None) -> datetime | None:
        if value is None:
            return value
        problem = fetched_at_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value


def _encodable(value: str) -> str:
    """A string UTF-8 can encode: no lone surrogate."""
    problem = text_problem(value.replace("\x00", ""))
    if problem is not None:
        raise ValueError(problem)
    return value


class IngestOut(Schema):
    batch_id: int
    received: int
    stored: int
    already_stored: int
    exact_duplicates: int
    errors: dict[str, int]
    document_ids: list[int]


class ErrorOut(Schema):
    detail: str
    errors: list[dict[str, str]] = []


def _record(doc: DocumentIn, offset: int) -> RawRecord:
    fetched_at = doc.fetched_at
    if fetched_at is not None:
        fetched_at = (
            fetched_at.replace(tzinfo=UTC) if fetched_at.tzinfo is None else fetched_at
        ).astimezone(UTC)
    return RawRecord(
        url=doc.url,
        body=doc.html.encode("utf-8"),
        http_status=doc.status,
        headers={k.lower(): v for k, v in doc.headers.items()},
        fetched_at=fetched_at,
        offset=offset,
        final_url=doc.final_url,
        doc_type=doc.doc_type,
        forced_charset="utf-8",
    )


@api.post("/documents", response={201: IngestOut, 400: ErrorOut, 403: ErrorOut}, tags=["ingest"])
def documents_create(
    request: HttpRequest, payload: list[DocumentIn] | DocumentIn
) -> Status[dict[str, object]]:
    """Store one document or a list of them (the JSONL object shape); extraction and
    fingerprints are computed by the workers."""
    require(request, roles.can_ingest, "store documents (needs the crawler or admin role)")
    docs = payload if isinstance(payload, list) else [payload]
    if not docs:
        return Status(400, {"detail": "no documents", "errors": []})
    if len(docs) > MAX_DOCUMENTS_PER_REQUEST:
        return Status(400, {"detail": f"at most {MAX_DOCUMENTS_PER_REQUEST} documents per request"})
    token = request.auth  # type: ignore[attr-defined]
    summary = services.batch_ingest(
        source=f"api:{token.name}",
        fmt="api",
        items=(_record(doc, i) for i, doc in enumerate(docs, start=1)),
    )
    return Status(
        201,
        {
            "batch_id": summary.batch_id,
            "received": len(docs),
            "stored": summary.stored,
            "already_stored": summary.already_stored,
            "exact_duplicates": summary.exact_duplicates,
            "errors": dict(summary.errors),
            "document_ids": summary.document_ids,
        },
    )


class CheckIn(Schema):
    html: str | None = Field(None, description="The page; its main text is extracted.")
    text: str | None = Field(None, description="Or the main text itself.")
    url: str | None = None
    title: str = ""
    doc_type: DocType = "other"

    @field_validator("html", "text", "title")
    @classmethod
    def storable_text(cls, value: str | None) -> str | None:
        # Nothing is stored, but the text is hashed as UTF-8 and looked up as text.
        problem = None if value is None else text_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("url")
    @classmethod
    def fetchable_url(cls, value: str | None) -> str | None:
        problem = None if value is None else url_problem(value) or fetchable_url_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def html_or_text(self) -> "CheckIn":
        if (self.html is None) == (self.text is None):
            raise ValueError("give exactly one of html or text")
        return self


# The answer's shape is the service's (ingest.candidates.CheckMatch / CheckResult): the
# schemas below are made from those dataclasses, with the API's descriptions added.
def _schema(
    name: str,
    source: type,
    descriptions: dict[str, str],
    override: dict[str, tuple[Any, Any]] | None = None,
) -> type[Schema]:
    fields: dict[str, Any] = {
        f.name: (hint, Field(description=descriptions.get(f.name)))
        for f, hint in ((f, get_type_hints(source)[f.name]) for f in dataclass_fields(source))
    }
    fields.update(override or {})
    model: type[Schema] = create_model(name, __base__=Schema, **fields)
    return model


MatchOut = _schema(
    "MatchOut",
    candidates.CheckMatch,
    {
        "channels": "Channels that nominate this match.",
        "checked_in_match": "Share of the checked text's passages in it.",
        "match_in_checked": "Share of its passages in the checked text.",
        "cosine": "Cosine of the embeddings (null while the semantic channel has none).",
    },
)
SemanticMatchOut = _schema(
    "SemanticMatchOut",
    vectors.SemanticMatch,
    {"cosine": "Cosine of the checked text's embedding and the stored document's."},
)
SemanticOut = _schema(
    "SemanticOut",
    vectors.SemanticCheck,
    {
        "status": "on, off (the channel is not configured), not_covered (the text's "
        "language), empty, error or skipped (the check's time budget ran out).",
        "reason": "Why there are no semantic matches to look for; empty when on.",
        "threshold": "The doc type's cosine threshold.",
        "matches": "Stored documents at or above the threshold, nearest first; each is "
        "also among the check's matches, nominated by the semantic channel.",
    },
    {"matches": (list[SemanticMatchOut], ...)},  # type: ignore[valid-type]
)
CheckOut = _schema(
    "CheckOut",
    candidates.CheckResult,
    {
        "simhash": "16 hex digits, or null when insufficient",
        "channels": "Channels behind the verdict: exact, simhash, passages, semantic, minhash.",
        "not_consulted": "Channels left out because the check's time budget ran out.",
    },
    {
        "verdict": (Literal["exact", "near", "new", "insufficient"], ...),
        "matches": (list[MatchOut], ...),  # type: ignore[valid-type]
        "extraction_status": (str | None, None),
        "extraction_quality": (str | None, None),
        "semantic": (SemanticOut, ...),
    },
)


@api.post(
    "/check", response={200: CheckOut, 400: ErrorOut, 403: ErrorOut, 413: ErrorOut}, tags=["check"]
)
def check(request: HttpRequest, payload: CheckIn) -> dict[str, object]:
    """Is this page a duplicate of something stored? Answers exact, near, new or
    insufficient, with the matches (distance, similarities, guards). Reads only."""
    require(request, roles.can_check, "check pages (needs the crawler role or read access)")
    field, value = ("html", payload.html) if payload.html is not None else ("text", payload.text)
    size, cap = len((value or "").encode()), settings.CHECK_MAX_TEXT_BYTES
    if size > cap:
        raise HttpError(413, f"{field} is {size} bytes; the limit is {cap} bytes")
    title, status, language, quality = payload.title, None, None, None
    text = payload.text or ""
    if payload.html is not None:
        extracted = extract(payload.html, url=payload.url or "")
        text, status = extracted.main_text, extracted.status
        quality = extracted.quality or None
        title = title or extracted.title
        language = extracted.language
    result = candidates.check(
        text=text, title=title, doc_type=payload.doc_type, url=payload.url, language=language
    )
    out = {**asdict(result), "extraction_status": status, "extraction_quality": quality}
    # A login wall, captcha or menu-only shell is never anyone's duplicate (invariant 4).
    if status not in (None, "ok"):
        out["verdict"], out["matches"], out["channels"] = "insufficient", [], []
    return out
