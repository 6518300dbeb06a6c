"""Invented Chinese and Vietnamese article pages for the language benchmark's tests."""

import gzip
import json
from pathlib import Path

ZH_SENTENCES = (
    "本市今年新建的城市公园已经全部对外开放，周末前来散步的市民络绎不绝。",
    "公园管理处表示，园内新增了两条健身步道和一处儿童游乐场。",
    "据介绍，项目总投资约为三亿元，主要用于绿化和排水设施改造。",
    "附近居民说，以前这里是一片废弃的厂房，现在环境好多了。",
    "下一步，有关部门还将在公园周边增设公交站点和停车位。",
    "专家认为，城市公园建设应当兼顾生态功能和市民的日常需求。",
)
VI_SENTENCES = (
    "Thành phố vừa đưa vào sử dụng công viên mới ở khu vực phía tây với nhiều cây xanh.",
    "Ban quản lý cho biết công viên có hai đường chạy bộ và một khu vui chơi cho trẻ em.",
    "Tổng vốn đầu tư của dự án khoảng ba trăm tỷ đồng, chủ yếu dành cho cây xanh và thoát nước.",
    "Người dân sống gần đó nói rằng trước đây khu đất này là nhà xưởng bỏ hoang nhiều năm.",
    "Thời gian tới, chính quyền sẽ bố trí thêm điểm dừng xe buýt và bãi đỗ xe quanh công viên.",
    "Các chuyên gia cho rằng công viên đô thị cần kết hợp chức năng sinh thái và đời sống.",
)
MENUS = {
    "zh": ("首页", "新闻", "财经", "体育", "科技", "娱乐", "汽车", "房产"),
    "vi": ("Trang chủ", "Thời sự", "Kinh doanh", "Thể thao", "Giải trí", "Pháp luật"),
}


def article_html(lang: str, site: int, article: int) -> str:
    paras = _paras(lang, article)  # each article its own order and numbers
    menu = "".join(
        f'<li><a href="/s{site}/{i}">{m}{site}</a></li>' for i, m in enumerate(MENUS[lang])
    )
    body = "".join(f"<p>{p}</p>" for p in paras)
    return (
        f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8">'
        f"<title>Site {site} article {article}</title></head><body>"
        f'<header><ul class="nav">{menu}</ul></header>'
        f'<div class="main"><div class="article"><h1>Site {site} article {article}</h1>{body}'
        f'</div><div class="side"><a href="/hot">Hot {site}</a></div></div>'
        f"<footer><p>© 2026 site {site}</p></footer></body></html>"
    )


def _paras(lang: str, article: int) -> list[str]:
    sentences = ZH_SENTENCES if lang == "zh" else VI_SENTENCES
    return [
        f"{sentences[(i + article) % len(sentences)]} {article}-{i}"
        for i in range(2 * len(sentences))
    ]


def _gold(lang: str, article: int) -> str:
    return "\n".join(_paras(lang, article))


def write_data(root: Path) -> Path:
    """A data directory shaped like zh-vi-dev: three sites per language, two articles each."""
    root.mkdir(parents=True, exist_ok=True)
    rows = []
    for lang in ("zh", "vi"):
        for site in range(3):
            for article in range(2):
                n = site * 2 + article
                rows.append(
                    {
                        "id": f"{lang}-r-{n:04d}",
                        "url": f"https://site{site}.example-{lang}.test/a/{article}.html",
                        "html": article_html(lang, site, n),
                        "lang": lang,
                        "origin": "real" if lang == "zh" else "derived",
                        "page_kind": "article",
                        # Gold text for the first article of each site (extraction F1).
                        "gold_text": _gold(lang, n) if article == 0 else None,
                    }
                )
    with gzip.open(root / "pages.jsonl.gz", "wt", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    pair = {
        "a": "zh-r-0000",
        "b": "zh-r-0002",
        "label": "different",
        "kind": "zh_other_site",
        "lang": "zh",
        "natural": True,
    }
    (root / "pairs.jsonl").write_text(json.dumps(pair) + "\n")
    return root
