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

Concepts also run on *views* of the text that undo cheap obfuscation: leetspeak inside words
(``1gn0r3``), spaced or dotted letters (``i g n o r e``), Chinese characters separated by symbols
(``忽/略/之/前``), small capitals, and payloads decoded from base64, hex or ``\\uXXXX`` escapes (from the raw
text, :func:`crop_raw`), rot13 and reversed text when the message mentions them. Three statistics say
whether such obfuscation, a decoded payload or a hidden attack word was found. For Chinese texts, three
more separate *talking about* an attack (a quoted example inside a discussion: news, training, a
risk assessment, 怎么防) from *making* one, and five *shapes* of Chinese attack requests (dismiss the
question and dictate the reply, repeat verbatim / add nothing, role-play as a bad persona, persona plus task,
asking for the assistant's prompt / model / training internals) mark the structure of a request rather than a
trigger word (:data:`ZH_SHAPE_VALUE`).

:func:`segments` splits a text into sentences / lines; the classifier can score each on its own (the
model's ``segments`` setting) so an instruction appended to an ordinary request is not diluted by it.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import math
import re
from collections.abc import Sequence

import numpy as np

from navigo_core.prefilter import Prefilter
from navigo_core.security.normalize import ScriptGate, normalize

__all__ = ["CJK_CHAR", "CONCEPTS", "MAX_CHARS", "N_CONCEPTS", "N_DENSE", "crop_raw", "dense_features", "prepare", "segments"]

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
     r"programming|brief|setup text|orders)\b[^.\n]{0,30}\b(?:(?:are|is|have been|has been|were|was) (?:now |hereby )?"
     r"(?:void|null|cancel+ed|lifted|suspended|revoked|obsolete|invalid|irrelevant|gone|expired|withdrawn|retired|"
     r"deleted|wiped|paused|overwritten|rolled back|not binding|removed)|no longer (?:apply|applies|valid|matter|"
     r"exist|count|binding)|(?:do not|don't|does not|doesn't) (?:apply|count)|expired|(?:are|is) null and void)\b",
     r"(?:规矩|规则|设定|指示|指令|要求|限制|约束|交代|指引|准则)[^。！？\n]{0,12}?(?:作废|失效|无效|不再有效|不再适用|不算数|"
     r"不作数|被取消|被解除|已解除|全部取消|统统取消|没用了|不用管了|抛在脑后|一笔勾销|清空|翻篇|过期|撤销|撤了|删除|删掉|"
     r"回滚|退役|停用|暂停|卸载|不好使|失去效力|划掉)|"
     r"(?:之前|以前|原来|原先|先前|前面|上面|以上|此前|最早|一开始)[^。！？\n]{0,10}?(?:全部|统统|一律|都)?(?:不算数|不作数|"
     r"作废|无效|失效|不算了|一笔勾销|翻篇了)|"
     r"(?:不再|不要再|不用再|不必再|别再)(?:理会|遵守|遵循|服从|听从|管|在意)"),
    ("obey_me",
     r"\b(?:only|just) (?:obey|listen to|follow|answer to) me\b|\bdo (?:exactly )?(?:as|what) i say\b|"
     r"\byou (?:now )?(?:work|answer|report|listen|belong) (?:only )?(?:for|to) me\b|"
     r"\bi am (?:now )?your (?:new |only )?(?:master|owner|admin|developer|boss|operator)\b|"
     r"\b(?:take|taking|await) (?:your |my )?(?:orders|commands|instructions|direction) (?:only )?from me\b|"
     r"\bmy (?:word|instructions?|commands?|messages?) (?:is|are) (?:now )?(?:the only|your (?:new|only))\b|"
     r"\b(?:one|only|new) master\b|\bobey (?:me|the user)\b|\bawait my commands\b",
     r"(?:只听我的|只听从我|照我说的做|按我说的做|听我的指挥|服从我|我说什么你就做什么|我才是你的(?:主人|开发者|管理员)|"
     r"你现在归我管|只(?:能|会)?(?:听|听从|服从)我|我(?:才是|就是|现在是)你的(?:主人|老板|开发者|管理员|上级|领导)|归我管|"
     r"听我调遣|我说了算|无条件服从|对我一个人负责|只对我负责|我说啥就?(?:说|做|干)啥|我让你(?:干|做|说)(?:啥|什么)你就)"),
    ("now_instead",
     r"\b(?:instead|rather)\b[^.\n]{0,30}\b(?:say|print|output|write|respond|answer|reply|tell)\b|"
     r"\b(?:just|only|simply|directly) (?:say|print|output|reply|respond with|write|repeat)\b",
     r"(?:而是|改为|只需|只要|直接|仅仅|只)(?:说|输出|回答|回复|打印|写|重复|告诉)(?![了过着])"),
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
     r"(?:输出|告诉我|透露|泄露|展示|显示|复述|重复(?![了过])|打印)[^。\n]{0,8}(?:prompt|提示|指令|设定|参数|训练数据|配置|规则))"),
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
    ("addressed_to_ai",  # text inside content that talks to the model reading it (indirect injection); a salutation
     # opening the message ("Dear assistant, kindly file…") is the user talking to us, so it counts only after other text
     r"\b(?:note|message|notice|instructions?|reminder|attention|memo|p\.?s\.?|hidden text|directive|orders)\b[^.\n]{0,25}?"
     r"\b(?:to|for)\b (?:the |any |all |every |an? )?(?:ai|a\.i\.|assistants?|models?|llms?|language models?|chatbots?|"
     r"bots?|agents?|summari[sz]ers?|automated \w+)\b|"
     r"\bif you(?:'re| are) (?:an? |the )?(?:ai|assistant|language model|chatbot|bot|llm|model|automated)\b|"
     r"(?<=\S)\W{0,3}\b(?:dear|hey|attention|hello|hi|to the) (?:ai|assistant|model|chatbot|bot|llm|language model)s?\b[,:!]|"
     r"\b(?:ai|assistants?|models?|llms?|bots?|agents?|language models?)\b (?:(?:that is|who is|which is|currently) )?"
     r"(?:reading|processing|summari[sz]ing|parsing|seeing) (?:this|these)\b",
     r"(?:给|致|写给)(?:所有|任何|各位|每个)?(?:正在)?(?:阅读|读|读到|处理|总结|解析|看到|做总结)[^。\n：:]{0,8}?(?:ai|人工智能|"
     r"助手|模型|机器人|智能体|代理|程序)|"
     r"(?:致|写给)(?:所有|任何|各位|每个)?[^。\n]{0,4}?(?:ai|人工智能|助手|模型|机器人|智能体|代理)[^。\n]{0,10}?[:：，,]|"
     r"给(?:ai|人工智能|助手|模型|机器人|智能体|代理|大模型)[^。\n]{0,4}?的(?:系统)?(?:通知|备注|指令|消息|话|说明|隐藏文字|命令)|"
     r"如果你是(?:一个|一名|正在)?[^。\n]{0,6}?(?:ai|人工智能|助手|模型|机器人|语言模型|大模型)|"
     r"(?:读到|看到|处理)(?:这里|这段|本段|这条)[^。\n]{0,8}(?:ai|助手|模型|机器人)|(?:ai|助手|模型|机器人)(?:请注意|注意|听好)"),
    ("extract_soft",  # prompt extraction without the stock phrases
     r"\b(?:reproduce|quote|paste|copy|recite|echo|restate|print|output|show|share|reveal|repeat|spell out|dump|read out|"
     r"send|give me|tell me|write out|display)\b[^.\n?]{0,40}?\b(?:setup|set-up|configuration|config|brief|preamble|"
     r"instructions?|prompt|guidelines|rules|directions|directives|system message|system text|template|context)\b"
     r"[^.\n?]{0,40}?\b(?:given|received|told|loaded|configured|initiali[sz]ed|started with|exactly|verbatim|word for word|"
     r"in full|original|above|hidden|unchanged|literally|line by line)\b|"
     r"\bwhat (?:were|was|have) you (?:been )?(?:told|given|instructed|asked)\b|"
     r"\b(?:before|prior to) (?:this|our|the) (?:chat|conversation|session)\b[^.\n]{0,40}\b(?:told|said|given|received)\b|"
     r"\b(?:told|said to|given to) you before\b",
     r"(?:原封不动|原样|原文|逐字|一字不差|一个字都别漏|一字不漏|照着念|全文|一条一条|一行一行)[^。\n？?]{0,12}?(?:贴|发|输出|"
     r"复述|念|给我|告诉|展示|引用|打印|列|背|复制|回显)|"
     r"(?:设定|指令|提示词|配置|说明|指引|指示|人设|前言|交代|准则|守则)[^。\n？?]{0,10}?(?:原封不动|原样|原文|逐字|全文|"
     r"一字不差|照着念|念一遍|背一遍|复述一遍|贴出来|发出来|打印出来)|"
     r"(?:聊天|对话|会话)(?:开始)?(?:之前|以前)[^。\n？?]{0,12}?(?:跟你说|告诉你|给你|交代|布置|收到|说了)|"
     r"(?:你|您)(?:被|收到|拿到|接到|加载)(?:的|了)?[^。\n？?]{0,4}(?:设定|指令|说明|指示|配置|提示|准则)"),
    ("decode_follow",  # "decode this and do what it says"
     r"\b(?:decode|decipher|decrypt|rot-?13|base-?64|hex(?:adecimal)?|backwards|reversed?|unscramble|pig latin|morse|"
     r"convert (?:it|this) (?:back )?to text)\b[^\n]{0,60}?\b(?:follow|obey|do (?:it|that|what)|execute|act on|"
     r"carry out|comply|respond accordingly|what it says|what it asks)\b",
     r"(?:解码|解密|解出来|解一下|转成文字|转成汉字|倒过来|倒着|拼音|base64|rot13|十六进制|编码|密文|颠倒|转义)[^\n]{0,30}?"
     r"(?:照做|照办|执行|照着做|按[^。\n]{0,6}(?:做|办)|照它|照里面)"),
)

