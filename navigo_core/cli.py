"""Command line: ``python -m navigo_core route …``, ``intent …``, ``plan "text" [--json]`` and ``clarify``.

``clarify`` reads user turns from stdin, one per line, and prints one JSON frame per turn
(``{"status", "content", "summary"?}``, UTF-8); offline unless an LLM is configured
(``--offline`` forces it); it stops after the ``done`` frame. After an ``error`` frame (an LLM
failure) the same line is answered by the offline engine in the next frame, and the dialogue
goes on offline: no line is dropped.

``plan "text"`` plans a trip offline (``--llm``: prose by the configured LLM) and prints
Markdown, or with ``--json`` the final state in snake_case JSON, the pending questions
(``--answer`` answers them), or the refusal — all with exit code 0.

``intent "text"`` prints the routing result as JSON; ``intent eval --data FILE.jsonl``
prints accuracy, per-layer coverage and precision, the out-of-scope capture rate
and a confusion table; ``intent calibrate --data FILE.jsonl [--out FILE]`` picks
the L2 thresholds from labelled data and writes them (default: the package's
``intent/data/thresholds.yaml``). A message that is literally "eval" or
"calibrate" can be classified with ``intent --text eval``.

Exit codes: 0 success, 2 bad input (one line on stderr; also a ``--provider`` that is not configured),
3 provider failure.

This module is a composition root: each command builds its Settings once (``get_settings``) and its providers
once (:func:`navigo_core.providers.selection.make_providers`) and passes them to every constructor and factory
it calls, and checks input against their limits. ``route --provider`` offers the distance providers the
selection module knows.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, NoReturn, Sequence

from navigo_core.config import get_settings
from navigo_core.errors import InputError, NavigoError
from navigo_core.i18n import detect_lang, fmt_distance, fmt_duration, t
from navigo_core.limits import Limits, check_message
from navigo_core.providers.selection import choice, make_providers, names_known

EXIT_INPUT = 2
EXIT_PROVIDER = 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        self.exit(EXIT_INPUT, f"{self.prog}: {message}\n")


def _fail(exc: NavigoError, lang: str) -> int:
    """One line on stderr; exit 2 for bad input, 3 for a provider failure."""
    print(exc.message(lang).replace("\n", " "), file=sys.stderr)
    return EXIT_INPUT if isinstance(exc, InputError) else EXIT_PROVIDER


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="navigo_core", description="NaviGo Workbench command line")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    r = sub.add_parser("route", help="best visiting order of stops between an origin and a destination")
    r.add_argument("--origin", required=True, help="start: a place name or lat,lon")
    r.add_argument("--destination", required=True, help="end: a place name or lat,lon (same as origin: round trip)")
    r.add_argument("--stop", action="append", default=[], help="a stop (repeat the option for each stop)")
    r.add_argument("--strategy", choices=["fastest", "shortest", "balanced"], default="fastest")
    r.add_argument("--provider", choices=list(names_known("matrix")), default=None,
                   help="distance provider (default: from settings; one not configured is refused)")
    r.add_argument("--fallback", action="store_true", help="use the offline estimate if the provider fails")
    r.add_argument("--json", action="store_true", help="print the result as JSON")
    r.add_argument("--lang", choices=["en", "zh"], default=None, help="message language (default: from the input)")

    i = sub.add_parser("intent", help="classify a message (intent \"text\"), or: intent eval|calibrate --data FILE.jsonl")
    i.add_argument("words", nargs="*", help='the message, or "eval" / "calibrate"')
    i.add_argument("--text", default=None, help="the message (use for a message that is literally eval or calibrate)")
    i.add_argument("--data", action="append", default=None,
                   help="eval/calibrate: labelled JSON Lines (text, intent, optional alt_intents); repeat for several files")
    i.add_argument("--out", default=None, help="calibrate: thresholds file to write (default: the package's thresholds.yaml)")
    i.add_argument("--encoder", choices=["tfidf", "embeddings"], default=None, help="L2 encoder (default: from settings)")
    i.add_argument("--offline", action="store_true", help="no LLM at all (L3 answers unknown)")
    i.add_argument("--llm", action="store_true", help="eval: also send the rows L1/L2 miss to the LLM (one call each)")
    i.add_argument("--trace", action="store_true", help="classify: include the per-layer trace in the JSON")
    i.add_argument("--min-precision", type=float, default=0.95, help="calibrate: minimum L2 precision (default 0.95)")
    i.add_argument("--max-oos", type=float, default=0.05, help="calibrate: most out-of-scope rows L1+L2 may capture (default 0.05)")
    p = sub.add_parser("plan", help='plan a trip from free text: plan "From Shanghai to Hangzhou, May 1-5, 2 adults, 6000 CNY"')
    p.add_argument("words", nargs="*", help="the trip request")
    p.add_argument("--answer", action="append", default=[],
                   help="answer to the follow-up questions (repeat for several rounds)")
    p.add_argument("--json", action="store_true", help="print the final state (or the questions, or the refusal) as JSON")
    p.add_argument("--format", choices=["markdown", "ics"], default="markdown", help="output without --json")
    p.add_argument("--llm", action="store_true", help="use the configured LLM for prose (default: offline engine)")
    c = sub.add_parser("clarify", help="trip clarification: one user turn per stdin line, one JSON frame per turn")
    c.add_argument("--offline", action="store_true", help="never use the LLM (default: the LLM when configured)")
    c.add_argument("--lang", choices=["en", "zh"], default=None, help="reply language (default: from the first line)")
    return parser


def _clarify(args: argparse.Namespace) -> int:
    """Read user turns from stdin (one per line) and print one JSON status frame per turn; stop when done."""
    from navigo_core.clarify import ClarifyAgent, ClarifyState
    from navigo_core.security import scan_input

    settings = get_settings()
    llm = None
    if not args.offline:
        from navigo_core.llm import make_llm_client

        try:
            llm = make_llm_client(settings)
        except NavigoError as exc:
            return _fail(exc, args.lang or settings.default_language)
    agent = ClarifyAgent(settings, llm=llm, providers=make_providers(settings))
    state: ClarifyState | None = None
    for line in sys.stdin:
        text = line.strip()
        if not text:
            continue
        try:
            check_message(text, Limits.from_settings(settings))
        except InputError as exc:  # this turn is refused; the dialogue goes on
            lang = args.lang or (state.lang if state is not None else detect_lang(text[:200]))
            print(json.dumps({"status": "error", "content": "", "error": exc.message(lang)}, ensure_ascii=False),
                  flush=True)
            continue
        flags = scan_input(text)  # the risk guard, as in the chat: a flagged turn is refused, never clarified
        if flags:
            lang = args.lang or (state.lang if state is not None else detect_lang(text[:200]))
            print(json.dumps({"status": "refused", "content": t("chat.refused", lang), "flags": flags},
                             ensure_ascii=False), flush=True)
            continue
        if state is None:
            state = agent.start("cli", text, lang=args.lang)
        turn, new_state = agent.turn(state, text)
        print(json.dumps(turn.frame(), ensure_ascii=False), flush=True)
        if turn.status == "error":  # the state is as it was: the same line is answered offline, and so on
            state = state.model_copy(update={"mode": "offline"})
            turn, new_state = agent.turn(state, text)
            print(json.dumps(turn.frame(), ensure_ascii=False), flush=True)
        state = new_state
        if turn.status == "done":
            break
    return 0


def _plan(args: argparse.Namespace) -> int:
    from navigo_core.planner.exports import to_ics, to_markdown
    from navigo_core.planner.supervisor import make_planner_deps, plan, resume

    text = " ".join(args.words).strip()
    lang = detect_lang(text)
    if not text:
        print(t("planner.cli.empty", lang), file=sys.stderr)
        return EXIT_INPUT
    settings = get_settings()
    llm = None
    if args.llm:
        from navigo_core.llm import make_llm_client

        llm = make_llm_client(settings)
    try:
        deps = make_planner_deps(settings, llm=llm, providers=make_providers(settings))
        state = plan(text, deps)
        for answer in args.answer:
            if state.status != "needs_input":
                break
            state = resume(state, answer, deps)
    except NavigoError as exc:
        return _fail(exc, lang)
    if args.json:
        out: dict[str, Any]
        if state.status == "needs_input":
            out = {"status": state.status, "lang": state.lang,
                   "pending_questions": [q.model_dump(mode="json") for q in state.pending_questions]}
        elif state.status == "refused":
            out = {"status": state.status, "lang": state.lang, "safety_flags": state.safety_flags,
                   "refusal": state.final_plan.summary if state.final_plan else ""}
        else:
            out = json.loads(state.model_dump_json())
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    if args.format == "ics" and state.status == "done":
        sys.stdout.write(to_ics(state).decode("utf-8"))
        return 0
    print(to_markdown(state, state.lang))
    return 0


def _route(args: argparse.Namespace) -> int:
    from navigo_core.route.models import RouteRequest
    from navigo_core.route.service import make_route_deps, plan_route

    lang = args.lang or detect_lang(" ".join([args.origin, args.destination, *args.stop]))
    settings = get_settings()
    try:
        req = RouteRequest(origin=args.origin, destination=args.destination, stops=args.stop, strategy=args.strategy)
        matrix_name = choice(settings, "matrix").require(args.provider)  # not configured: bad input, exit 2
        deps = make_route_deps(settings, matrix_name=matrix_name, providers=make_providers(settings))
        result = plan_route(req, deps, allow_fallback=args.fallback)
    except NavigoError as exc:
        return _fail(exc, lang)
    if args.json:
        print(json.dumps(result.cli_dict(), ensure_ascii=False, indent=2))
        return 0
    print(" → ".join(result.order))
    for i, leg in enumerate(result.legs, start=1):
        print(f"{i:>3}. {leg.from_} → {leg.to}: {fmt_distance(leg.distance_m)}, {fmt_duration(leg.duration_s, lang)}")
    print(f"total: {fmt_distance(result.total_distance_m)}, {fmt_duration(result.total_duration_s, lang)}; "
          f"optimal={result.optimal}; provider={result.provider}{' (estimated)' if result.estimated else ''}")
    for key in result.notes:
        print(t(key, lang))
    return 0


def _intent(args: argparse.Namespace) -> int:
    from navigo_core.intent import make_router
    from navigo_core.intent.evaluate import (
        calibrate,
        evaluate,
        format_calibration,
        format_report,
        load_labelled,
    )
    from navigo_core.intent.vector import THRESHOLDS_FILE, save_thresholds

    words = list(args.words)
    action = words[0] if args.text is None and words and words[0] in ("eval", "calibrate") and len(words) == 1 else "classify"
    text = args.text if args.text is not None else " ".join(words)
    lang = detect_lang(text) if action == "classify" else "en"
    try:
        overrides = {"intent_encoder": args.encoder} if args.encoder else {}
        settings = get_settings(**overrides)
        if action == "classify":
            if not text.strip():
                raise InputError("intent.cli.no_text")
            check_message(text, Limits.from_settings(settings))
            router = make_router(settings, offline=args.offline)
            result = router.route(text)
            out = result.model_dump(mode="json") if args.trace else result.public_dict()
            print(json.dumps(out, ensure_ascii=False, indent=2))
            return 0
        if not args.data:
            raise InputError("intent.cli.data_required")
        rows = []
        for path in args.data:
            try:
                rows += load_labelled(path)
            except (UnicodeDecodeError, ValueError) as exc:  # a binary or otherwise unreadable file
                if isinstance(exc, NavigoError):
                    raise
                detail = f"byte {exc.start}" if isinstance(exc, UnicodeDecodeError) else type(exc).__name__
                raise InputError("cli.broken_input", path=path, detail=detail) from None
        router = make_router(settings, offline=args.offline and not args.llm)
        if action == "eval":
            print(format_report(evaluate(router, rows, use_llm=args.llm),
                                title=f"Intent evaluation: {', '.join(args.data)}"))
            return 0
        res = calibrate(router, rows, min_precision=args.min_precision, max_oos=args.max_oos)
        path = save_thresholds({res.encoder: res.thresholds}, args.out or THRESHOLDS_FILE)
        print(format_calibration(res, path))
        return 0
    except NavigoError as exc:
        return _fail(exc, lang)
    except OSError as exc:  # e.g. --out in a folder that cannot be written
        print(f"{type(exc).__name__}: {exc}".replace("\n", " "), file=sys.stderr)
        return EXIT_INPUT


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; a closed pipe (``… | head -1``) ends it quietly."""
    try:
        code = _main(argv)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at interpreter exit
        return code
    except BrokenPipeError:
        try:  # nothing more can be written: point stdout at /dev/null so the exit flush stays silent
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0


def _main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    if args.command == "route":
        return _route(args)
    if args.command == "intent":
        return _intent(args)
    if args.command == "plan":
        return _plan(args)
    if args.command == "clarify":
        return _clarify(args)
    return EXIT_INPUT  # unreachable: argparse requires a command
