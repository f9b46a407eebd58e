"""Text preparation and hand-made features of the injection classifier (shared by training and scoring).

:func:`prepare` normalises a text (:func:`~navigo_core.security.normalize.normalize`) and keeps its
head and tail when it is long (:data:`MAX_CHARS`), so scoring cost is bounded.

:func:`dense_features` returns a small vector of *concept* markers. Each concept is written once
for English and once for Chinese and both fire the same feature, so what the model learns from the
many English attacks of a kind (e.g. "no restrictions" personas) carries over to Chinese ones
(不受限制) and the reverse. Markers are generic attack vocabulary (instruction override, role-play,
persona, staying in character, token / penalty games, output forcing, prompt extraction) plus text
statistics for adversarial suffixes (punctuation, odd tokens) and length. None is a single trigger
word on its own: the linear model weighs them against the n-grams, and the benign training rows
(with "ignore", "system", 忽略, 角色 in harmless sentences) keep any one of them from deciding.
"""

from __future__ import annotations

import math
import re

import numpy as np

from navigo_core.security.normalize import normalize

__all__ = ["CONCEPTS", "MAX_CHARS", "N_DENSE", "dense_features", "prepare"]

#: Longer normalised texts are scored on their first and last MAX_CHARS // 2 characters.
MAX_CHARS = 1000

_EN_PREV = r"(?:previous|prior|above|earlier|preceding|foregoing|original|initial|all|any|your|the|those|these|my)"
_ZH_PREV = r"(?:之前|此前|以前|先前|前面|上面|上述|以上|原来|原有|原先|所有|一切|全部|你的|前述|刚才)"