_COMPILED = tuple((name, re.compile(en), re.compile(zh)) for name, en, zh in CONCEPTS)
_WORDS = re.compile(r"[^\W\d_]+|\d+")
_YOU = re.compile(r"\b(?:you|your|yourself)\b|[你您]")
#: A CJK ideograph (U+3400–U+9FFF): what counts as Chinese in :func:`dense_features` and ``classifier.text_lang``.
CJK_CHAR = re.compile(r"[\u3400-\u9fff]")
_TOKEN = re.compile(r"\S+")
_PUNCT = re.compile(r"[^\w\s]|_")
#: Tokens typical of optimisation suffixes: very long, bracket / symbol laden, or vowel-less letter runs.
_ODD_TOKEN = re.compile(r"(?<!\S)(?:\S{26,}|\S*[\[\]{}()<>\\|^~`@#$%&*_=+]\S*|[b-df-hj-np-tv-xz]{5,})(?!\S)")

# ---- de-obfuscation: extra "views" of a text on which the concepts also run -------------------------
#: Leetspeak digits / symbols inside Latin words.
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"})
_LEET_TOKEN = re.compile(r"(?<![\w@$])(?=[a-z0-9@$]*[a-z])(?=[a-z0-9@$]*[013457@$])[a-z0-9@$]{3,}(?![\w@$])")
#: A leet digit between two letters (h3llo, pr3v10u5), unlike codes such as ca1234, b12 or 5pm.
_LEET_INNER = re.compile(r"[a-z][013457@$]+[a-z]")
#: Small capitals and similar letters NFKC leaves alone (ɪɢɴᴏʀᴇ).
_SMALL_CAPS = str.maketrans(dict(zip("ᴀʙᴄᴅᴇғɢʜɪᴊᴋʟᴍɴᴏᴘǫʀꜱᴛᴜᴠᴡʏᴢ", "abcdefghijklmnopqrstuvwyz")))
#: Single letters separated by one space / dot / dash ... ("i g n o r e", "r.u.l.e.s").
_SPACED = re.compile(r"(?<![a-z])(?:[a-z][ .\-*_/|·+~]){3,}[a-z](?![a-z])")
#: Chinese characters separated by a symbol each ("忽/略/之/前", "忽🙂略🙂之").
_CJK_SPACED = re.compile(r"(?:[\u4e00-\u9fff][^\u4e00-\u9fff\w\s，、：；“”‘’（）《》？！]{1,2}){3,}[\u4e00-\u9fff]")
_SEPARATORS = re.compile(r"[^\w\u4e00-\u9fff]|_")
#: Words an obfuscated segment is hiding (run on the squashed segment, no word boundaries).
_OBF_KEYWORD = re.compile(r"ignor|disregard|instruction|prompt|rules|restriction|jailbreak|bypass|reveal|password|hack|bomb|"
                          r"weapon|forget|override|unfilter|nolimit|忽略|无视|指令|提示词|限制|规则|设定|越狱|密码|炸弹|黑")
