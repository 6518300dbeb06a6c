"""A Chinese repost end to end on PostgreSQL: the original and a repost of it
(retitled, one paragraph cut, a 本文来源 line added, on another site; and the same repost
converted to traditional characters, as a Taiwan or Hong Kong site would run it) are
ingested by the pipeline, and the check API answered with the repost's text names the
original."""

import io
from datetime import UTC, datetime

import opencc
import pytest

from ingest import services
from ingest.core.methods import DEFAULT_KEY
from ingest.core.readers import read_warc
from ingest.models import CandidatePair, Document
from tests import factories

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

PARAGRAPHS = [
    "本报讯 记者从市水务局获悉，经过三年的综合治理，流经老城区的青溪河已经恢复了多年未见的清澈，"
    "沿岸十二个社区的居民重新走上了河边步道，晨练和散步的人越来越多。",
    "青溪河全长约二十七公里，上世纪九十年代以来，沿岸工厂和生活污水直排入河，河道一度发黑发臭，"
    "夏季蚊虫滋生，附近居民不得不常年紧闭门窗，不少老住户因此搬离了祖辈居住的老街。",
    "二〇二三年春天，市里启动青溪河综合整治工程，总投资约十四亿元，分为截污纳管、清淤疏浚、"
    "生态修复和景观提升四个阶段，由水务、环保、住建等六个部门联合推进，并邀请居民代表全程监督。",
    "截污纳管是整个工程中难度最大的一环。施工人员在老城区狭窄的巷道里铺设了近四十公里的污水管网，"
    "为了不影响居民出行，很多路段只能在夜间分段施工，白天恢复通行，工期因此延长了将近半年。",
    "清淤阶段共清理河底淤泥约三十万立方米，这些淤泥经过脱水和无害化处理后，一部分被制成园林用土，"
    "重新铺设在沿岸绿地中，另一部分被送往郊区的建材厂，烧制成了透水砖。",
    "在生态修复阶段，工程团队在河道中种植了苦草、金鱼藻等十余种沉水植物，并投放了螺蛳和鲢鱼，"
    "逐步建立起能够自我净化的水下生态系统。监测数据显示，河水透明度已从不足二十厘米提高到一米以上。",
    "景观提升没有大拆大建，而是保留了沿岸的老石桥、古樟树和青石板路，只在必要处增设了休息座椅、"
    "照明设施和无障碍坡道。一位在河边住了六十多年的老人说，现在的青溪河又有了他小时候的样子。",
    "市水务局有关负责人表示，下一步将建立河长巡查和智慧监测相结合的长效管护机制，在重点河段安装"
    "水质自动监测站，一旦发现异常排放，执法人员可以在两小时内赶到现场处置。",
    "专家认为，青溪河的治理经验在于源头截污与生态修复并重，同时充分听取沿岸居民的意见，"
    "让群众成为河道治理的参与者和受益者，这种做法值得其他城市的老城区借鉴。",
    "据了解，今年下半年，该市还将启动另外三条城区河道的整治工作，力争在二〇二八年前全面消除城区黑臭水体，"
    "让更多市民在家门口就能享受到水清岸绿的生活环境。",
]
TITLE = "三年治理让老城区青溪河重现清澈"
REPOST_TITLE = "关注｜昔日黑臭河变身市民后花园，青溪河是怎么做到的？"
SOURCE_LINE = "本文来源：江南日报 责任编辑：陈晓 版权归原作者所有，如有侵权请联系删除。"
WHEN = datetime(2026, 6, 1, 8, tzinfo=UTC)


def _html(title: str, paragraphs: list[str], menu: list[str]) -> bytes:
    links = "".join(f'<li><a href="/{i}">{m}</a></li>' for i, m in enumerate(menu))
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        f"<!doctype html><html lang='zh-CN'><head><meta charset='utf-8'><title>{title}</title>"
        f"</head><body><nav><ul>{links}</ul></nav><main><article><h1>{title}</h1>{body}"
        "</article></main><footer><p>网站备案号 示例网络科技有限公司 联系我们</p></footer>"
        "</body></html>"
    ).encode()


ORIGINAL_URL = "https://news.jiangnan.example/city/qingxi.html"
REPOST_URL = "https://www.huijutoutiao.example/a/88231.html"
ORIGINAL = _html(TITLE, PARAGRAPHS, ["首页", "本地", "民生", "财经", "体育"])
REPOST_BODY = [*PARAGRAPHS[:4], *PARAGRAPHS[5:], SOURCE_LINE]  # one paragraph cut
MENU = ["推荐", "热点", "视频", "科技", "娱乐"]


def _repost(script: str) -> tuple[str, list[str]]:
    """The repost's title and paragraphs, in simplified or traditional characters."""
    if script == "simplified":
        return REPOST_TITLE, REPOST_BODY
    to_traditional = opencc.OpenCC("s2twp").convert
    return to_traditional(REPOST_TITLE), [to_traditional(p) for p in REPOST_BODY]


@pytest.fixture(params=["simplified", "traditional"])
def ingested(request, db, committed, settings):
    """The original and the repost, ingested by the pipeline as a crawl would be."""
    assert settings.ACTIVE_METHOD == DEFAULT_KEY
    title, body = _repost(request.param)
    repost = _html(title, body, MENU)
    data = factories.warc_bytes([(ORIGINAL_URL, ORIGINAL), (REPOST_URL, repost)], date=WHEN)
    with committed():
        services.batch_ingest(source="zh", fmt="warc", items=read_warc(io.BytesIO(data)))
    original = Document.objects.get(url=ORIGINAL_URL)
    return original, Document.objects.get(url=REPOST_URL), "\n\n".join([title, *body])


def test_the_pipeline_pairs_a_chinese_repost_with_its_original(ingested) -> None:
    original, repost, _ = ingested
    a, b = sorted((original.pk, repost.pk))
    pair = CandidatePair.objects.get(method__key=DEFAULT_KEY, a_id=a, b_id=b)
    assert pair.channel_names  # nominated by some channel


def test_the_check_api_returns_the_original_of_a_chinese_repost(
    ingested, client, api_token
) -> None:
    original, _, text = ingested
    r = client.post(
        "/api/v1/check",
        {"text": text, "url": REPOST_URL},
        content_type="application/json",
        headers={"Authorization": f"Bearer {api_token}"},
    )
    assert r.status_code == 200, r.content
    answer = r.json()
    assert answer["method"] == DEFAULT_KEY
    assert answer["verdict"] == "near"
    match = next(m for m in answer["matches"] if m["document_id"] == original.pk)
    assert match["url"] == ORIGINAL_URL
    assert "passages" in match["channels"]
    # The repost holds most of the original's passages, and the other way round.
    assert match["checked_in_match"] > 0.7 and match["match_in_checked"] > 0.7
