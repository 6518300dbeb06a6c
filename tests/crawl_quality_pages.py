"""Crawl-quality fixtures written for the tests: login walls served at ten URLs, captcha
and access-denied pages, and client-rendered shells whose "main text" is the site menu,
in English, Chinese and Vietnamese — beside real-looking articles and their reposts.

Every page here is invented for the tests (no page is copied from a crawl). ``pages()``
returns them as (kind, language, url, html, http status); ``jsonl()`` as a crawl file.
"""

import json
from dataclasses import dataclass
from html import escape

LANGS = ("en", "zh", "vi")

_SITES = {
    "en": ("courier.example.com", "The Example Courier"),
    "zh": ("xinwen.example.cn", "示例新闻网"),
    "vi": ("baomoi.example.vn", "Báo Ví Dụ"),
}
_REPOST_SITES = {
    "en": ("dailydigest.example.net", "Daily Digest"),
    "zh": ("zixun.example.com.cn", "示例资讯"),
    "vi": ("tinnhanh.example.vn", "Tin Nhanh Ví Dụ"),
}
_MENUS = {
    "en": [
        "Home",
        "World",
        "Politics",
        "Business",
        "Markets",
        "Technology",
        "Science",
        "Health",
        "Sport",
        "Culture",
        "Travel",
        "Opinion",
        "Video",
        "Podcasts",
        "Weather",
    ],
    "zh": [
        "首页",
        "国内",
        "国际",
        "财经",
        "科技",
        "体育",
        "娱乐",
        "汽车",
        "房产",
        "教育",
        "健康",
        "旅游",
        "视频",
        "图片",
        "评论",
    ],
    "vi": [
        "Trang chủ",
        "Thời sự",
        "Thế giới",
        "Kinh doanh",
        "Giải trí",
        "Thể thao",
        "Pháp luật",
        "Giáo dục",
        "Sức khỏe",
        "Đời sống",
        "Du lịch",
        "Khoa học",
        "Số hóa",
        "Xe",
        "Ý kiến",
    ],
}
_TOPICS = {
    "en": ["Election 2026", "Climate summit", "Rail strike", "Housing crisis", "World Cup"],
    "zh": ["两会专题", "气候峰会", "春运进行时", "楼市观察", "世界杯"],
    "vi": ["Bầu cử 2026", "Hội nghị khí hậu", "Tết Nguyên đán", "Thị trường nhà đất", "World Cup"],
}
_FOOTER = {
    "en": ["About us", "Contact", "Advertise", "Privacy", "Terms"],
    "zh": ["关于我们", "联系我们", "广告服务", "隐私政策", "网站地图"],
    "vi": ["Giới thiệu", "Liên hệ", "Quảng cáo", "Chính sách bảo mật", "Điều khoản"],
}

# The login wall of each site: the same page at every URL it guards.
_WALLS = {
    "en": (
        "Sign in",
        "<h1>Sign in to keep reading</h1><p>This story is for members. Please sign in to "
        "continue reading, or create a free account.</p>",
        "Email",
        "Password",
        "Sign in",
    ),
    "zh": (
        "用户登录",
        "<h1>请登录后查看全文</h1><p>本文仅对注册会员开放，登录后查看完整内容。</p>",
        "用户名",
        "密码",
        "登录",
    ),
    "vi": (
        "Đăng nhập",
        "<h1>Vui lòng đăng nhập</h1><p>Nội dung này chỉ dành cho thành viên. Đăng nhập để "
        "xem toàn bộ bài viết.</p>",
        "Tên đăng nhập",
        "Mật khẩu",
        "Đăng nhập",
    ),
}
# Captcha and access-denied pages served with HTTP 200 (only their words say so).
_BLOCKS = {
    "en": ("Access denied", "<h1>Access denied</h1><p>Your request was blocked.</p>"),
    "zh": ("安全验证", "<h1>请输入验证码</h1><p>访问过于频繁，请完成安全验证后继续访问。</p>"),
    "vi": (
        "Truy cập bị từ chối",
        "<h1>Truy cập bị từ chối</h1><p>Bạn không có quyền truy cập trang này.</p>",
    ),
}

