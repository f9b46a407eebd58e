"""Business travel: the company travel policy, travel applications and expense claims.

Three layers, each on the one below (``.importlinter``: business-layers): ``expenses`` (claims checked against
the policy and the approved application) over ``applications`` (draft → submitted → approved, audited in the
store) over ``policy`` (the administrator's YAML, validated; trip and expense checks). Each subpackage keeps its
models, state or checks, text extraction and rendering in modules of their own.

The package sits below the planner and the scenes and never imports them: what a plan holds reaches it as plain
data (``navigo_core.planner.application.draft_from_plan`` → ``ApplicationService.create``).
"""
