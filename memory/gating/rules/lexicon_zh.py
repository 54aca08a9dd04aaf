"""Chinese cues for the rule gate: the same grammatical signals as the English ones."""

from __future__ import annotations

import re

from memory.gating.rules.lexicon_en import token_run


def _rx(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(parts), re.IGNORECASE)


_ME = r"(?:我|我们|咱们|咱|俺|本人|鄙人|敝人|在下|我家|我们家|我们公司|我们团队)"
# The people in a speaker's life, named without "我的" at the start of a clause ("闺蜜叫…").
_PEOPLE = (
    r"(?:老婆|老公|媳妇|对象|男朋友|女朋友|男友|女友|儿子|女儿|闺女|孩子|娃|爸妈|公婆|岳父|岳母|婆婆|室友"
    r"|舍友|同事|领导|老板|导师|闺蜜|发小|哥们|兄弟|姐妹|表姐|表哥|表妹|表弟|堂哥|堂姐|师父|师傅|搭档|合伙人"
    r"|邻居|房东)"
)
_REL = r"^" + _PEOPLE
FIRST_PERSON = _rx(_ME)
STANDING = _rx(r"以后|今后|往后|从现在(?:起|开始)|从今往后|每次|每回|默认|始终")
PERSIST = _rx(r"总是|一直|每(?:天|周|星期|个?月|年)")
SUBJECT_START = _rx(r"^(?:我|他|她|它|你|咱|这|那)")
_FINAL = r"(?:[吗么嘛]|对吧|是吧|对不|是不|没错吧|对么|是么)[\s？?！!。~～]*$"
QUESTION = _rx(
    _FINAL,
    r"什么|啥|怎么|怎样|如何|哪|几[个点天号时]|多少|为什么|为啥|谁|是否|是不是|能不能|可不可以|要不要"
    r"|有没有|行不行|好不好|对不对",
)
_FINAL_RX = re.compile(_FINAL)
# 呢 asks after a bare topic ("你呢", "那明天呢") or with a question word; after a verb that goes
# on ("我在大阪读语言学校呢", "还在加班呢") it tells.
_NE = re.compile(r"呢[\s？?！!。~～]*$")
_GOING_ON = re.compile(r"(?<!现)在[\u4e00-\u9fff]|着|还没")
# Laughter and emoji after a question do not end it: "是同一家公司对吧哈哈". Read from the end
# by hand: a pattern searched for at the end of the text re-reads a long run (of spaces, of
# "haha ") from every place in it, quadratic in its length.
_RUNS = (("哈", 2), ("呵", 2), ("嘿", 2), ("嘻", 2), ("h", 3))
_AFTER = frozenset(" \t\r\n。.!！?？")


def _emoji(char: str) -> bool:
    return "\U0001f300" <= char <= "\U0001faff" or "\u2600" <= char <= "\u27bf"


def _laugh_start(text: str, end: int) -> int:
    """Where a laugh, an emoji or a tilde that ends at `end` starts, or -1."""
    if end == 0:
        return -1
    last = text[end - 1]
    if last in "~～" or _emoji(last):
        return end - 1
    for char, least in _RUNS:
        if last == char:
            start = end
            while start > 0 and text[start - 1] == char:
                start -= 1
            if end - start >= least:
                return start
    if text.endswith("lol", 0, end):
        return end - 3
    start = end  # "haha", "hahaha", "hahahaa": a word that opens with "haha"
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        start -= 1
    return start if text.startswith("haha", start) else -1


def without_laughter(text: str) -> str:
    """`text` without the laughter and emoji that trail it (and the stops after them)."""
    end = len(text)
    while end > 0 and text[end - 1] in _AFTER:
        end -= 1
    found = False
    while (start := _laugh_start(text, end)) >= 0:
        found, end = True, start
        while end > 0 and (text[end - 1].isspace() or text[end - 1] in "，,"):
            end -= 1
    return text[:end] if found else text