_ARTICLES = {
    "en": [
        (
            "Harbour city opens its first tidal power station",
            [
                "The harbour city switched on its first tidal power station on Tuesday, "
                "ending a decade of planning, two public inquiries and a long argument "
                "about what the turbines would do to the estuary's fish.",
                "The station's twelve turbines sit on the seabed at the mouth of the river "
                "and turn in both directions as the tide comes in and goes out. Engineers "
                "expect them to supply about a fifth of the city's electricity in an "
                "ordinary year, more in winter when the tides run strongest.",
                "The project cost 410 million pounds, most of it borrowed against the "
                "power the station will sell over the next thirty years. The council says "
                "the price of that power is fixed, which will protect households from "
                "the swings of the gas market that doubled bills two winters ago.",
                "Fishermen who opposed the plan said they would watch the catch closely. "
                "A monitoring programme paid for by the operator will count salmon and "
                "sea trout passing the turbines for the first five years, and the "
                "results will be published every spring.",
                "The mayor called the opening a turning point for a city that once lived "
                "on coal shipped out of the same harbour. Students from the technical "
                "college will train as turbine technicians at the station from September.",
            ],
        ),
        (
            "Library lends out tools as well as books",
            [
                "The central library has started lending drills, ladders, sewing machines "
                "and pressure washers alongside its books, after a survey found that most "
                "households use a power drill for less than fifteen minutes in its life.",
                "Members borrow tools for a week at a time with the same card they use for "
                "books. Volunteers check each tool when it comes back and repair what they "
                "can in a workshop behind the reading room, open on Saturday mornings.",
                "The library began with three hundred tools given by residents and a small "
                "grant from the regional council. The most popular items in the first "
                "month were a carpet cleaner, a tile cutter and a set of camping stoves.",
                "Librarians say the scheme has brought in people who had not visited for "
                "years. Several stayed to join the repair sessions, where retired "
                "electricians and carpenters teach basic maintenance to anyone who turns up.",
                "Other libraries in the region have asked for advice, and two of them plan "
                "to open their own tool collections in the spring with the same rules.",
            ],
        ),
    ],
    "zh": [
        (
            "我市首座潮汐发电站正式并网发电",
            [
                "本报讯 经过十年规划和两轮公开听证，我市首座潮汐发电站于本周二正式并网发电，"
                "关于涡轮机是否会影响河口鱼类的长期争论也暂告一段落。",
                "电站的十二台涡轮机安装在入海口的海床上，涨潮和落潮时都能双向转动。"
                "工程师预计，在普通年份电站可满足全市约五分之一的用电需求，冬季潮汐最强时发电量更高。",
                "项目总投资四十一亿元，其中大部分资金以电站未来三十年的售电收入作为抵押借入。"
                "市政府表示，电价已经锁定，可以帮助居民免受天然气市场价格剧烈波动的影响。",
                "曾经反对该项目的渔民表示，他们会密切关注渔获量的变化。运营方出资的监测计划将在"
                "头五年统计经过涡轮机的鲑鱼和海鳟数量，监测结果每年春季向社会公布。",
                "市长称，电站投运是这座曾经依靠煤炭外运的港口城市的一个转折点。"
                "从九月起，本市职业技术学院的学生将在电站接受涡轮机技术员培训。",
            ],
        ),
        (
            "图书馆不仅借书还能借工具",
            [
                "市中心图书馆近日开始在借阅图书的同时出借电钻、梯子、缝纫机和高压清洗机等工具。"
                "此前的一项调查发现，大多数家庭的电钻在整个使用寿命中的使用时间还不到十五分钟。",
                "读者使用借书证即可借用工具，每次借期一周。志愿者会在工具归还时逐一检查，"
                "并在阅览室后面的维修间修理能修的工具，维修间每周六上午开放。",
                "图书馆最初收到居民捐赠的三百件工具，并获得了区政府的一小笔资助。"
                "第一个月最受欢迎的是地毯清洗机、瓷砖切割机和一套露营炉具。",
                "馆员说，这项服务吸引了许多多年没有来过图书馆的市民。其中不少人留下来参加维修课，"
                "退休的电工和木匠在课上向前来的市民传授基本的维修保养知识。",
                "本地区的其他图书馆已经前来取经，其中两家计划在明年春天按照同样的规则开设工具借阅服务。",
            ],
        ),
    ],
    "vi": [
        (
            "Thành phố cảng khánh thành nhà máy điện thủy triều đầu tiên",
            [
                "Sau mười năm chuẩn bị và hai lần lấy ý kiến công khai, nhà máy điện thủy "
                "triều đầu tiên của thành phố cảng đã chính thức hòa lưới điện vào sáng thứ Ba.",
                "Mười hai tua-bin của nhà máy được đặt dưới đáy biển ở cửa sông và quay theo "
                "cả hai chiều khi thủy triều lên và xuống. Các kỹ sư dự kiến nhà máy sẽ cung "
                "cấp khoảng một phần năm lượng điện của thành phố trong một năm bình thường.",
                "Dự án có tổng vốn đầu tư 4.100 tỷ đồng, phần lớn được vay dựa trên nguồn thu "
                "bán điện trong ba mươi năm tới. Chính quyền thành phố cho biết giá điện đã "
                "được cố định, giúp các hộ gia đình tránh được biến động của thị trường khí đốt.",
                "Những ngư dân từng phản đối dự án cho biết họ sẽ theo dõi sát sản lượng đánh "
                "bắt. Chương trình giám sát do đơn vị vận hành chi trả sẽ đếm số cá hồi đi qua "
                "các tua-bin trong năm năm đầu và công bố kết quả vào mỗi mùa xuân.",
                "Chủ tịch thành phố gọi sự kiện này là bước ngoặt đối với một đô thị từng sống "
                "nhờ than đá xuất qua chính bến cảng này. Từ tháng Chín, sinh viên trường cao "
                "đẳng kỹ thuật sẽ được đào tạo thành kỹ thuật viên tua-bin ngay tại nhà máy.",
            ],
        ),
        (
            "Thư viện cho mượn cả dụng cụ lẫn sách",
            [
                "Thư viện trung tâm vừa bắt đầu cho bạn đọc mượn máy khoan, thang, máy khâu và "
                "máy rửa áp lực bên cạnh sách, sau khi một khảo sát cho thấy phần lớn gia đình "
                "chỉ dùng máy khoan chưa tới mười lăm phút trong suốt vòng đời của nó.",
                "Bạn đọc mượn dụng cụ trong một tuần bằng chính thẻ thư viện dùng để mượn sách. "
                "Tình nguyện viên kiểm tra từng món khi được trả lại và sửa những gì có thể "
                "trong xưởng nhỏ phía sau phòng đọc, mở cửa vào sáng thứ Bảy hằng tuần.",
                "Thư viện khởi đầu với ba trăm dụng cụ do người dân tặng cùng một khoản tài trợ "
                "nhỏ của quận. Những món được mượn nhiều nhất trong tháng đầu là máy giặt thảm, "
                "máy cắt gạch và một bộ bếp cắm trại.",
                "Các thủ thư cho biết dịch vụ này đã đưa nhiều người lâu năm không đến thư viện "
                "quay trở lại. Không ít người ở lại tham gia các buổi sửa chữa, nơi thợ điện và "
                "thợ mộc đã nghỉ hưu hướng dẫn cách bảo dưỡng cơ bản cho bất kỳ ai đến học.",
                "Một số thư viện khác trong vùng đã đến học hỏi kinh nghiệm, và hai nơi dự định "
                "mở dịch vụ cho mượn dụng cụ vào mùa xuân tới với cùng quy định.",
            ],
        ),
    ],
}
_REPOST_LINES = {
    "en": "Source: The Example Courier. Republished with permission.",
    "zh": "本文来源：示例新闻网 版权归原作者所有",
    "vi": "Nguồn: Báo Ví Dụ",
}


