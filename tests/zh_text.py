"""Deterministic Chinese pseudo-articles for tests and benches (no data files)."""

import random

# Common two- and three-character words of news prose.
_WORDS = (
    "记者 今天 表示 城市 政府 会议 决定 项目 计划 发展 经济 市场 公司 产品 价格 消费者 "
    "工作 部门 地区 居民 交通 道路 建设 投资 资金 银行 教育 学校 学生 医院 医生 健康 "
    "环境 保护 河流 空气 天气 降雨 气温 农业 农民 粮食 科技 研究 技术 网络 手机 数据 "
    "文化 历史 博物馆 旅游 游客 节日 活动 比赛 球队 体育 国际 合作 贸易 出口 进口 增长 "
    "下降 调查 报告 专家 认为 需要 已经 继续 加强 推动 提高 服务 管理 安全 问题 措施"
)
WORDS_ZH = _WORDS.split()


def chinese_article_text(seed: int, chars: int = 600) -> str:
    """Paragraphs of Chinese sentences (。and ，), about `chars` characters; `seed`
    picks a distinct sequence."""
    rng = random.Random(seed)
    paragraphs: list[str] = []
    total = 0
    while total < chars:
        sentences = []
        for _ in range(rng.randint(2, 4)):
            clauses = ["".join(rng.choice(WORDS_ZH) for _ in range(rng.randint(3, 6)))]
            clauses += ["".join(rng.choice(WORDS_ZH) for _ in range(rng.randint(2, 5)))]
            sentences.append("，".join(clauses) + "。")
        paragraph = "".join(sentences)
        paragraphs.append(paragraph)
        total += len(paragraph)
    return "\n\n".join(paragraphs)
