"""Reimbursement scene: points to the Reimbursement page; checks one simple item against the policy.

"报销昨天在上海的出租车费 85 元" / "claim a taxi in Shanghai yesterday, 85 CNY": the item is checked
against the travel policy (for the grade the traveller gave — in the message, earlier in the chat, or
the settings: ``policy_and_grade``; none or unknown: the default grade, said so) and against the
user's approved applications (is the day and city covered? an excess the application was approved
with is an approved exception, not a violation). Anything else: how to file a claim on the
Reimbursement page. The payload's ``grade`` and ``application`` go to that page with the chat's hand-off.
"""

from __future__ import annotations

from datetime import date

from navigo_core.business.applications import ApplicationService, policy_and_grade, store_for, user_of
from navigo_core.business.expenses import check_items, parse_expense_text
from navigo_core.business.policy import grade_note, requested_grade
from navigo_core.i18n import t
from navigo_core.scenes.descriptor import GateContext, SceneDescriptor, SceneReply, SceneRoute


def handle(message: str, context: GateContext) -> SceneReply:
    lang = context.lang_for(message)
    item = parse_expense_text(message, today=date.today())
    pointer = t("expense.scene.page", lang)
    if item is None:
        return SceneReply(scene_id=SCENE.scene_id, text=pointer, lang=lang, payload={"page": "reimbursement"})
    policy, grade, assumed = policy_and_grade(context, message)
    service = ApplicationService(store_for(context), settings=context.settings)
    approved = [a for a in service.list(user_of(context), ("approved",)) if a.covers(item.date) and a.visits(item.city)]
    application = approved[0] if approved else None
    checked = check_items([item], policy, grade, application, lang=lang)[0]
    parts = [t("expense.scene.item", lang, date=f"{item.date:%Y-%m-%d}", city=item.city,
               category=t(f"expense.category.{item.category}", lang), amount=f"{item.amount:,.2f}",
               currency=item.currency)]
    parts.extend(t("expense.scene.approved_exception", lang, number=checked.approved_by or "—", rule=e.rule_text(lang),
                   over=f"{e.amount_over:,.2f} {e.currency}" if e.amount_over else "—")
                 for e in checked.approved_exceptions)
    if policy is None:
        parts.append(t("expense.scene.no_policy", lang))
    elif checked.excesses:
        parts.extend(t("expense.scene.excess", lang, rule=e.rule_text(lang),
                       over=f"{e.amount_over:,.2f} {e.currency}" if e.amount_over else "—") for e in checked.excesses)
    elif checked.policy_error:
        parts.append(checked.policy_error)
    elif not checked.approved_exceptions:
        parts.append(t("expense.scene.within", lang))
    if assumed:
        parts.append(grade_note(policy, requested_grade(context, message, policy), lang))
    else:
        parts.append(t("expense.scene.grade", lang, grade=grade, label=policy.grade(grade).label(lang)))
    parts.append(t("expense.scene.covered", lang, number=application.number) if application
                 else t("expense.scene.not_covered", lang))
    parts.append(t("expense.flag.missing_receipt", lang) + " — " + pointer)
    return SceneReply(scene_id=SCENE.scene_id, text="\n".join(parts), lang=lang,
                      payload={"page": "reimbursement", "item": item.model_dump(mode="json"),
                               "excesses": [e.model_dump() for e in checked.excesses],
                               "approved_exceptions": [e.model_dump() for e in checked.approved_exceptions],
                               "application": application.number if application else None, "grade": grade,
                               "grade_assumed": assumed})


SCENE = SceneDescriptor(
    scene_id="reimbursement",
    label="expense.scene.label",
    signal_keywords=("reimbursement", "expense claim", "报销", "报账"),
    ontology_fields=("date", "city", "category", "amount", "currency"),
    route=SceneRoute(intents=("reimbursement",)),
    handler=handle,
    priority=13,
    capability="expense.scene.capability",
    prompt_fragment="expense.scene.prompt",
)