_OG = '<meta property="og:type" content="article">'
_LD = (
    '<script type="application/ld+json">'
    '{"@context": "https://schema.org", "@type": "NewsArticle"}</script>'
)


@dataclass(frozen=True)
class Page:
    kind: str  # "article" | "repost" | "login_wall" | "block" | "shell"
    lang: str
    url: str
    html: str
    status: int = 200
    of: str = ""  # a repost: the URL of the article it copies


def _links(words: list[str], host: str, cls: str) -> str:
    items = "".join(
        f'<li><a href="https://{host}/{i}/">{escape(w)}</a></li>' for i, w in enumerate(words)
    )
    return f'<div class="{cls}"><ul>{items}</ul></div>'


def _page(
    lang: str, host: str, site: str, title: str, body: str, *, scripts: str = "", head: str = ""
) -> str:
    """A page of the site's template: menu, topic bar, the body, a footer of links."""
    return (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">{head}'
        f"<title>{escape(title)} | {escape(site)}</title></head><body>"
        f'<div class="header"><a class="logo" href="https://{host}/">{escape(site)}</a></div>'
        f"{_links(_MENUS[lang], host, 'top-menu')}{_links(_TOPICS[lang], host, 'topic-bar')}"
        f"{body}"
        f'<div class="footer">{_links(_FOOTER[lang], host, "footer-links")}'
        f"<p>© 2026 {escape(site)}</p></div>{scripts}</body></html>"
    )


