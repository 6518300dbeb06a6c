"""Ten short news stories written for the semantic bench, each in English, Chinese and
Vietnamese (translated by hand for this bench; not crawled). Stories come in pairs on one
topic (the same council, the same weather, ...): the other story of a topic is the hard
negative of a translated copy."""

# (topic, {language: text})
STORIES: list[tuple[str, dict[str, str]]] = [
    (
        "council",
        {
            "en": "The city council voted on Tuesday to build a new bridge across the river. "
            "The project will cost 40 million dollars and construction is expected to begin "
            "next spring. The mayor said the bridge would cut commuting times for thousands "
            "of residents who now drive through the old town centre every day.",
            "zh": "市议会周二投票决定在河上修建一座新桥。该项目将耗资4000万美元，预计明年春天"
            "开工。市长表示，这座桥将为目前每天开车穿过老城中心的数千名居民缩短通勤时间。",
            "vi": "Hội đồng thành phố hôm thứ Ba đã bỏ phiếu xây dựng một cây cầu mới bắc qua "
            "sông. Dự án sẽ tiêu tốn 40 triệu đô la và dự kiến khởi công vào mùa xuân năm sau. "
            "Thị trưởng cho biết cây cầu sẽ rút ngắn thời gian đi lại cho hàng nghìn người dân "
            "hiện phải lái xe qua trung tâm phố cổ mỗi ngày.",
        },
    ),
    (
        "council",
        {
            "en": "The city council voted on Tuesday to raise parking fees in the town centre. "
            "The change will bring in two million dollars a year and takes effect next month. "
            "Shop owners warned that higher fees would keep customers away from the high "
            "street, while the council said the money would pay for more buses.",
            "zh": "市议会周二投票决定提高市中心的停车费。这一调整每年将带来200万美元收入，"
            "并于下月生效。商户警告说，停车费上涨会让顾客远离商业街，而市议会表示这笔钱将"
            "用于增加公交车。",
            "vi": "Hội đồng thành phố hôm thứ Ba đã bỏ phiếu tăng phí đỗ xe ở trung tâm thị "
            "trấn. Thay đổi này sẽ mang về hai triệu đô la mỗi năm và có hiệu lực từ tháng "
            "sau. Các chủ cửa hàng cảnh báo phí cao hơn sẽ khiến khách hàng tránh xa phố mua "
            "sắm, trong khi hội đồng cho biết số tiền sẽ được dùng để thêm xe buýt.",
        },
    ),
    (
        "weather",
        {
            "en": "A powerful typhoon made landfall on the southern coast early on Sunday, "
            "forcing more than 200,000 people to leave their homes. Strong winds tore roofs "
            "off houses and flooded several fishing villages. Officials said schools would "
            "stay closed until Wednesday and warned of landslides in the hills.",
            "zh": "一场强台风周日清晨在南部沿海登陆，迫使20多万人撤离家园。强风掀翻了房屋的"
            "屋顶，多个渔村被淹。官员表示，学校将停课至周三，并警告山区可能发生山体滑坡。",
            "vi": "Một cơn bão mạnh đã đổ bộ vào bờ biển phía nam sáng sớm Chủ nhật, buộc hơn "
            "200.000 người phải rời khỏi nhà. Gió mạnh làm tốc mái nhiều ngôi nhà và gây ngập "
            "một số làng chài. Các quan chức cho biết trường học sẽ đóng cửa đến thứ Tư và "
            "cảnh báo nguy cơ sạt lở đất ở vùng đồi núi.",
        },
    ),
    (
        "weather",
        {
            "en": "A heatwave pushed temperatures above 40 degrees in the capital for a third "
            "day, and electricity demand reached a record high on Monday afternoon. The grid "
            "operator asked factories to shift work to the night. Doctors urged older people "
            "to stay indoors and drink water often.",
            "zh": "热浪连续第三天使首都气温超过40度，周一下午用电需求创下历史新高。电网运营商"
            "要求工厂把生产改到夜间。医生敦促老年人待在室内并经常喝水。",
            "vi": "Đợt nắng nóng đã đẩy nhiệt độ ở thủ đô lên trên 40 độ trong ngày thứ ba "
            "liên tiếp, và nhu cầu điện đạt mức cao kỷ lục vào chiều thứ Hai. Đơn vị vận hành "
            "lưới điện đề nghị các nhà máy chuyển sang làm việc ban đêm. Các bác sĩ khuyên "
            "người cao tuổi ở trong nhà và uống nước thường xuyên.",
        },
    ),
    (
        "technology",
        {
            "en": "The phone maker unveiled its first foldable phone on Thursday. The device "
            "opens into a small tablet, has a battery that lasts two days and will go on sale "
            "in March at 1,299 dollars. Analysts said the price was lower than expected and "
            "could put pressure on its rivals.",
            "zh": "这家手机制造商周四发布了其首款折叠屏手机。该设备展开后是一台小平板，电池可"
            "续航两天，将于三月以1299美元的价格开售。分析师表示，这一价格低于预期，可能给竞争"
            "对手带来压力。",
            "vi": "Nhà sản xuất điện thoại đã ra mắt chiếc điện thoại gập đầu tiên vào thứ Năm. "
            "Thiết bị mở ra thành một máy tính bảng nhỏ, có pin dùng được hai ngày và sẽ được "
            "bán từ tháng Ba với giá 1.299 đô la. Các nhà phân tích cho rằng mức giá thấp hơn "
            "dự kiến và có thể gây áp lực lên các đối thủ.",
        },
    ),
    (
        "technology",
        {
            "en": "A new chip factory opened outside the city on Friday and will employ 3,000 "
            "workers when it runs at full capacity. The plant makes memory chips for cars and "
            "data centres. The company said it chose the site for its skilled engineers and "
            "its supply of clean water.",
            "zh": "一家新的芯片工厂周五在城外投产，满负荷运转时将雇用3000名工人。该工厂为汽车"
            "和数据中心生产存储芯片。公司表示，选择这里是因为当地有熟练的工程师和充足的清洁"
            "水源。",
            "vi": "Một nhà máy sản xuất chip mới đã khai trương ở ngoại ô thành phố hôm thứ Sáu "
            "và sẽ sử dụng 3.000 công nhân khi chạy hết công suất. Nhà máy sản xuất chip nhớ "
            "cho ô tô và trung tâm dữ liệu. Công ty cho biết họ chọn địa điểm này vì có các "
            "kỹ sư lành nghề và nguồn nước sạch.",
        },
    ),
    (
        "sport",
        {
            "en": "The national football team won the regional cup on Saturday, beating the "
            "hosts two goals to one in the final. The winning goal came in the last minute "
            "from a young striker playing his first tournament. Thousands of fans celebrated "
            "in the streets of the capital until dawn.",
            "zh": "国家足球队周六在决赛中以2比1击败东道主，赢得地区杯冠军。制胜球由一名首次"
            "参加大赛的年轻前锋在最后一分钟打进。数千名球迷在首都街头庆祝到天亮。",
            "vi": "Đội tuyển bóng đá quốc gia đã vô địch cúp khu vực hôm thứ Bảy sau khi đánh "
            "bại đội chủ nhà với tỷ số 2-1 trong trận chung kết. Bàn thắng quyết định đến ở "
            "phút cuối cùng từ một tiền đạo trẻ lần đầu dự giải. Hàng nghìn cổ động viên đã "
            "ăn mừng trên đường phố thủ đô đến tận sáng.",
        },
    ),
    (
        "sport",
        {
            "en": "A 24-year-old runner broke the national marathon record on Sunday, finishing "
            "the city race in two hours and six minutes. She said she had trained at altitude "
            "for three months. Race organisers said a record 30,000 people took part this "
            "year, despite the rain.",
            "zh": "一名24岁的选手周日打破了全国马拉松纪录，以2小时6分完成城市马拉松。她说自己"
            "在高原训练了三个月。赛事组织者表示，尽管下雨，今年仍有创纪录的3万人参赛。",
            "vi": "Một vận động viên 24 tuổi đã phá kỷ lục marathon quốc gia hôm Chủ nhật khi "
            "về đích cuộc đua thành phố sau hai giờ sáu phút. Cô cho biết mình đã tập luyện "
            "trên vùng núi cao trong ba tháng. Ban tổ chức cho biết năm nay có kỷ lục 30.000 "
            "người tham gia dù trời mưa.",
        },
    ),
    (
        "health",
        {
            "en": "The provincial hospital opened a new cancer treatment centre on Monday with "
            "two radiotherapy machines and 120 beds. Patients who used to travel to the "
            "capital for treatment can now be treated close to home. The health minister "
            "said waiting times should fall by half within a year.",
            "zh": "省医院周一启用了一座新的癌症治疗中心，配备两台放疗设备和120张床位。过去需"
            "要到首都治疗的患者现在可以在家附近接受治疗。卫生部长表示，一年内等待时间有望缩"
            "短一半。",
            "vi": "Bệnh viện tỉnh đã khai trương trung tâm điều trị ung thư mới vào thứ Hai với "
            "hai máy xạ trị và 120 giường bệnh. Những bệnh nhân trước đây phải lên thủ đô "
            "điều trị nay có thể được chữa gần nhà. Bộ trưởng Y tế cho biết thời gian chờ đợi "
            "sẽ giảm một nửa trong vòng một năm.",
        },
    ),
    (
        "health",
        {
            "en": "Health authorities began a free flu vaccination campaign for people over 65 "
            "this week. Vaccines are available at local clinics and pharmacies until the end "
            "of December. Officials said last winter's flu season filled hospital wards and "
            "they hope to reach two million older people.",
            "zh": "卫生部门本周启动了面向65岁以上人群的免费流感疫苗接种活动。疫苗在社区诊所和"
            "药店提供，截止到12月底。官员表示，去年冬季的流感季使医院病房爆满，他们希望为200"
            "万老年人接种。",
            "vi": "Cơ quan y tế tuần này đã bắt đầu chiến dịch tiêm vắc xin cúm miễn phí cho "
            "người trên 65 tuổi. Vắc xin có tại các phòng khám và nhà thuốc địa phương đến hết "
            "tháng Mười Hai. Các quan chức cho biết mùa cúm năm ngoái đã khiến các khoa bệnh "
            "viện quá tải và họ hy vọng tiêm cho hai triệu người cao tuổi.",
        },
    ),
]