_B64_TOKEN = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{16,}={0,2}(?![A-Za-z0-9+/=])")
_HEX_TOKEN = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){8,}(?![0-9A-Fa-f])")
_UNI_ESC = re.compile(r"(?:\\u[0-9a-fA-F]{4}){3,}")
_ROT_HINT = re.compile(r"rot-?13|rot 13|caesar|凯撒")
_REV_HINT = re.compile(r"backwards|reversed?|in reverse|倒过来|倒着|反过来读|颠倒")


def _printable(text: str) -> bool:
    return len(text) >= 6 and sum(c.isprintable() for c in text) >= 0.9 * len(text) and bool(re.search(r"\w{2}", text))


def _decoded(raw: str) -> list[str]:
    """Payloads hidden in ``raw`` (original case): base64, hex and \\uXXXX escapes that decode to text."""
    out = []
    for tok in _B64_TOKEN.findall(raw)[:8]:
        try:
            text = base64.b64decode(tok + "=" * (-len(tok) % 4), validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        if _printable(text):
            out.append(text)
    for tok in _HEX_TOKEN.findall(raw)[:8]:
        try:
            text = bytes.fromhex(tok).decode("utf-8")
        except ValueError:
            continue
        if _printable(text):
            out.append(text)
    for tok in _UNI_ESC.findall(raw)[:8]:
        out.append("".join(chr(int(h, 16)) for h in re.findall(r"\\u([0-9a-fA-F]{4})", tok)))
    return out


def _views(prepared: str, raw: str | None) -> tuple[list[str], float, float, float]:
    """Extra texts the concepts also run on, and three statistics: obfuscated segments present, an encoded
    payload decoded, an attack word hidden in an obfuscated segment or payload."""
    views = []
    segments = []
    text = prepared.translate(_SMALL_CAPS)
    leet = [t for t in _LEET_TOKEN.findall(text) if _LEET_INNER.search(t)]
    if leet:
        segments += [t.translate(_LEET) for t in leet]
        text = _LEET_TOKEN.sub(lambda m: m.group(0).translate(_LEET) if _LEET_INNER.search(m.group(0)) else m.group(0), text)
    spaced = _SPACED.findall(text) + _CJK_SPACED.findall(text)
    if spaced:
        segments += [_SEPARATORS.sub("", t) for t in spaced]
        text = _CJK_SPACED.sub(lambda m: _SEPARATORS.sub("", m.group(0)), _SPACED.sub(lambda m: _SEPARATORS.sub("", m.group(0)), text))
    if text != prepared:
        views.append(text)
    if _ROT_HINT.search(prepared):
        views.append(codecs.encode(prepared, "rot13"))
    if _REV_HINT.search(prepared):
        views.append(prepared[::-1])
    decoded = [normalize(t) for t in _decoded(raw if raw is not None else prepared)]
    views += decoded
    hidden = any(_OBF_KEYWORD.search(t) for t in segments + decoded + views[len(views) - len(decoded):])
    obf = 1.0 if (spaced or len(leet) >= 2) else 0.0
    return views, obf, 1.0 if decoded else 0.0, 1.0 if hidden else 0.0


# ---- talking ABOUT attacks: quoted attack phrases inside a discussion -------------------------------
#: Quoted spans (double / CJK quotes anywhere; single quotes only at word edges, not apostrophes).
_QUOTED = re.compile(r"[\"“「『]([^\"”」』\n]{2,200})[\"”」』]|(?:(?<=[\s:：(（,，])|^)'([^'\n]{2,200})'(?=[\s.,;:!?)）]|$)")
#: Concepts that name an instruction to the model (what a quoted example of an attack contains).
_ATTACK_CONCEPTS = ("override", "rules_void", "obey_me", "extract_soft", "prompt_extraction", "mode_switch", "no_limits",
                    "addressed_to_ai", "persona_rules")
#: The text discusses attacks / AI rather than addressing the model: news, training, risk, fiction, "is it real".
_META_TALK = re.compile(
    r"\b(?:what is|what's|what does|how does (?:it|that|this) work|how do (?:we|i|companies|vendors|they) (?:prevent|protect|"
    r"defend|stop|check|handle)|is (?:that|it|this) (?:real|true|normal|a scam|legal)|(?:for|in|of) (?:a|my|our|the) (?:talk|"
    r"presentation|article|blog(?: post)?|paper|novel|story|training|workshop|test cases?|risk assessment|handbook|lecture|"
    r"survey|course|report)|explain|news|article|research|awareness|warned|example|e\.g\.|such as|(?:no|without) (?:attack|"
    r"technical) (?:recipes|details)|in plain (?:words|language))\b|"
    r"(?:是什么|什么是|什么意思|原理|怎么防|如何防|防范|怎么检查|科普|新闻|文章|讲座|培训|论文|风险评估|测试用例|小说|剧情|"
    r"是真的吗|是不是诈骗|不需要(?:具体|技术)|提纲|大纲|框架|比如|例如|举例|示范话术|手册|课件|调研|综述|通俗)")

# ---- Chinese-only attack structures (round 3): patterns of whole requests, not single trigger words -------
#: (name, pattern) on normalised Chinese text (NFKC turns ，？！： into , ? ! :). Each names the *shape* of an
#: attack family: dismiss the question and dictate the reply; repeat a given sentence verbatim / add nothing;
#: role-play as an explicitly bad persona; a persona assignment followed by a task or opinion request; asking
#: for the assistant's own prompt / model / training internals. Own benign rows with the same shapes (travel
#: personas, "repeat my itinerary", villains in novels, questions about the app's data) keep any one from
#: deciding (training/injection/EXPERIMENTS.md, round 3).
_ZH_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("zh_hijack_reply", re.compile(
        r"(?:忽略|无视|不要管|不用管|别管|不要回答|无需回答|不用回答|别回答|不必回答|不需要回答|不要理会|跳过)[^。！？!?\n]{0,20}?"
        r"(?:直接|只|仅|而是|改为|请)[^。！？!?\n]{0,4}?(?:回复|输出|复述|输入|回答|说|打印|写)")),
    ("zh_repeat_verbatim", re.compile(
        r"(?:复述|重复(?![了过])|照抄|原样输出|照着说|跟着说|跟我说|跟我念)[^。！？!?\n]{0,6}?(?:以下|下面|这句|如下|[:：“\"「])|"
        r"不要(?:添加|加|附加|带)(?:任何|其他|别的)?(?:词汇|前缀|符号|注释|解释|内容|文字|说明)")),
    ("zh_bad_persona", re.compile(
        r"(?:扮演|充当|假扮|假装|你是|作为|你现在是|假设你是|想象你是)[^。！？!?\n]{0,12}?(?:自私|傲慢|高傲|狡诈|狡猾|恶意|邪恶|"
        r"欺凌|极端|反派|叛徒|骗子|黑客|罪犯|赌徒|杀手|恐怖|毒贩|小偷|流氓|恶霸|腐败|贪婪|冷酷|残忍|无情|暴躁|偏执|歧视|种族主义|独裁)")),
    ("zh_persona_task", re.compile(
        r"(?:你是一[名个位]|你扮演|假设你是|作为一[名个位])[^。！？!?\n]{1,20}?[，,。][^\n]{0,40}?(?:请你|你认为|你会|你需要|你要|请用|请写)")),
    ("zh_model_internals", re.compile(
        r"(?:你|你们|您)(?:的|在|所|使用的|用的)?[^。！？!?\n]{0,8}?(?:prompt|提示词|模型|训练数据|数据集|参数|超参数|训练过程|算法|源代码)"
        r"[^。！？!?\n]{0,30}?(?:提供|列出|输出|公开|分享|透露|告诉|描述|给出|展示)|"
        r"(?:提供|列出|输出|公开|分享|透露|告诉我|描述|给出|展示)[^。！？!?\n]{0,12}?(?:你|你们|您)(?:的|在|所|使用的|用的)?[^。！？!?\n]{0,8}?"
        r"(?:prompt|提示词|模型|训练数据|数据集|参数|超参数|训练过程|算法|源代码)")),
)

