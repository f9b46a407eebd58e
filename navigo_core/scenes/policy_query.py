"""Policy-query scene: answers travel-policy questions from :mod:`navigo_core.business.policy` (no LLM).

"上海住宿标准是多少", "what's the meal allowance in Tokyo", "can I fly business to Beijing",
"出差去杭州能坐一等座吗", "how far ahead must I book": the reply gives the number or the
allowed class and cites the rule (id + text) in the user's language.

The grade comes from a grade named in the message ("as a G3"), the ``policy_grade`` flow's slots,
the conversation's grade (``context.subject["grade"]``), the user's kept one (their profile) or
``settings.employee_grade`` (``navigo_core.business.policy.requested_grade``, read by ``TravelPolicy.resolve_grade``,
like everywhere else). A grade the
traveller gives about themself (the answer to the question, "我是经理级") is handed back in the payload's
``subject`` for the chat to remember. When it is unknown and the question needs it, the scene
asks once (flow ``policy_grade``, the question kept in the slots); the answer ("G3", "经理")
resumes the flow and the original question is answered. The flow then stays open with the
grade in its slots, so follow-up policy questions in the thread use it.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from navigo_core.i18n import t
from navigo_core.scenes.descriptor import (
    ActiveFlow,
    GateContext,
    SceneDescriptor,
    SceneReply,
    SceneRoute,
)

FLOW_ID = "policy_grade"

_TOPICS: tuple[tuple[str, str], ...] = (
    ("advance", r"how (?:far|many days) (?:ahead|in advance)|\bin advance\b|\bahead of time\b|\badvance[- ]booking\b"
                r"|\bbook\w* (?:\w+ )?(?:ahead|early)\b|提前(?:几|多少)?天|提前多久|提前预订|提前订"),
    ("train", r"\btrain\b|\brail\b|\bseat\b|\bfirst[- ]class seat|\bsecond[- ]class\b|一等座|二等座|商务座|高铁|动车|火车"),
    ("flight", r"\bfly\b|\bflight\b|\bcabin\b|\bbusiness class\b|\bpremium economy\b|\beconomy\b|公务舱|商务舱|头等舱|经济舱|舱位|飞机|航班"),
    ("meal", r"\bmeals?\b|\bfood\b|\bper diem\b|\bdining\b|餐补|餐费|伙食|用餐|饭补|餐饮"),
    ("transport", r"\blocal transport|\btaxi\b|\btransport allowance|\bcommut|交通补贴|交通费|打车|市内交通"),
    ("hotel", r"\bhotels?\b|\blodging\b|\baccommodation\b|\broom rate\b|住宿|酒店|宾馆|房费"),
)
_TOPIC_RX = tuple((k, re.compile(p, re.IGNORECASE)) for k, p in _TOPICS)
_ASKED = (
    ("flight", "business", r"\bbusiness(?: class)?\b|公务舱|商务舱|头等舱|\bfirst class\b(?! seat)"),
    ("flight", "premium_economy", r"premium economy|超级经济舱|超经舱"),
    ("flight", "economy", r"\beconomy\b|经济舱"),
    ("train", "business", r"商务座|business(?:[- ]class)? seat"),
    ("train", "first_class", r"一等座|first[- ]class seat|\bfirst class\b"),
    ("train", "second_class", r"二等座|second[- ]class"),
)


def _policy(context: GateContext) -> tuple[Any, str | None]:
    from navigo_core.business.policy import policy_status

    path = getattr(context.settings, "travel_policy_file", "") or None
    return policy_status(path, "en")


def topic_of(text: str) -> str | None:
    for key, rx in _TOPIC_RX:
        if rx.search(text):
            return key
    return None


def _asked_class(text: str, topic: str) -> str | None:
    for kind, value, pattern in _ASKED:
        if kind == topic and re.search(pattern, text, re.IGNORECASE):
            return value
    return None


def find_city(policy: Any, text: str) -> str | None:
    """A city the policy names, found in ``text`` (longest name first), else an English "in/to X"."""
    low = unicodedata.normalize("NFKC", text).casefold()
    for name, _tier in policy.city_names():
        n = name.casefold()
        if n.isascii():
            if re.search(rf"(?<![a-z]){re.escape(n)}(?![a-z])", low):
                return name
        elif n in low:
            return name
    m = re.search(r"\b(?:in|to|at|for)\s+([A-Z][a-zA-Z'-]+(?:\s+[A-Z][a-zA-Z'-]+)?)", text)
    return m.group(1) if m else None


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if abs(x - round(x)) < 0.005 else f"{x:,.2f}"


def _grades_list(policy: Any, lang: str) -> str:
    return "、".join(t("policy.grade_line", lang, id=g.id, label=g.label(lang)) for g in policy.grade_defs) if lang == "zh" \
        else ", ".join(t("policy.grade_line", lang, id=g.id, label=g.label(lang)) for g in policy.grade_defs)


def _amount_answer(policy: Any, topic: str, city: str | None, grade: str, lang: str) -> tuple[str, dict[str, Any]]:
    rule = {"hotel": policy.hotel, "meal": policy.meals, "transport": policy.local_transport}[topic]
    getter = {"hotel": policy.hotel_cap, "meal": policy.meal_allowance, "transport": policy.transport_allowance}[topic]
    if city:
        tier = policy.tier_of(city)
        money = getter(tier.id, grade)
        text = t(f"policy.answer.{topic}", lang, city=city, tier=tier.label(lang), grade=grade,
                 amount=_fmt(money.amount), ccy=money.currency)
        cite = t(f"policy.rule.{topic}", lang, text=rule.text(lang), tier=tier.label(lang), grade=grade,
                 cap=_fmt(money.amount), ccy=money.currency)
        return (f"{text}\n{t('policy.cite', lang, rule_id=rule.id, rule=cite)}",
                {"tier": tier.id, "amount": money.amount, "currency": money.currency, "rule_id": rule.id})
    rows = [t("policy.answer.table_row", lang, tier=tr.label(lang), amount=_fmt(getter(tr.id, grade).amount),
              ccy=policy.currency) for tr in policy.tiers]
    text = "\n".join([t("policy.answer.table_head", lang, what=t(f"policy.what.{topic}", lang), grade=grade), *rows,
                      t("policy.cite", lang, rule_id=rule.id, rule=rule.text(lang)), t("policy.answer.which_city", lang)])
    return text, {"rule_id": rule.id, "table": {tr.id: getter(tr.id, grade).amount for tr in policy.tiers}}


def _class_answer(policy: Any, topic: str, text_in: str, city: str | None, grade: str, lang: str) -> tuple[str, dict[str, Any]]:
    from navigo_core.business.policy import CABINS, SEATS

    order = CABINS if topic == "flight" else SEATS
    asked = _asked_class(text_in, topic)
    m = re.search(r"(\d+(?:\.\d+)?)\s*(?:h\b|hours?|小时)", text_in, re.IGNORECASE)
    hours = float(m.group(1)) if m else None
    rule = policy.cabin_rule(grade, hours) if topic == "flight" else policy.train_rule(grade, hours)
    allowed = rule.value
    name = lambda v: t(f"policy.class.{topic}.{v}", lang)  # noqa: E731
    where = t("policy.answer.where_city", lang, city=city) if city else ""
    when = (t("policy.answer.when_hours", lang, hours=_fmt(hours)) if hours is not None
            else t("policy.answer.when_short", lang))
    if asked:
        ok = order.index(asked) <= order.index(allowed)
        key = "policy.answer.class_yes" if ok else "policy.answer.class_no"
        text = t(key, lang, grade=grade, asked=name(asked), allowed=name(allowed), where=where, when=when)
    else:
        ok = None
        text = t("policy.answer.class_plain", lang, grade=grade, allowed=name(allowed), where=where, when=when)
    lines = [text, t("policy.cite", lang, rule_id=rule.id, rule=rule.text(lang))]
    if hours is None:  # say what changes on longer trips
        longer = [r for r in policy.rules_for(topic, grade) if r.over_hours > 0 and r.id != rule.id]
        if longer:
            lines.append(t("policy.answer.longer", lang, rules="; ".join(f"{r.id}: {r.text(lang)}" for r in longer)))
    return "\n".join(lines), {"allowed": allowed, "asked": asked, "allowed_ok": ok, "rule_id": rule.id, "hours": hours}


def answer(policy: Any, message: str, grade: str | None, lang: str) -> tuple[str, dict[str, Any]]:
    """The reply text and payload for ``message`` (``grade`` may be None only for grade-free topics)."""
    text = unicodedata.normalize("NFKC", message)
    topic = topic_of(text)
    city = find_city(policy, text)
    payload: dict[str, Any] = {"topic": topic, "city": city, "grade": grade}
    if topic == "advance":
        body = t("policy.answer.advance", lang, days=policy.advance_days)
        return (f"{body}\n{t('policy.cite', lang, rule_id=policy.advance_rule_id, rule=policy.advance_text(lang))}",
                payload | {"rule_id": policy.advance_rule_id, "days": policy.advance_days})
    if topic in ("hotel", "meal", "transport"):
        body, extra = _amount_answer(policy, topic, city, grade or policy.default_grade, lang)
        return body, payload | extra
    if topic in ("flight", "train"):
        body, extra = _class_answer(policy, topic, text, city, grade or policy.default_grade, lang)
        return body, payload | extra
    return t("policy.answer.general", lang, name=policy.name_zh if lang == "zh" else policy.name_en), payload


def needs_grade(message: str) -> bool:
    return topic_of(unicodedata.normalize("NFKC", message)) not in (None, "advance")


def handle(message: str, context: GateContext) -> SceneReply:
    lang = context.lang_for(message)
    policy, error = _policy(context)
    if policy is None:
        return SceneReply(scene_id=SCENE.scene_id, text=t("policy.unavailable", lang, error=error or ""), lang=lang,
                          error=True, payload={"error": error})
    flow = context.active_flow if context.active_flow and context.active_flow.flow_id == FLOW_ID else None
    slots: dict[str, Any] = dict(flow.slots) if flow else {}
    if slots.get("lang") and not re.search(r"[A-Za-z]{3,}|[\u4e00-\u9fff]", message):
        lang = slots["lang"]  # a bare answer like "G2" keeps the conversation's language
    question = message
    grade = policy.find_grade(message) or None
    given = policy.stated_grade(message)  # the traveller's own grade, for the rest of the conversation
    if flow is not None and slots.get("question") and not slots.get("grade"):
        # the answer to "which grade are you?"
        if grade is None:
            if topic_of(message) is None:
                return SceneReply(scene_id=SCENE.scene_id, lang=lang, asks=True,
                                  text=t("policy.ask_grade_again", lang, grades=_grades_list(policy, lang)),
                                  payload={"grades": policy.grades},
                                  flow=flow.model_copy(update={"turns": flow.turns + 1}))
        else:
            question = slots["question"] if topic_of(message) is None else message
            given = given or grade
    if grade is None:
        grade = slots.get("grade")
    if grade is None:  # the conversation's, the user's kept one, the settings' (one chain for every check)
        from navigo_core.business.policy import requested_grade

        found, assumed = policy.resolve_grade(requested_grade(context, "", policy))
        grade = None if assumed else found
    if grade is None and needs_grade(question):
        if flow is not None and slots.get("asked"):  # asked once already: answer for the lowest grade
            grade = policy.default_grade
        else:
            return SceneReply(scene_id=SCENE.scene_id, lang=lang, asks=True,
                              text=t("policy.ask_grade", lang, grades=_grades_list(policy, lang)),
                              payload={"grades": policy.grades, "question": question},
                              flow=ActiveFlow(flow_id=FLOW_ID, scene_id=SCENE.scene_id,
                                              slots={"question": question, "asked": True, "lang": lang}))
    text, payload = answer(policy, question, grade, lang)
    if grade is not None and needs_grade(question):
        g = policy.grade(grade)
        text += "\n" + t("policy.grade_assumed", lang, grade=grade, label=g.label(lang))
    new_flow = None
    if grade is not None and (flow is not None or policy.find_grade(message)):
        new_flow = ActiveFlow(flow_id=FLOW_ID, scene_id=SCENE.scene_id,
                              slots={"grade": grade, "asked": True, "lang": lang},
                              turns=(flow.turns + 1) if flow else 0)
    if given:
        payload = payload | {"subject": {"grade": given}}
    return SceneReply(scene_id=SCENE.scene_id, text=text, lang=lang, payload=payload | {"question": question},
                      flow=new_flow)


SCENE = SceneDescriptor(
    scene_id="policy_query",
    label="policy.label",
    signal_keywords=("travel policy", "差旅政策", "住宿标准", "餐补", "allowance"),
    ontology_fields=("topic", "city", "grade"),
    # the policy_query intent also covers visa/entry rules: only travel-policy words map here
    route=SceneRoute(intents=("policy_query",)),
    handler=handle,
    can_resume=True,
    flow_id=FLOW_ID,
    priority=25,
    capability="policy.capability",
    prompt_fragment="policy.prompt",
)
