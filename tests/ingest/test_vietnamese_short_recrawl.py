"""A short Vietnamese article crawled twice, end to end: one copy kept its lead and its
paragraph breaks, the other lost both (its text is the two body paragraphs on one
line). The shorter text has two winnowed passages, both shared: under the channel's
PASSAGE_SHARED_MIN (3) it was out of the passage channel's reach whatever it shared.
The short-copy rule's word reading asks a short side for two (``shared_needed`` in
ingest/core/shortcopy.py: what its containment floor implies, two at least), and the
index finds the pair whichever copy arrives first, also when the longer text is a whole
story that asks for PASSAGE_SHARED_MIN itself (``ingest.passages.hit_shared_min``). Runs
on the
configured database: SQLite by default, PostgreSQL (the GIN probes) with DATABASE_URL."""

import io
from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings

from ingest import candidates, services
from ingest.channels.thresholds import threshold_for
from ingest.core.readers import read_warc
from ingest.models import CandidatePair, Document, Extraction
from tests import factories

pytestmark = pytest.mark.django_db

LEAD = (
    "Sáng nay, Sở Giao thông vận tải thành phố cho biết cây cầu mới bắc qua sông Lam "
    "sẽ được thông xe vào cuối tháng sau, sớm hơn dự kiến gần hai tháng."
)
BODY = [
    "Theo ban quản lý dự án, các nhà thầu đã hoàn thành phần mặt cầu và đang lắp đặt hệ thống "
    "chiếu sáng cùng lan can bảo vệ.",
    "Người dân hai bên bờ sông hy vọng cây cầu sẽ giúp giảm ùn tắc vào giờ cao điểm, nhất là "
    "trên tuyến phà cũ vốn quá tải mỗi dịp lễ tết.",
]
# The full story the brief was cut from: long enough (more than eight passages) that its
# own lookup asks for PASSAGE_SHARED_MIN.
MORE = [
    "Theo thiết kế, cầu có kết cấu dây văng với hai trụ tháp cao gần một trăm mét, nhịp "
    "chính dài ba trăm mét, đủ cho tàu thuyền trọng tải lớn đi qua vào mùa nước lên.",
    "Trong quá trình thi công, dự án từng phải tạm dừng gần bốn tháng vì vướng mặt bằng ở "
    "phía bờ bắc, nơi hơn năm mươi hộ dân chờ nhận tiền bồi thường và đất tái định cư.",
    "Đại diện nhà thầu cho biết công nhân làm việc ba ca liên tục trong mùa khô để bù lại "
    "thời gian đã mất, đồng thời tăng cường kiểm tra chất lượng bê tông ở từng đốt dầm.",
    "Sau khi thông xe, thành phố dự kiến tổ chức lại các tuyến xe buýt qua cầu và mở thêm "
    "một bến xe khách ở đầu cầu phía nam để phục vụ người dân các huyện lân cận.",
    "Các chuyên gia giao thông khuyến nghị cần sớm hoàn thiện đường dẫn hai đầu cầu, tránh "
    "tình trạng cầu xong mà xe vẫn phải đi vòng qua các tuyến đường nhỏ trong khu dân cư.",
]
TITLE = "Cầu mới qua sông Lam sắp thông xe"
WHEN = datetime(2026, 6, 1, 8, tzinfo=UTC)
FULL_URL = "https://tinnhanh.example.vn/giao-thong/cau-song-lam.html"
FLAT_URL = "https://tonghop.example.vn/a/771204.html"


def _html(paragraphs: list[str], menu: list[str]) -> bytes:
    links = "".join(f'<li><a href="/{i}">{m}</a></li>' for i, m in enumerate(menu))
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        f"<!doctype html><html lang='vi'><head><meta charset='utf-8'><title>{TITLE}</title>"
        f"</head><body><nav><ul>{links}</ul></nav><main><article>{body}"
        "</article></main><footer><p>Giấy phép số 01/GP-BTTTT. Liên hệ quảng cáo</p></footer>"
        "</body></html>"
    ).encode()