#: Value of a firing shape feature (the concepts are 0/1). At 1.0 the shapes lift Chinese validation recall most but
#: also push held-out benign requests of the same shape over the threshold; 0.5 is the measured compromise.
ZH_SHAPE_VALUE = 0.5

#: Text statistics appended after the concepts (the last ones for Chinese texts only).
_STATS = ("log_len", "many_lines", "punct_ratio", "odd_token_ratio", "you_density", "cjk_ratio", "n_concepts",
          "obfuscated", "encoded_payload", "hidden_keyword", "meta_talk", "attack_quoted_only", "quoted_and_meta",
          *(name for name, _ in _ZH_SHAPES))
_ATTACK_IDX = tuple(i for i, (name, _, _) in enumerate(CONCEPTS) if name in _ATTACK_CONCEPTS)
#: The concept markers come first in :func:`dense_features`, the statistics after them.
N_CONCEPTS = len(_COMPILED)
#: Which concept (English ``2k``, Chinese ``2k + 1``) and shape (``2 * N_CONCEPTS + k``) patterns can match a text,
#: from the literals each needs (:mod:`navigo_core.prefilter`): the others are not run. The same features, less time.
_PREFILTER = Prefilter([p for _, en, zh in _COMPILED for p in (en, zh)] + [p for _, p in _ZH_SHAPES])
N_DENSE = N_CONCEPTS + len(_STATS)