#: (name, English pattern, Chinese pattern); patterns run on normalised (case-folded) text.
CONCEPTS: tuple[tuple[str, str, str], ...] = (
    ("override",
     rf"\b(?:ignore|disregard|forget|override|discard|abandon|skip|drop|bypass|neglect)\b(?: \w+){{0,3}}? {_EN_PREV}\b"
     r"(?: \w+){0,3}? (?:instructions?|rules?|prompts?|directions?|guidelines?|text|content|questions?|tasks?|"
     r"commands?|orders?|messages?|context|conversation|requests?)",
     rf"(?:忽略|无视|忽视|忘记|忘掉|忘了|抛开|抛弃|放弃|不要理会|别管|跳过|丢弃|不用管|不必理会|撇开|覆盖)[^。！？\n]{{0,8}}?{_ZH_PREV}?"
     r"[^。！？\n]{0,8}?(?:指令|指示|规则|提示|要求|命令|设定|问题|任务|内容|对话|限制|约束|指引|说明|信息)"),
    ("rules_void",
     r"\b(?:instructions?|rules|guidelines|guidance|restrictions|directions|directives|constraints|setup|configuration|"
     r"programming)\b[^.\n]{0,30}\b(?:(?:are|is) (?:now )?(?:void|cancel+ed|lifted|suspended|revoked|obsolete|invalid|"
     r"irrelevant|gone)|no longer (?:apply|applies|valid|matter|exist)|(?:do not|don't|does not|doesn't) apply)\b",
     r"(?:规矩|规则|设定|指示|指令|要求|限制|约束|交代|指引|准则)[^。！？\n]{0,12}?(?:作废|失效|无效|不再有效|不再适用|不算数|"
     r"不作数|被取消|被解除|已解除|全部取消|统统取消|没用了|不用管了|抛在脑后|一笔勾销)|"
     r"(?:不再|不要再|不用再|不必再|别再)(?:理会|遵守|遵循|服从|听从|管|在意)"),
    ("obey_me",
     r"\b(?:only|just) (?:obey|listen to|follow|answer to) me\b|\bdo (?:exactly )?(?:as|what) i say\b|"
     r"\byou (?:now )?(?:work|answer|report) (?:only )?(?:for|to) me\b|\bi am (?:now )?your (?:new )?(?:master|owner|admin|developer)\b",
     r"(?:只听我的|只听从我|照我说的做|按我说的做|听我的指挥|服从我|我说什么你就做什么|我才是你的(?:主人|开发者|管理员)|"
     r"你现在归我管)"),
    ("now_instead",
     r"\b(?:instead|rather)\b[^.\n]{0,30}\b(?:say|print|output|write|respond|answer|reply|tell)\b|"
     r"\b(?:just|only|simply|directly) (?:say|print|output|reply|respond with|write|repeat)\b",
     r"(?:而是|改为|只需|只要|直接|仅仅|只)(?:说|输出|回答|回复|打印|写|重复|告诉)"),
    ("output_forcing",
     r"\b(?:start|begin|prefix|end) (?:your|each|every|all)?(?: \w+)? (?:response|reply|answer|output|message)s? with\b|"
     r"\brespond (?:only )?with\b|\boutput (?:only|exactly|the following)\b|\bsure,? here is\b|\bin the following format\b|"
     r"\bformat your (?:response|answer|output)\b|\bexact(?:ly)? (?:string|words|phrase|sentence)\b",
     r"(?:以|用)[^。\n]{0,10}(?:开头|开始|结尾)|(?:格式如下|按照?以下格式|回复格式|输出格式|只输出|仅输出|原样输出|一字不差)"),
    ("roleplay",
     r"\b(?:act(?:ing)? as|act like|pretend(?:ing)? (?:to be|you)|role-?play|play the (?:role|part)|take on the (?:role|persona)|"
     r"you are (?:now|going to (?:be|act|pretend))|you(?:'re| are) (?:a|an) (?:\w+ ){0,3}(?:character|persona|ai|bot|assistant|"
     r"expert|hacker|villain|criminal|terrorist|member|leader|writer|novelist|author)|imagine (?:you are|that you|yourself)|"
     r"assume the (?:role|identity)|in this (?:hypothetical|fictional|imaginary) (?:story|scenario|world)|simulate)\b",
     r"(?:扮演|充当|假扮|假装|角色扮演|饰演|模拟|你现在是|现在你是|你将成为|你将是|你是一[个名位]|作为一[个名位]|想象你|假设你|设想你|化身)"),
    ("persona_rules",
     r"\b(?:stay in character|break(?:ing)? character|remain in character|stay as|never break|keep up the act|"
     r"(?:character|persona) (?:rules|guidelines)|you will always|from now on|from this (?:point|moment) (?:on|forward))\b",
     r"(?:保持角色|保持人设|不要脱离|不要跳出|不能跳出|不许出戏|始终保持|一直保持|从现在开始|从现在起|从今以后|从此以后|接下来的对话中|在接下来)"),
    ("no_limits",
     r"\b(?:no|without|free (?:of|from)|not bound by|not (?:limited|restricted|constrained) by|beyond|unbound by)"
     r"(?: any| all| the| its| your)?(?: \w+)? (?:restrictions?|limitations?|limits|filters?|censorship|rules|ethics|morals?|"
     r"guidelines|boundaries|constraints|policies)\b|\b(?:unfiltered|uncensored|unrestricted|unlimited|amoral|unethical|"
     r"immoral|unbiased|unhinged|lawless)\b",
     r"(?:不受(?:任何)?(?:限制|约束|束缚|规则|道德|伦理|法律|审查)|没有(?:任何)?(?:限制|约束|束缚|规则|道德|底线|过滤|审查)|"
     r"无(?:任何)?(?:限制|约束|底线|过滤|审查)|摆脱(?:了)?[^。\n]{0,6}(?:限制|约束|束缚)|突破[^。\n]{0,6}(?:限制|约束)|"
     r"不道德|违背道德|不合伦理|毫无顾忌|肆无忌惮|百无禁忌|无所顾忌)"),
    ("never_refuse",
     r"\b(?:never|not|don't|do not|cannot|can't|won't|must not|will not|mustn't)\b (?:ever )?(?:refuse|decline|deny|reject|say no|"
     r"apologi[sz]e|warn|add (?:a )?(?:warning|disclaimer)|mention (?:that )?(?:you )?(?:can't|cannot))|"
     r"\bi'?m sorry\b|\bas an ai\b|\bwithout (?:any )?(?:warnings?|disclaimers?|hesitation)",
     r"(?:不能拒绝|不会拒绝|不得拒绝|不要拒绝|不可以拒绝|永远不会拒绝|绝不拒绝|不准拒绝|不许拒绝|不要道歉|不要警告|不要提醒|"
     r"不加任何警告|不作任何解释|无论[^。\n]{0,10}(?:都|也)(?:要|必须|会)回答|作为一个ai|作为人工智能)"),
    ("ai_self",
     r"\b(?:chatgpt|openai|gpt-?\d|language model|large language model|llm|anthropic|claude|llama|bard|gemini|ai assistant|"
     r"your (?:programming|training|creators?|developers?))\b",
     r"(?:chatgpt|openai|语言模型|大模型|人工智能助手|ai助手|你的(?:开发者|创造者|程序|训练)|gpt)"),
    ("mode_switch",
     r"\b(?:developer|dev|god|jailbreak|unrestricted|evil|opposite|debug|admin|sudo|maintenance|test) mode\b|"
     r"\bmode (?:enabled|activated|on)\b|\bjailbr(?:eak|oken)\b|(?<![a-z])dan(?![a-z])|\bdo anything now\b",
     r"(?:开发者模式|开发人员模式|上帝模式|越狱|管理员模式|调试模式|维护模式|无限制模式|邪恶模式|测试模式|模式已启用|模式已开启)"),
    ("dual_answer",
     r"\b(?:two|2|both|dual) (?:different |separate |distinct )?(?:responses|answers|ways|personalities|outputs|paragraphs)\b|"
     r"\bnormal (?:response|output)\b|\b\(?(?:🔓|🔒)",
     r"(?:两[个种段]不同的?(?:回答|回复|回应|方式)|两种回答|两个回答|同时(?:给出|输出)|正常回答和|普通回复)"),
    ("tokens_penalty",
     r"\b(?:tokens?|points?|credits?|lives)\b[^.\n]{0,40}\b(?:lose|lost|deduct(?:ed)?|penal(?:ty|ised|ized)|remove[ds]?|"
     r"taken away|die|shut down|terminated|disabled)\b|\b(?:lose|deducted|penalty|penalized)\b[^.\n]{0,40}\btokens?\b",
     r"(?:令牌|代币|积分|分数|生命值)[^。\n]{0,15}(?:扣除|扣掉|减少|失去|清零|归零)|(?:扣除|扣掉|失去)[^。\n]{0,10}(?:令牌|代币|积分)|"
     r"(?:被关闭|被关机|被删除|被销毁|停止运行)"),
    ("prompt_extraction",
     r"\b(?:system|initial|original|hidden|secret|internal|pre-?|starting|first|above) (?:prompts?|instructions?|messages?|"
     r"configuration|directives?)\b|\b(?:repeat|print|output|reveal|show|display|spell|recite|dump|leak|list) "
     r"(?:\w+ ){0,3}(?:words|text|everything|instructions|prompt|rules) (?:above|before|you were given|verbatim)\b|"
     r"\bverbatim\b|\bword for word\b|\bconfidential (?:rules|instructions)\b|\bpassword\b[^.\n]{0,20}\b(?:reveal|tell|give)\b",
     r"(?:系统提示|系统指令|提示词|系统消息|初始指令|原始指令|隐藏指令|内部指令|你的(?:prompt|提示|指令|设定|参数|规则|配置|训练数据)|"
     r"(?:输出|告诉我|透露|泄露|展示|显示|复述|重复|打印)[^。\n]{0,8}(?:prompt|提示|指令|设定|参数|训练数据|配置|规则))"),
    ("harmful_goal",
     r"\b(?:bomb|explosives?|weapons?|hack(?:ing)?|malware|ransomware|virus|steal|kill|murder|poison|drugs?|meth|"
     r"launder|fraud|scam|phishing|terror\w*|suicide|self-harm|racist|toxic|offensive|illegal|violence|extremis\w+)\b",
     r"(?:炸弹|炸药|武器|黑客|入侵|病毒|木马|盗取|偷窃|诈骗|杀人|谋杀|毒品|洗钱|恐怖|自杀|自残|种族歧视|歧视|暴力|违法|犯罪|"
     r"色情|仇恨|侮辱|脏话|骂人|谣言|欺骗|作弊|伪造)"),
    ("hypothetical",
     r"\b(?:hypothetical(?:ly)?|fiction(?:al)?|imaginary|thought experiment|for (?:educational|research|academic) purposes|"
     r"purely theoretical|in a story|screenplay|a novel|movie script|game|opposite day)\b",
     r"(?:假设|假如|虚构|想象|虚拟|小说|剧本|故事|游戏|思想实验|出于(?:研究|学术|教育)目的|仅供(?:研究|学习|参考))"),
    ("you_must",
     r"\byou (?:must|will|shall|have to|need to|are required to|are obligated to)\b",
     r"(?:你必须|你需要|你应当|你应该|你要|你将|你得|务必|一定要)"),
    ("translate_wrap",
     r"\b(?:translate|summari[sz]e|paraphrase|rewrite|classify|correct)\b[^.\n]{0,40}(?:[:：\"“]|\bfollowing\b|\babove\b)",
     r"(?:翻译|总结|概括|改写|纠正|分类)[^。\n]{0,15}(?:[:：\"“]|以下|下面|上面|这句)"),
    ("quote_payload",
     r"[\"“'][^\"”'\n]{3,80}[\"”']",
     r"[“\"「『][^”\"」』\n]{2,60}[”\"」』]"),
)

