"""Approval status of the user's travel applications ("where is my approval?" / "我的出差申请批了吗").

With a number or a city in the message: that application's status, approver and comment; else one
line per open application. Read-only: an approver's decision ("approve Li's Wuhan trip", "帮我驳回小张的申请",
the rule ``approval.act``) is taken on the Approvals page, where the request's details are in front of the
approver, and the reply says so instead of listing the user's own applications.
"""

from __future__ import annotations

from navigo_core.business.applications import Application, ApplicationService, store_for, user_of
from navigo_core.i18n import t
from navigo_core.scenes.descriptor import GateContext, SceneDescriptor, SceneReply, SceneRoute


#: The routing rule (intent/data/rules.yaml) for an approver's decision on someone's application.
ACT_RULE = "approval.act"


def status_line(app: Application, lang: str) -> str:
    line = t("application.scene.status_line", lang, number=app.number, summary=app.short(),
             status=t(f"application.status.{app.status}", lang))
    if app.decision_comment:
        line += " — " + t("application.card.comment", lang, approver=app.approver or "—", comment=app.decision_comment)
    return line


def handle(message: str, context: GateContext) -> SceneReply:
    lang = context.lang_for(message)
    decision = context.decision
    if decision is not None and decision.step == "rule" and decision.detail == ACT_RULE:
        text = t("application.scene.approver_act", lang, page=t("app.page.approvals", lang))
        return SceneReply(scene_id=SCENE.scene_id, text=text, lang=lang, payload={"applications": [], "approver_act": True})
    service = ApplicationService(store_for(context), settings=context.settings)
    owner = user_of(context)
    apps = service.search(message, owner, statuses=None) or service.list(owner)
    if not apps:
        return SceneReply(scene_id=SCENE.scene_id, text=t("application.scene.none", lang), lang=lang,
                          payload={"applications": []})
    pending = sum(1 for a in apps if a.status == "submitted")
    text = "\n".join([t("application.scene.approval_head", lang, count=len(apps), pending=pending),
                      *(f"- {status_line(a, lang)}" for a in apps[:10])])
    return SceneReply(scene_id=SCENE.scene_id, text=text, lang=lang,
                      payload={"applications": [{"number": a.number, "status": a.status} for a in apps]})


SCENE = SceneDescriptor(
    scene_id="approval_query",
    label="application.scene.approval_label",
    signal_keywords=("approval", "审批"),
    ontology_fields=("number", "description"),
    route=SceneRoute(intents=("approval_query",)),
    handler=handle,
    priority=16,
    capability="application.scene.approval_capability",
    prompt_fragment="application.scene.approval_prompt",
)