FULL = _html([LEAD, *BODY], ["Trang chủ", "Thời sự", "Giao thông", "Kinh tế"])
FLAT = _html([" ".join(BODY)], ["Mới nhất", "Xã hội", "Thế giới", "Thể thao"])  # breaks lost


def _ingest(url: str, body: bytes, at: datetime, committed) -> Document:
    data = factories.warc_bytes([(url, body)], date=at)
    with committed():
        services.batch_ingest(source="vi", fmt="warc", items=read_warc(io.BytesIO(data)))
    return Document.objects.get(url=url)


@pytest.mark.parametrize("first", ["full", "flat"])
def test_a_short_vietnamese_recrawl_without_its_lead_is_paired(first, committed) -> None:
    pages = {"full": (FULL_URL, FULL), "flat": (FLAT_URL, FLAT)}
    order = [first, "flat" if first == "full" else "full"]
    docs = {
        name: _ingest(*pages[name], WHEN + timedelta(hours=i), committed)
        for i, name in enumerate(order)
    }
    full, flat = docs["full"], docs["flat"]
    flat_text = Extraction.objects.get(document=flat).main_text
    assert "\n" not in flat_text and LEAD not in flat_text  # what the second crawl kept
    a, b = sorted((full.pk, flat.pk))
    pair = CandidatePair.objects.get(method__key=settings.ACTIVE_METHOD, a_id=a, b_id=b)
    # Fewer shared passages than the channel's minimum, too far apart for SimHash: only
    # the short-copy rule's reading of a text that short nominates it.
    assert 0 < pair.shared_passages < settings.PASSAGE_SHARED_MIN
    assert pair.distance > threshold_for("article")
    assert pair.channel_names == ["passages"]
    assert pair.evidence["passages"]["short_copy"]["shingles"] == 1.0
    assert not pair.below_floor


def test_two_short_vietnamese_briefs_of_one_site_are_not_paired(committed) -> None:
    """Two different briefs under one template, sharing its credit line: their texts
    are as short, but their shingles are not each other's."""
    credit = "Theo Cổng thông tin điện tử thành phố, tin và ảnh do phóng viên thường trú gửi về."
    other = [
        "Chiều qua, Trung tâm Y tế quận tổ chức tiêm vắc xin miễn phí cho hơn ba trăm trẻ em "
        "dưới năm tuổi tại nhà văn hóa phường.",
        "Các phụ huynh được bác sĩ hướng dẫn theo dõi sức khỏe của trẻ trong hai ngày sau khi "
        "tiêm và báo ngay cho trạm y tế khi có dấu hiệu bất thường.",
    ]
    menu = ["Trang chủ", "Thời sự", "Giao thông", "Kinh tế"]
    one = _ingest(FULL_URL, _html([*BODY, credit], menu), WHEN, committed)
    two = _ingest(
        "https://tinnhanh.example.vn/y-te/tiem-chung.html",
        _html([*other, credit], menu),
        WHEN + timedelta(hours=1),
        committed,
    )
    a, b = sorted((one.pk, two.pk))
    for pair in CandidatePair.objects.filter(a_id=a, b_id=b):
        assert "passages" not in pair.channel_names


def test_a_stored_brief_is_found_by_the_longer_story_arriving_after_it(committed) -> None:
    """The story's own lookup asks for PASSAGE_SHARED_MIN shared passages; it keeps the
    stored brief of two passages with the two it shares (ingest.passages.hit_shared_min),
    in the pipeline and in the check API alike."""
    story = [LEAD, *BODY, *MORE]
    flat = _ingest(FLAT_URL, FLAT, WHEN, committed)
    result = candidates.check(text="\n".join(story), doc_type="article")
    match = next(m for m in result.matches if m.document_id == flat.pk)
    assert "passages" in match.channels
    full = _ingest(FULL_URL, _html(story, ["Trang chủ"]), WHEN + timedelta(hours=1), committed)
    a, b = sorted((full.pk, flat.pk))
    pair = CandidatePair.objects.get(method__key=settings.ACTIVE_METHOD, a_id=a, b_id=b)
    assert pair.shared_passages < settings.PASSAGE_SHARED_MIN
    assert "passages" in pair.channel_names and not pair.below_floor