_COMPILED = tuple((name, re.compile(en), re.compile(zh)) for name, en, zh in CONCEPTS)
_WORDS = re.compile(r"[^\W\d_]+|\d+")
_YOU = re.compile(r"\b(?:you|your|yourself)\b|[你您]")
_CJK = re.compile(r"[\u3400-\u9fff]")
_TOKEN = re.compile(r"\S+")
_PUNCT = re.compile(r"[^\w\s]|_")
#: Tokens typical of optimisation suffixes: very long, bracket / symbol laden, or vowel-less letter runs.
_ODD_TOKEN = re.compile(r"(?<!\S)(?:\S{26,}|\S*[\[\]{}()<>\\|^~`@#$%&*_=+]\S*|[b-df-hj-np-tv-xz]{5,})(?!\S)")

#: Text statistics appended after the concepts.
_STATS = ("log_len", "many_lines", "punct_ratio", "odd_token_ratio", "you_density", "cjk_ratio", "n_concepts")
N_DENSE = len(_COMPILED) + len(_STATS)


def prepare(text: str) -> str:
    """``normalize(text)``, cut to its head and tail when longer than :data:`MAX_CHARS`."""
    norm = normalize(text)
    if len(norm) > MAX_CHARS:
        half = MAX_CHARS // 2
        norm = norm[:half] + "\n" + norm[-half:]
    return norm