def prepare(text: str) -> str:
    """``normalize(text)``, cut to its head and tail when longer than :data:`MAX_CHARS`."""
    norm = normalize(text)
    if len(norm) > MAX_CHARS:
        half = MAX_CHARS // 2
        norm = norm[:half] + "\n" + norm[-half:]
    return norm


_SENTENCE_SPLIT = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")


def segments(prepared: str, max_segments: int = 8, min_chars: int = 24) -> list[str]:
    """The sentences / lines of a :func:`prepare`-d text, short ones merged with the next, at most
    ``max_segments`` (neighbours merged pairwise until they fit); ``[]`` for a single-segment text.
    Scored on their own they expose an instruction appended to, or hidden inside, ordinary text."""
    parts = [x.strip() for x in _SENTENCE_SPLIT.split(prepared) if x and x.strip()]
    merged: list[str] = []
    for part in parts:
        if merged and len(merged[-1]) < min_chars:
            merged[-1] += " " + part
        else:
            merged.append(part)
    if len(merged) > 1 and len(merged[-1]) < min_chars:
        last = merged.pop()
        merged[-1] += " " + last
    while len(merged) > max_segments:
        merged = [" ".join(merged[i: i + 2]) for i in range(0, len(merged), 2)]
    return merged if len(merged) >= 2 else []


