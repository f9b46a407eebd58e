"""Command line: ``python -m navigo_core route …``.

Exit codes: 0 success, 2 bad input (one line on stderr), 3 provider failure.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import NoReturn, Sequence

from navigo_core.config import get_settings
from navigo_core.errors import InputError, NavigoError
from navigo_core.i18n import detect_lang, fmt_distance, fmt_duration, t

EXIT_INPUT = 2
EXIT_PROVIDER = 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        self.exit(EXIT_INPUT, f"{self.prog}: {message}\n")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="navigo_core", description="NaviGo Workbench command line")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    r = sub.add_parser("route", help="best visiting order of stops between an origin and a destination")
    r.add_argument("--origin", required=True, help="start: a place name or lat,lon")
    r.add_argument("--destination", required=True, help="end: a place name or lat,lon (same as origin: round trip)")
    r.add_argument("--stop", action="append", default=[], help="a stop (repeat the option for each stop)")
    r.add_argument("--strategy", choices=["fastest", "shortest", "balanced"], default="fastest")
    r.add_argument("--provider", choices=["offline", "osrm", "amap"], default=None,
                   help="distance provider (default: from settings)")
    r.add_argument("--fallback", action="store_true", help="use the offline estimate if the provider fails")
    r.add_argument("--json", action="store_true", help="print the result as JSON")
    r.add_argument("--lang", choices=["en", "zh"], default=None, help="message language (default: from the input)")
    return parser


def _route(args: argparse.Namespace) -> int:
    from navigo_core.route.models import RouteRequest
    from navigo_core.route.service import make_route_deps, plan_route

    lang = args.lang or detect_lang(" ".join([args.origin, args.destination, *args.stop]))
    settings = get_settings()
    try:
        req = RouteRequest(origin=args.origin, destination=args.destination, stops=args.stop, strategy=args.strategy)
        deps = make_route_deps(settings, matrix_name=args.provider)
        result = plan_route(req, deps, allow_fallback=args.fallback)
    except InputError as exc:
        print(exc.message(lang).replace("\n", " "), file=sys.stderr)
        return EXIT_INPUT
    except NavigoError as exc:
        print(exc.message(lang).replace("\n", " "), file=sys.stderr)
        return EXIT_PROVIDER
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


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    if args.command == "route":
        return _route(args)
    return EXIT_INPUT  # unreachable: argparse requires a command