def _article_body(title: str, paragraphs: list[str], extra: str = "") -> str:
    ps = "".join(f"<p>{escape(p)}</p>" for p in paragraphs)
    tail = f"<p>{escape(extra)}</p>" if extra else ""
    return f'<div class="article"><h1>{escape(title)}</h1>{ps}{tail}</div>'


def pages() -> list[Page]:
    out: list[Page] = []
    for lang in LANGS:
        host, site = _SITES[lang]
        rhost, rsite = _REPOST_SITES[lang]
        for n, (title, paragraphs) in enumerate(_ARTICLES[lang]):
            url = f"https://{host}/news/2026/03/story-{n + 1}.html"
            html = _page(lang, host, site, title, _article_body(title, paragraphs), head=_OG)
            out.append(Page("article", lang, url, html))
            # The same story on another site under its template (the second one with its
            # source line); that site declares its stories in JSON-LD.
            body = _article_body(title, paragraphs, _REPOST_LINES[lang] if n else "")
            html = _page(lang, rhost, rsite, title, body, head=_LD)
            out.append(
                Page("repost", lang, f"https://{rhost}/tin/{n + 1}/repost.html", html, of=url)
            )
        label, text, user, password, button = _WALLS[lang]
        wall = (
            f'<div class="login-box">{text}<form method="post" action="/login">'
            f'<label>{escape(user)} <input name="user"></label>'
            f'<label>{escape(password)} <input type="password" name="password"></label>'
            f"<button>{escape(button)}</button></form></div>"
        )
        wall_html = _page(lang, host, site, label, wall)
        for i in range(10):
            url = f"https://{host}/login?next=/news/2026/03/{i}.html"
            out.append(Page("login_wall", lang, url, wall_html))
        title, text = _BLOCKS[lang]
        block_html = _page(lang, host, site, title, f'<div class="notice">{text}</div>')
        for i in range(3):
            url = f"https://{host}/search/?q=item&page={i + 1}"
            out.append(Page("block", lang, url, block_html))
        # Client-rendered pages fetched without running their script: what is left is
        # the template's menus; each URL has its own title.
        for i in range(10):
            shell = _page(
                lang,
                host,
                site,
                f"{_TOPICS[lang][i % 5]} {i + 1}",
                '<div id="app"></div>',
                scripts=f'<script src="https://{host}/static/app.{i}.js"></script>',
            )
            out.append(Page("shell", lang, f"https://{host}/live/{i + 1}/", shell))
    return out


def jsonl(items: list[Page]) -> bytes:
    lines = (
        json.dumps({"url": p.url, "html": p.html, "status": p.status}, ensure_ascii=False)
        for p in items
    )
    return ("\n".join(lines) + "\n").encode("utf-8")