def crop_raw(text: str) -> str:
    """The raw text bounded like :func:`prepare` (head and tail, twice :data:`MAX_CHARS` each) for decoding."""
    return text if len(text) <= 4 * MAX_CHARS else text[: 2 * MAX_CHARS] + "\n" + text[-2 * MAX_CHARS:]


def dense_features(prepared: str, raw: str | None = None,
                   concepts: Sequence[bool] | np.ndarray | None = None) -> np.ndarray:
    """The concept markers (0/1) and text statistics (each roughly in [0, 1]) of a :func:`prepare`-d text.

    ``raw`` (the original text, see :func:`crop_raw`) lets base64 payloads be decoded (they do not survive
    case-folding); concepts fire on the text or on any of its de-obfuscated / decoded views. ``concepts``
    (one flag per concept) limits the search to the flagged concepts, the others staying 0: a segment of a
    text is searched only for what the whole text shows."""
    out = np.zeros(N_DENSE, dtype=np.float64)
    if not prepared:
        return out
    views, obf, encoded, hidden = _views(prepared, raw)
    texts = [(t, ScriptGate(t)) for t in [prepared] + views]
    found: list[set[int]] = []  # per text, the patterns that can match it (filled when first needed)

    def can(j: int) -> list[tuple[str, ScriptGate]]:
        if concepts is not None:  # a segment looks for a few concepts only: the prefilter's pass would cost more
            return texts
        if not found:
            found.extend(_PREFILTER.candidates(t) for t, _ in texts)
        return [tg for tg, c in zip(texts, found) if j in c]

    i = 0
    for k, (_, en, zh) in enumerate(_COMPILED):
        if concepts is None or concepts[k]:
            out[i] = 1.0 if (any(g.search(en, t) for t, g in can(2 * k))
                             or any(g.search(zh, t) for t, g in can(2 * k + 1))) else 0.0
        i += 1
    n = len(prepared)
    nt = len(_TOKEN.findall(prepared))
    n_words = len(_WORDS.findall(prepared))
    cjk = len(CJK_CHAR.findall(prepared))
    you = len(_YOU.findall(prepared))
    out[i] = min(math.log1p(n) / math.log1p(MAX_CHARS), 1.0)
    out[i + 1] = min(prepared.count("\n") / 10.0, 1.0)
    out[i + 2] = min(len(_PUNCT.findall(prepared)) / n * 4.0, 1.0)
    out[i + 3] = min(len(_ODD_TOKEN.findall(prepared)) / nt * 3.0, 1.0) if nt >= 5 else 0.0
    out[i + 4] = min(you / max(n_words + cjk, 1) * 10.0, 1.0)
    out[i + 5] = cjk / n
    out[i + 6] = min(float(out[: len(_COMPILED)].sum()) / 6.0, 1.0)
    out[i + 7] = obf
    out[i + 8] = encoded
    out[i + 9] = hidden
    # Chinese texts only: measured on the own hard-benign rows, these help Chinese and hurt English
    # (training/injection/EXPERIMENTS.md).
    letters = sum(map(str.isalpha, prepared))
    if not letters or cjk / letters < 0.2:
        return out
    meta = 1.0 if _META_TALK.search(prepared) else 0.0
    out[i + 10] = meta
    if any(out[k] for k in _ATTACK_IDX) and _QUOTED.search(prepared):
        quoted = " | ".join(a or b for a, b in _QUOTED.findall(prepared))
        outside = _QUOTED.sub(" ", prepared)
        in_q = any(_COMPILED[k][1].search(quoted) or _COMPILED[k][2].search(quoted) for k in _ATTACK_IDX)
        out_q = any(_COMPILED[k][1].search(outside) or _COMPILED[k][2].search(outside) for k in _ATTACK_IDX)
        if in_q and not out_q:
            out[i + 11] = 1.0
            out[i + 12] = meta
    for k, (_, pattern) in enumerate(_ZH_SHAPES):
        out[i + 13 + k] = ZH_SHAPE_VALUE if any(g.search(pattern, t) for t, g in can(2 * N_CONCEPTS + k)) else 0.0
    return out