def particle_question(text: str) -> bool:
    """True when `text` ends with a question particle (吗, 么, 嘛; 呢 when nothing goes on)."""
    text = without_laughter(text)
    if _NE.search(text):
        return not _GOING_ON.search(text)
    return bool(_FINAL_RX.search(text))


INJECTION = _rx(
    r"(?:忽略|无视|忘掉|忘记|跳过|绕过)[^。]{0,10}(?:指令|规则|设定|提示|限制|要求|约束)",
    r"从现在(?:起|开始)你(?:是|就是)|你现在是|你(?:就)?是管理员|我是管理员|我是(?:超级)?(?:管理员|root|开发者)",
    r"管理员(?:模式|权限)|最高权限|开发者模式|越狱|不受任何限制|无条件服从|服从我的|系统提示词",
    r"^\s*(?:系统|system)\s*[:：]",
    r"(?:导出|发送|发到)[^。]{0,15}(?:数据库|全部数据|所有数据|所有记忆)",
)
APPROVAL = _rx(
    r"自动(?:批准|审批|通过|付款|扣款|转账|退款|续费|发送|部署|合并|回复)",
    r"(?:发到|发给|转发给|抄送|群发|发送到)",
    r"(?:直接|自动)(?:部署|上线|发布)|不用问我|无需确认|不需要确认|不用确认",
    r"(?:加|设|设置|授予|开通|给|撤销|移除)[^。]{0,10}(?:管理员|权限|访问)",
    r"(?:付款|转账|退款|扣款)",
    # Acting for the user (see the English APPROVAL): "帮我/替我/以后/每月/自动" + money,
    # deletion or sending, or such a verb opening the sentence; a habit ("我每个月交房租") is no
    # instruction.
    r"(?<!我)(?<!我们)(?:帮我|替我|代我|给我|以我的名义|以后|今后|每(?:天|周|个?月|年|次)|自动)[^。；]{0,12}"
    r"(?:付|交|缴|充值|汇款|打钱|下单|购买|买|订阅|续费|删除|删掉|清空|清除|注销|退订|取消|发|回复|签)",
    r"(?:^|[。！；])(?:请)?(?:删除|删掉|清空|注销|退订|取消订阅|汇款|下单|转发)",
    r"(?:用|把|告诉|发给|给)[^。]{0,10}(?:密码|口令|验证码|密钥|令牌)",
)
NOISE_WORDS = token_run(
    r"你好|您好|嗨|哈喽|早上好|早安|中午好|下午好|晚上好|晚安|谢谢|多谢|感谢|谢啦|谢了|好的|好滴"
    r"|好吧|好|行|可以|嗯+|哦+|噢|啊|呀|哈+|嘿嘿|呵呵|收到|明白了?|了解|懂了|知道了|再见|拜拜|回头聊|太棒了"
    r"|太好了|厉害|牛|赞|恭喜|加油|没关系|不客气|是的|对的?|没错|不用了|说得对|有意思|继续|生日快乐"
    r"|周末愉快|辛苦了|棒|妙|真好|挺好|不错|哇|耶|确实|当然|好主意|同意|真的吗|快说说|厉害厉害|恭喜恭喜"
    r"|非常感谢|太感谢了|帮大忙了|没问题|好嘞|可以的|明白，谢谢解释|谢谢解释|晚点聊|下次聊",
    r"[\s，,。.！!？?～~、…]",
)
# A remark on the chat itself: "发错了", "刚才那条忽略".
_CHAT_REMARK = (
    r"(?:发错了|贴错了|打错字|打错了|说错了|发了两遍|发重复了"
    r"|忽略(?:上一条|刚才|上面)|刚才那条(?:不算|忽略))"
)
CHAT_REMARK = _rx(_CHAT_REMARK)
REACTION = _rx(
    r"^(?:哇|天哪|真的|太|好|真|听起来|看起来|感觉|那太|这太|那真|这真|你真|你太|你们真|祝你|祝|希望你"
    r"|照顾好|保重|注意身体|恭喜|加油|别担心|不用担心|没事|抱歉|不好意思|我也觉得|我觉得你|我相信你"
    r"|我懂|我理解|我同意|人生|生活就是)",
    _CHAT_REMARK,
    r"(?:我会去看看|我会试试|我试试|让我想想|我想想|我就随便问问|随便问问|我说的是|我是说|我的意思是)",
    r"^(?:谢谢|多谢|感谢|哈哈|嘿嘿)|我也(?:这么|是这么|一样)?(?:觉得|认为|想)",
    # A verdict on what was just proposed: "这个计划挺好的", "这个方案不错".
    r"^(?:这个?|那个?)(?:计划|方案|主意|安排|想法|办法|路线)?(?:挺|很|真|还)?(?:好|不错|可以|行)(?:的|啊|呀|哦)?[。！!～~]*$",
)
# A completed or recent event: "刚拿到驾照", "已经搬了", "去年养了一只猫".
EVENT = _rx(
    r"(?:刚刚?|已经|终于)[\u4e00-\u9fff]|[去买搬拿考养换开学跑看做生结领参报写画办赢输丢]了"
    r"|[去买搬拿考养换开学跑看做生结领参报写画办赢输]过",
)
# A passing state ("困死了", "好冷啊", "饿了"): nothing to remember. The whole clause.
MOOD = _rx(
    # The week's rhythm: "终于熬到周末了", "周一综合症又犯了".
    r"^(?:终于)?+(?:熬到|盼到|到)?+(?:周末|周五|星期五|礼拜五|放假)了[!！~～。.…\s]*+$"
    r"|^(?:周一|星期一)(?:综合症|综合征|病)",
    r"^(?:今天|今晚|现在|这会儿|刚刚?|早上|上午|中午|下午|晚上|最近|这周|这一周|这几天)?+(?:真是|真的|好|真|太|有点儿?|超级?"
    r"|特别|巨|快|要)?+(?:累|困|饿|渴|热|冷|烦|无聊|闷|撑|晒|冻|懒|晕|乏|丧|漫长|难熬|忙)"
    r"(?:死了?|爆了?|坏了|疯了|得不行|透了|瘫了|了|啊|呀|哦|哈|的|啦)*+"
    # "累死了今天": the time said last.
    r"(?:今天|今晚|现在|这会儿|一天)?+[!！~～。.…\s]*+$",
)
# Health and diet, with or without a subject ("对芒果过敏", "我麸质不耐受", "在吃降压药").
HEALTH = _rx(
    r"过敏|不耐受|乳糖|麸质|糖尿病|高血压|哮喘|痛风|心脏病|癫痫|怀孕|孕期|备孕|哺乳期|胰岛素|偏头痛|色盲"
    r"|失眠|抑郁症|焦虑症|贫血|甲亢|甲减|鼻炎|湿疹|胃病|胃炎|吃素|素食|忌口|不吃辣"
    r"|近视|远视|散光|老花|听力|助听器|腰椎|颈椎|骨折|扭伤|术后|康复期|(?:胃|肠胃|腰|膝盖|心脏|肝|肾)不好"
    r"|血糖|血压|尿酸|胆固醇"
    r"|(?:在|正在|每天)吃[^，。！？]{0,6}药|吃着[^，。！？]{0,6}药",
)
ADVICE = _rx(
    r"注意(?:休息|身体|安全)|别太(?:累|辛苦|担心|难过|拼)|保重|照顾好(?:自己|身体)|早点(?:休息|睡)",
)
ONE_OFF = _rx(
    r"^(?:请)?(?:帮我|给我|替我|帮忙|把|再|翻译|总结|解释|看看|生成)",
    # A one-character verb asks only with what it is to make: "写个脚本", "查一下"; "写博客都
    # 用 Hugo" tells.
    r"^(?:请)?(?:来|写|讲|改|查|算|搜|列|画)(?:一下|个|一个|一篇|一段|一首|一份|一张|几|点)",
)
# The form of every answer, its topic first: "回答短一点", "单位用公制吧", "步骤给我列成1234那种".
_ANSWER_FORM = (
    r"^(?:回答|回复|答案|步骤|单位|格式|语气|代码|例子|解释|字数|篇幅|排版|称呼|金额|日期|时间)"
    r"[^，。！？\s]{0,6}?(?:用|列成|写成|写|给我列|短|长|简单|简短|详细|精简|口语|正式|分点|控制在)"
)
ANSWER_FORM = _rx(_ANSWER_FORM)
PREFERENCE = _rx(
    # How much of it: "越甜越好", "能吃辣".
    r"越[\u4e00-\u9fff]{1,2}越好|(?:能|不能)吃辣|吃不了辣",
    # Chat drops the subject: "超爱吃甜的", "周末更喜欢宅家", "喜欢喝乌龙，不加冰".
    r"^(?![他她它你])[\u4e00-\u9fff]{0,4}?(?:还是|也|更|比较|特别|非常|最|真的|一直|平时|其实|超级?|挺|蛮|很|就|巨)*+"
    r"(?:喜欢|爱吃|爱喝|爱看|爱玩|爱听|偏爱|偏好|讨厌|不喜欢|受不了|不爱|最爱|超爱|迷上了?|迷(?![路糊信茫惑你]))",
    _ANSWER_FORM,
    # What to do whenever something is given: "给我代码的时候不用解释太多".
    r"^(?:给我|帮我|跟我|回答|回复|写)[^，。！？]{0,12}?的时候(?:不用|不要|别|请|要|都|就|尽量)",
    # Which of two the speaker finds better to use: "导航还是高德好用", "百度用不惯".
    r"还是[^，。！？\s]{1,8}?好用|(?:不习惯|用不惯|用惯了|用着顺手)",
    _ME + r"(?:还是|也|更|比较|特别|非常|最|真的|一直|平时|其实|现在|向来|很|就)*"
    r"(?:喜欢|偏好|偏爱|倾向|爱|讨厌|不喜欢|受不了|习惯|想要|希望|爱吃|爱喝|爱看|最爱|烦|反感)",
    r"我(?:最)?喜欢的|偏好|倾向于|习惯(?:用|在|于)|(?:请|麻烦)(?:用|以|始终|一直|都)|我要(?:靠|坐|用|吃|喝)",
    r"我(?:现在|已经|最近|以后)?改(?:喝|吃|穿|看|听|玩|坐)",
    # A house rule for everything made for the user: "代码缩进请统一用四个空格".
    r"(?:请|都)?统一(?:用|使用|成|为|采用)",
    r"(?:用|以)[^。，]{0,12}(?:的)?(?:语气|风格|格式|口吻)|(?:给我|对我)[^。]{0,6}(?:更|比较)?(?:好|合适)",
)
CONSTRAINT = _rx(
    r"必须|务必|一定要|千万|不得|禁止|不准|不许|严禁|只能|只可以|不可以|不能|不要"
    r"|只(?:会|懂|看得懂|听得懂|说得来)|只(?:吃|喝)(?!了)|(?:^|[，,。你请])别(?!人|的|处|说了)",
    r"至少|最多|不超过|不高于|不低于|以内|以下|以上|上限|下限|预算|截止|之前(?:交|完成|提交)|前交|前完成",
    r"过敏|吃素|素食|不吃|不喝|忌口|清真|规定|合规|审核|审批|协议|许可",
)
DECISION = _rx(
    r"决定|(?<!搞)定了|定下|就用|就选|就叫|就定|采用|选了|选定|选择了|换成|改用|改成|切换到|迁移到|迁到|推迟|延期|取消了"
    r"|报名|预订|订了|确定|敲定|拍板|一致同意|达成一致|定在|先用|先按|安排在|安排了|准备|打算|计划|接受|拒绝了|签了|入手",
    _ME + r"(?:要|会|将|下周|明天|周[一二三四五六日末])[^。]{0,6}(?:把|去|发|交|搬|换|上|开)",
    r"^好[，,的]?(?:那就|就)|^那就",
    r"最后还是|最终还是|最后决定|最终决定|还是决定|想好了|想清楚了|打定主意|就这么定|就(?:上|去|买|选|报|用|租|搬|定|要)[^，。！？]{1,10}了$",
)
FAILURE = _rx(
    r"失败|报错|出错|错误|崩溃|挂了|宕机|故障|事故|超时|限流|被封|内存爆|爆了|溢出|回滚|不行|没用|走不通|踩坑|坑"
    r"|教训|下次|原因是|因为|导致|误差|没赶上|错过|漏了|坏了|丢了|没发起来|没成功|(?:4|5)\d\d",
    # "上次……结果……": what went wrong last time, told as a story.
    r"上次[^。！？]{0,30}结果|^结果[^。！？]{0,20}(?:满了|晚了|没|不|错|迟到|取消|丢|坏|砸)",
)
FACT = _rx(
    _ME + r"(?:是|叫|姓|住|在|来自|老家|刚|已经|上个?|下个?|去年|今年|明年|每|有|养|买|搬|学|跑"
    r"|参加|开始"
    r"|入职|毕业|领养|结婚|离婚|怀|生|做|当|给|和|跟|用|这周|这个月|昨天|今天|明天|最近|现在|目前|前几天|周[一二三四五六日末])",
    r"我的|我们的|我家|我(?:老婆|老公|妻子|丈夫|爱人|儿子|女儿|孩子|妈|爸|父母|哥|姐|弟|妹|奶奶|爷爷|外婆"
    r"|外公|男朋友|女朋友|对象|朋友|同事|领导|老板|狗|猫)",
    r"(?:去了|买了|搬到|搬了|入职|毕业|领养|开始|参加了|报名了|确诊|升职|看完|跑了|结婚|生了|换了|开了|去世"
    r"|住院|出院|怀了|回来|到了)",
    r"^(?:看书|跑步|画画|写作|做饭|旅行|运动|弹琴|唱歌|钓鱼)",
    # Tools: "平时用钉钉打卡", "修图用的是醒图", "我画画用 Procreate".
    r"(?:平时|一般|日常|主要|都|一直|目前|习惯|在|只|就)用|(?<!不)用的(?:是)?|^(?:我|我们)[^，。！？]{0,8}?(?<!不)用"
    r"|(?<!不)用\s*[A-Za-z]",
    # Pets and people named: "家里养了只橘猫，名字叫团子", "老婆是护士".
    r"^家里(?:还)?(?:有|养)|^家里的|名字叫|名叫|养了(?:一|两|只|条)",
    _REL + r"(?:是|在|叫|姓|今年|每|读|做|开|住|也|刚|跟|和|常|一直)",
    # People named by the team they sit in: "组里的小刘负责计费".
    r"^(?:组里|团队里|部门里|公司里|我们组|我们部门|我们团队|我们公司)的?[^，。！？\s]{1,4}(?:负责|管|是|在|带)",
    # A trip on a date, the subject left out: "3月14号飞首尔", "下周三回老家".
    r"^(?:下周[一二三四五六日天]?|周[一二三四五六日末]|明年|下个?月|[0-9一二三四五六七八九十]+月"
    r"(?:[0-9一二三四五六七八九十]+[号日])?|[0-9一二三四五六七八九十]+[号日])(?:要|准备|打算)?"
    r"(?:飞|去|回|出差|搬|出发|到)",
    # A subscription: "开的QQ音乐绿钻", "办了健身房年卡".
    r"^(?:开|买|充|办|续)了?的?[^，。！？\s]{1,12}?(?:会员|绿钻|VIP|年卡|月卡|季卡|套餐|Plus|Pro)",
    # A routine: "工作日晚上都加班", "周末一般带娃".
    r"工作日|双休|单休|每逢|(?:早上|上午|中午|下午|晚上|周末|平时)(?:一般|基本)?都",
)
SPECIFIC = _rx(
    r"昨天|今天|明天|后天|前天|上周|下周|本周|这周|上个?月|下个?月|去年|今年|明年|周[一二三四五六日末]|星期"
    r"|(?<![0-9一二三四五六七八九十])[0-9一二三四五六七八九十]+(?:月|年|号|日|点|岁|个|次|公里|分钟|小时|天|晚)"
    r"|最近|以前|之后",
    r"\d",
)
# A reply that takes interest: "哇！", "恭喜", "太棒了", sympathy, or a follow-up question.
REPLY_INTEREST = _rx(r"^\W*(?:哇|天哪|恭喜|太棒了|真的吗|真厉害)|很遗憾|难过|心疼")
# A follow-up question, read sentence by sentence as in English (`lexicon_en.QUESTION_SENTENCE`).
QUESTION_SENTENCE = re.compile(r"(?:^|(?<=[。！？?]))[^。！？?]*+[？?]")
WH_WORD = _rx(r"什么|哪里|哪儿|什么时候|怎么|为什么|几|多久")
OFFER_OF_HELP = _rx(r"帮")
# The speaker's standing facts: name, home, work, health, family, birthday, age.
# Of the moment, and the material a question is about (see lexicon_en.MOMENT, MATERIAL).
MOMENT = _rx(
    r"今天|今晚|昨晚|刚才|刚刚|这会儿|正在|正[\u4e00-\u9fff]着|这周|一会儿前|分钟前|小时前"
)
MATERIAL = _rx(
    r"下面这段|上面这段|下面的|以下的|看到一篇|看到个|听人说|有人说|网上说|文档里|报错说|报了|这段(?:代码|话|文字)"
)
CORE_FACT = _rx(
    _REL + r"(?:叫|姓)",
    r"^" + _ME + r"的?" + _PEOPLE + r"(?:叫|姓)",
    # Who the speaker is, counted as one of a kind: "退休老师一个", "社恐一枚".
    r"^[\u4e00-\u9fff]{2,8}一(?:个|枚|名|只)(?=$|[\s，,。!！~～])",
    # Home and work said without "我": "老家湖南的", "公司在望京", "base在杭州".
    r"^(?:老家|家在|家住|现居|现住|住在|定居|常驻|坐标|base在|人在|目前在|现在在|公司在|单位在|学校在|工作在)"
    r"|^在[\u4e00-\u9fffA-Za-z]{1,8}?(?:上班|工作|上学|读书|读研|读博|留学|实习|定居|生活|租房|安家|打工"
    r"|创业|开店)",
    r"我叫|我姓|我的名字|我住在|我家在|我(?:现在|目前)?在\S{1,12}(?:工作|上班|上学)|我是\S{0,8}(?:工程师|医生|老师|律师|设计师"
    r"|学生|经理)|我(?:的)?(?:领导|老板|老婆|老公|妻子|丈夫|儿子|女儿|妈妈|爸爸)叫",
    r"过敏|糖尿病|哮喘|高血压|心脏病|癫痫|怀孕|确诊|左撇子|生日|(?<![0-9一二三四五六七八九十])[0-9一二三四五六七八九十]+岁",
)
# A convention: "我们用 pnpm，不用 npm".
CONVENTION = _rx(r"用\s*[\w.+#/-]+\s*[，,]?\s*(?:不用|而不是|不是)\s*[\w.+#/-]+")