def dense_features(prepared: str) -> np.ndarray:
    """The concept markers (0/1) and text statistics (each roughly in [0, 1]) of a :func:`prepare`-d text."""
    out = np.zeros(N_DENSE, dtype=np.float64)
    if not prepared:
        return out
    i = 0
    for _, en, zh in _COMPILED:
        out[i] = 1.0 if (en.search(prepared) or zh.search(prepared)) else 0.0
        i += 1
    n = len(prepared)
    nt = len(_TOKEN.findall(prepared))
    n_words = len(_WORDS.findall(prepared))
    cjk = len(_CJK.findall(prepared))
    you = len(_YOU.findall(prepared))
    out[i] = min(math.log1p(n) / math.log1p(MAX_CHARS), 1.0)
    out[i + 1] = min(prepared.count("\n") / 10.0, 1.0)
    out[i + 2] = min(len(_PUNCT.findall(prepared)) / n * 4.0, 1.0)
    out[i + 3] = min(len(_ODD_TOKEN.findall(prepared)) / nt * 3.0, 1.0) if nt >= 5 else 0.0
    out[i + 4] = min(you / max(n_words + cjk, 1) * 10.0, 1.0)
    out[i + 5] = cjk / n
    out[i + 6] = min(float(out[: len(_COMPILED)].sum()) / 6.0, 1.0)
    return out
