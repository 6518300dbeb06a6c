"""Twenty editors at once press Next and label until the queue is empty, on PostgreSQL:
no request answers a server error, and every label the desk says it saved is stored
(and every stored label was reported saved). Each editor is a thread with its own
database connection and its own session, through the desk's real views."""

import random
import re
import threading
import time

import pytest
from django.db import connection
from django.test import Client

from ingest.models import CandidatePair
from reviews.models import Label
from tests import factories
from tests.factories import find, reviewed_document

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

EDITORS = 20
PAIRS = 40
HX = {"HX-Request": "true"}
PAIR_URL = re.compile(r"/review/pairs/(\d+)/")
SAVED = "Saved \u201c"


def _pairs(n: int) -> list[int]:
    rng = random.Random(26)
    docs = []
    for i in range(n):
        text = factories.article_text(500 + i, words=60)
        base = rng.getrandbits(64)  # ~32 bits from every other pair's documents
        a = reviewed_document(url=f"https://a{i}.example.com/p", text=text, base=base)
        b = reviewed_document(
            url=f"https://b{i}.example.com/p", text=text + " more", flips=i % 4, base=base
        )
        docs += [a, b]
    find(*docs)
    return list(CandidatePair.objects.values_list("id", flat=True))


class Editor(threading.Thread):
    def __init__(self, name: str, start: threading.Barrier) -> None:
        super().__init__(name=name)
        self.client = Client(raise_request_exception=False)
        self.client.force_login(factories.user_create(username=name, role="editor"))
        self.barrier = start
        self.codes: list[tuple[str, int]] = []
        self.saved: list[int] = []  # pairs the desk said it saved a label on
        self.error: BaseException | None = None

    def _post(self, what: str, url: str, data: dict[str, str]):
        r = self.client.post(url, data, headers=HX)
        self.codes.append((what, r.status_code))
        return r

    def _next_pair(self, r) -> int | None:
        m = PAIR_URL.search(r.get("HX-Push-Url", ""))
        return int(m.group(1)) if m else None

    def run(self) -> None:
        try:
            self.barrier.wait()
            deadline = time.monotonic() + 240
            pair = None
            empty = 0
            while time.monotonic() < deadline:
                if pair is None:
                    r = self._post("next", "/review/next", {"kind": "pair"})
                    if "/review/done" in r.get("HX-Push-Url", ""):
                        # Empty, or only for now: the pairs left may be claimed by others.
                        empty += 1
                        if empty >= 5:
                            return
                        time.sleep(0.2)
                        continue
                    empty = 0
                    pair = self._next_pair(r)  # None: "try again", pressing Next again
                    continue
                data = {"verdict": "duplicate", "reason_code": "", "reason": "", "region": "body"}
                data |= {"purpose": "review", "kind": "pair"}
                r = self._post("label", f"/review/pairs/{pair}/label", data)
                if r.status_code == 200 and SAVED in r.content.decode():
                    self.saved.append(pair)
                    pair = self._next_pair(r)  # None: the queue is empty or busy: Next
                elif r.status_code >= 500:
                    pair = None
                # any other answer ("try again") keeps the pair: the editor presses again
        except BaseException as e:  # pragma: no cover - reported by the test
            self.error = e
        finally:
            connection.close()


def test_twenty_editors_empty_the_queue_without_a_server_error(settings) -> None:
    settings.PASSAGE_CHANNEL = False
    settings.QUEUE_TALLY_LAG_SECONDS = 0  # the tally's watermarks move on every request
    pair_ids = _pairs(PAIRS)
    assert len(pair_ids) == PAIRS
    barrier = threading.Barrier(EDITORS)
    editors = [Editor(f"ed{i:02d}", barrier) for i in range(EDITORS)]
    for e in editors:
        e.start()
    for e in editors:
        e.join(300)
    assert not [e.name for e in editors if e.is_alive()], "an editor never finished"
    assert [e.error for e in editors if e.error] == []
    codes = [c for e in editors for c in e.codes]
    server_errors = [c for c in codes if c[1] >= 500]
    print(f"{len(codes)} requests, {len(server_errors)} server errors: {server_errors[:20]}")
    assert server_errors == []
    for e in editors:
        stored = sorted(
            Label.objects.filter(editor__username=e.name, retraction=False).values_list(
                "pair_id", flat=True
            )
        )
        # Every label stored was reported saved, and every one reported saved is stored.
        assert stored == sorted(e.saved), e.name
    # The queue is empty: every pair got its label, each from one editor (the claims).
    labelled = sorted(Label.objects.values_list("pair_id", flat=True))
    assert labelled == sorted(pair_ids)
