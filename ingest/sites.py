"""Site services. A site's priority decides suggested representatives, so changing it
is a decision on the record: who, from what, to what, why (SitePriorityChange).

A site is a host; its registrable domain (ingest.core.domains) groups the hosts of one
publisher: template passages are counted per domain, and a domain's boilerplate lines
(ingest.core.boilerplate) are learned from its pages' full-page branch and dropped from
the main text the passage channel reads, each drop recorded (BoilerplateDrop)."""

from collections.abc import Iterable, Sequence

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from ingest.core import boilerplate, domains
from ingest.models import BoilerplateDrop, Document, Extraction, Site, SitePriorityChange


class SitePriorityError(ValueError):
    """A priority change that cannot be recorded (no reason given)."""


@transaction.atomic
def site_priority_set(*, site: Site, priority: int, actor: str, reason: str) -> SitePriorityChange:
    """Set the site's priority and append the record of it (the row is locked, so two
    concurrent changes are recorded in the order they applied)."""
    if not reason.strip():
        raise SitePriorityError("a reason is required")
    if not actor:
        raise SitePriorityError("an actor is required")
    locked = Site.objects.select_for_update().get(pk=site.pk)
    change = SitePriorityChange.objects.create(
        site=locked,
        priority_before=locked.priority,
        priority_after=priority,
        actor=actor,
        reason=reason.strip(),
    )
    Site.objects.filter(pk=locked.pk).update(priority=priority)
    site.priority = priority
    return change


# --- registrable domains and their boilerplate ----------------------------------------


def domain_sites(site_ids: Iterable[int]) -> dict[int, list[int]]:
    """For each site, every site of its registrable domain (ingest.core.domains), lowest
    id first: that first one stands for the domain where templates are counted. Sites
    are never deleted, so a domain's first site stays its first."""
    wanted = set(site_ids)
    if not wanted:
        return {}
    hosts = dict(Site.objects.filter(pk__in=wanted).values_list("pk", "host"))
    out: dict[int, list[int]] = {}
    by_domain: dict[str, list[int]] = {}
    for site_id, host in hosts.items():
        by_domain.setdefault(domains.registrable_domain(host), []).append(site_id)
    for domain, ours in by_domain.items():
        same = (
            Site.objects.filter(Q(host=domain) | Q(host__endswith=f".{domain}"))
            .order_by("pk")
            .values_list("pk", "host")
        )
        members = [pk for pk, host in same if domains.registrable_domain(host) == domain]
        members = sorted(set(members) | set(ours))
        for site_id in ours:
            out[site_id] = members
    for site_id in wanted - out.keys():
        out[site_id] = [site_id]
    return out


def template_sites(site_ids: Iterable[int]) -> dict[int, int]:
    """Each site's domain site: the one its template passages are counted on (the site
    itself when SITE_BOILERPLATE is off)."""
    if not settings.SITE_BOILERPLATE:
        return {s: s for s in site_ids}
    return {s: members[0] for s, members in domain_sites(site_ids).items()}


def boilerplate_learn(
    *, documents: Sequence[tuple[int, int]], extractor_version: str
) -> dict[int, str]:
    """The main texts of these documents ((id, site id) pairs) without their site's
    boilerplate lines, as the passage channel reads them. A document read before keeps
    its recorded drop (a redelivered search reads the same text); the others learn their
    domain's boilerplate now, from the full-page branch of up to boilerplate.SAMPLE of
    its latest pages (these documents among them, each leaving itself out), and the
    drop is recorded (BoilerplateDrop), with nothing dropped too."""
    ids = [d for d, _ in documents]
    if not settings.SITE_BOILERPLATE:
        return dict(
            Extraction.objects.filter(
                document_id__in=ids, extractor_version=extractor_version
            ).values_list("document_id", "main_text")
        )
    texts = dict(
        Extraction.objects.filter(
            document_id__in=ids, extractor_version=extractor_version
        ).values_list("document_id", "main_text")
    )
    recorded = boilerplate_dropped(document_ids=ids, extractor_version=extractor_version)
    out = {d: boilerplate.strip_lines(texts.get(d, ""), recorded[d]) for d in ids if d in recorded}
    todo = [(d, s) for d, s in documents if d not in recorded and texts.get(d)]
    if not todo:
        return {d: out.get(d, texts.get(d, "")) for d in ids}
    members = domain_sites(s for _, s in todo)
    hosts = dict(
        Site.objects.filter(pk__in={m[0] for m in members.values()}).values_list("pk", "host")
    )
    rows: list[BoilerplateDrop] = []
    by_domain: dict[int, list[int]] = {}
    for d, s in todo:
        by_domain.setdefault(members[s][0], []).append(d)
    for first, docs in by_domain.items():
        site_ids = next(m for m in members.values() if m[0] == first)
        sample = list(
            Extraction.objects.filter(
                extractor_version=extractor_version,
                status=Extraction.Status.OK,
                document__site_id__in=site_ids,
            )
            .order_by("-document_id")
            .values_list("document_id", "document__url", "full_text")[: boilerplate.SAMPLE]
        )
        # Each URL once, its latest fetch: a recrawl of a page is that page, not another
        # page of its site carrying the same lines.
        keys: dict[str, set[int]] = {}
        for _, url, text in sample:
            if url not in keys:
                keys[url] = boilerplate.line_keys(text)
        url_of = dict(Document.objects.filter(pk__in=docs).values_list("pk", "url"))
        domain = domains.registrable_domain(hosts.get(first, ""))
        for d in docs:
            others = [k for url, k in keys.items() if url != url_of.get(d)]
            stripped = boilerplate.strip(texts[d], boilerplate.learn(others))
            out[d] = stripped.text
            rows.append(
                BoilerplateDrop(
                    document_id=d,
                    extractor_version=extractor_version,
                    version=boilerplate.VERSION,
                    domain=domain,
                    learned_from=len(others),
                    lines=stripped.dropped,
                )
            )
    BoilerplateDrop.objects.bulk_create(rows)
    return {d: out.get(d, texts.get(d, "")) for d in ids}


def boilerplate_dropped(
    *, document_ids: Iterable[int], extractor_version: str
) -> dict[int, list[str]]:
    """The lines in force (the document's newest record, of the rule's version or of an
    earlier one: a document read under boilerplate-lines-v1 keeps its drop) dropped from
    each document's main text; documents never read have no entry (nor any, with
    SITE_BOILERPLATE off)."""
    out: dict[int, list[str]] = {}
    if not settings.SITE_BOILERPLATE:
        return out
    for d, lines in (
        BoilerplateDrop.objects.filter(
            document_id__in=list(document_ids),
            extractor_version=extractor_version,
            version__in=boilerplate.VERSIONS_IN_FORCE,
        )
        .order_by("document_id", "-pk")
        .values_list("document_id", "lines")
    ):
        out.setdefault(d, list(lines))
    return out


def passage_text(main_text: str, dropped: Iterable[str] | None) -> str:
    """A main text as the passage channel reads it, given its recorded drop."""
    return boilerplate.strip_lines(main_text, dropped) if dropped else main_text
