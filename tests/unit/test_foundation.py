"""Foundation invariants: i18n completeness, settings documented, import directions, store."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from navigo_core.config import Settings, get_settings
from navigo_core.errors import InputError, ProviderTimeout
from navigo_core.i18n import catalog, detect_lang, fmt_distance, fmt_duration, t
from navigo_core.store import Store

ROOT = Path(__file__).resolve().parents[2]


def test_every_catalog_key_has_english_and_chinese() -> None:
    missing = [k for k, v in catalog().items() if not (isinstance(v, dict) and v.get("en") and v.get("zh"))]
    assert missing == []


def test_catalog_placeholders_match_between_languages() -> None:
    field = re.compile(r"\{(\w+)\}")
    bad = [k for k, v in catalog().items() if set(field.findall(v["en"])) != set(field.findall(v["zh"]))]
    assert bad == []


def test_every_i18n_key_used_in_code_exists() -> None:
    used: set[str] = set()
    pattern = re.compile(r"""(?<![\w.])(?:tr|t|InputError|ResultCheckError|PlaceResolutionError)\(\s*["']([a-z_]+(?:\.[a-z0-9_]+)+)["']""")
    for path in [*ROOT.joinpath("navigo_core").rglob("*.py"), *ROOT.joinpath("app_pages").rglob("*.py"),
                 *ROOT.joinpath("ui").rglob("*.py"), ROOT / "app.py"]:
        used |= set(pattern.findall(path.read_text(encoding="utf-8")))
    assert used, "the scan found no keys"
    assert sorted(k for k in used if k not in catalog()) == []


def test_language_detection_and_formatting() -> None:
    assert detect_lang("帮我规划路线") == "zh"
    assert detect_lang("plan a route") == "en"
    assert fmt_distance(850) == "850 m" and fmt_distance(12_345) == "12.3 km"
    assert fmt_duration(3900) == "1 h 05 min" and fmt_duration(3900, "zh") == "1 小时 05 分钟"
    assert t("no.such.key") == "no.such.key"


def test_errors_render_in_both_languages() -> None:
    e = ProviderTimeout(provider="OSRM", seconds=3)
    assert "OSRM" in e.message("en") and "3" in e.message("en")
    assert "秒" in e.message("zh")
    assert str(InputError("route.no_stops")).startswith("There are no stops")


def test_readme_documents_every_setting_with_its_default() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.lstrip().startswith("# NaviGo Workbench")
    assert "make run" in readme and "make test" in readme
    for name in Settings.model_fields:
        assert f"`{name.upper()}`" in readme, name


def test_settings_from_env_and_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OSRM_URL", "http://127.0.0.1:5000/")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    s = get_settings()
    assert s.osrm_url == "http://127.0.0.1:5000"
    assert s.effective_matrix_provider == "osrm"
    assert s.llm_enabled


LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")  # import-linter, pinned in requirements-dev.txt


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """Run import-linter's contracts (``.importlinter``) over the packages under ``root``."""
    assert LINT_IMPORTS.exists(), f"{LINT_IMPORTS} missing: pip install -r requirements-dev.txt"
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo", str(root / ".importlinter")],
                          cwd=root, env=env, capture_output=True, text=True, timeout=120)


def test_import_contracts() -> None:
    """The contracts in .importlinter hold: no streamlit/ui/app_pages in the core, layers, independence, no cycles."""
    run = _lint_imports(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout and " kept" in run.stdout


@pytest.mark.parametrize(("probes", "contract"), [
    ({"store/_probe.py": "import streamlit"}, "navigo_core never imports streamlit, ui or app_pages"),
    ({"store/_probe.py": "def later():\n    from navigo_core import planner"}, "navigo_core imports run downward"),
    ({"business/applications/_probe.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
      "    from navigo_core.planner.state import PlannerState"}, "navigo_core imports run downward"),
    ({"planner/_probe.py": "import navigo_core.route"}, "do not know each other"),
    ({"intent/_probe_a.py": "from navigo_core.intent import _probe_b",
      "intent/_probe_b.py": "from navigo_core.intent import _probe_a"}, "no import cycles"),
])
def test_import_contracts_catch_a_forbidden_import(tmp_path: Path, probes: dict[str, str], contract: str) -> None:
    """The same check fails on a copy of the sources with a forbidden import added (a new module or two)."""
    only_sources = shutil.ignore_patterns("__pycache__", "data", "*.yaml", "*.json", "*.md", "*.npz", "*.mako")
    for package in ("navigo_core", "ui", "app_pages"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=only_sources)
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    assert _lint_imports(tmp_path).returncode == 0  # the copy alone passes
    for name, source in probes.items():
        (tmp_path / "navigo_core" / name).write_text(source + "\n", encoding="utf-8")
    run = _lint_imports(tmp_path)
    assert run.returncode != 0, run.stdout
    broken = [ln for ln in run.stdout.splitlines() if " BROKEN" in ln]
    assert any(contract in ln for ln in broken), run.stdout


def test_store_saves_lists_and_reopens_routes(tmp_path: Path) -> None:
    store = Store.from_url(f"sqlite:///{tmp_path / 'sub' / 't.db'}")
    rid = store.routes.save("上海 → 杭州", {"origin": "上海"}, {"order": ["Shanghai", "Hangzhou"]}, owner="me")
    listed = store.routes.list("me")
    assert [r["id"] for r in listed] == [rid] and listed[0]["title"] == "上海 → 杭州"
    got = store.routes.get(rid)
    assert got is not None and got["result"]["order"] == ["Shanghai", "Hangzhou"]
    assert store.routes.get("nope") is None
    with store.engine.connect() as conn:
        mode = conn.exec_driver_sql("PRAGMA journal_mode").scalar()
    assert mode == "wal"


def test_no_legacy_pages_folder() -> None:
    """A `pages/` folder would switch Streamlit to v1 multipage mode and bypass app.py on deep links."""
    assert not (ROOT / "pages").exists()
    assert (ROOT / "app_pages" / "route.py").exists()


# --- settings are passed in: only the composition roots read the global ones ------------------------

# (file under navigo_core/, function) -> why it may build the settings in force; None: any function of the file.
SETTINGS_READERS = {
    ("cli.py", None): "the command line's composition root: each command builds its Settings once",
    ("scenes/defaults.py", None): "the composition root for library use (benchmarks, scripts): settings(), classify()",
    ("limits.py", "current"): "the limits in force, for the checks called without limits",
}


def _global_settings_reads(root: Path) -> list[tuple[str, str, int]]:
    """Every call of ``get_settings(...)`` or of ``Settings(...)`` in ``root/navigo_core``: (file, function, line).
    Both read the environment and the settings files; ``config.py`` defines them."""
    import ast

    found: list[tuple[str, str, int]] = []
    package = root / "navigo_core"
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if rel == "config.py":
            continue

        def visit(node: ast.AST, function: str) -> None:
            for child in ast.iter_child_nodes(node):
                inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
                if isinstance(child, ast.Call):
                    func = child.func
                    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                    if name in ("get_settings", "Settings"):
                        found.append((rel, function, child.lineno))
                visit(child, inner)

        visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), "<module>")
    return found


def _not_allowed(reads: list[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    return [r for r in reads if (r[0], None) not in SETTINGS_READERS and (r[0], r[1]) not in SETTINGS_READERS]


def test_only_the_composition_roots_read_the_global_settings() -> None:
    """No constructor or factory of navigo_core reads the global settings: they take ``settings`` as a parameter,
    and the composition roots (ui/context.py, cli.py, scenes/defaults.py) build them once and pass them in."""
    reads = _global_settings_reads(ROOT)
    assert {r[0] for r in reads} >= {"cli.py", "scenes/defaults.py", "limits.py"}, reads  # the scan finds them
    assert _not_allowed(reads) == [], "read the global settings outside the composition roots (pass settings in)"


def test_the_settings_scan_catches_a_constructor_reading_them(tmp_path: Path) -> None:
    """The same scan fails on a copy of the sources where a factory falls back to the global settings."""
    shutil.copytree(ROOT / "navigo_core", tmp_path / "navigo_core",
                    ignore=shutil.ignore_patterns("__pycache__", "data", "*.yaml", "*.json", "*.md", "*.npz"))
    probe = tmp_path / "navigo_core" / "providers" / "_probe.py"
    probe.write_text("from navigo_core.config import get_settings\n\n\n"
                     "def make_probe(settings=None):\n    return settings or get_settings()\n", encoding="utf-8")
    limits = tmp_path / "navigo_core" / "limits.py"
    limits.write_text(limits.read_text(encoding="utf-8") + "\n\ndef other():\n    return Settings()\n", encoding="utf-8")
    assert sorted((f, fn) for f, fn, _ in _not_allowed(_global_settings_reads(tmp_path))) == [
        ("limits.py", "other"), ("providers/_probe.py", "make_probe")]


def test_no_import_of_our_own_modules_is_caught() -> None:
    """An import of a navigo_core module never sits in a ``try`` whose handlers would hide its failure (a broken
    module is a bug to see, not a feature to skip)."""
    import ast

    hidden = []
    for path in sorted((ROOT / "navigo_core").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Try) or not node.handlers:
                continue
            for stmt in node.body:
                for sub in ast.walk(stmt):
                    module = (sub.module or "") if isinstance(sub, ast.ImportFrom) else (
                        sub.names[0].name if isinstance(sub, ast.Import) else "")
                    if module == "navigo_core" or module.startswith("navigo_core."):
                        hidden.append(f"{path.relative_to(ROOT)}:{sub.lineno}")
    assert hidden == []


@pytest.mark.heavy
def test_mypy_passes_on_the_core() -> None:
    """mypy (pinned in requirements-dev.txt, configured in mypy.ini: navigo_core, the pydantic plugin, untyped
    bodies checked, unused ignores reported) finds no error in the core."""
    import mypy.version

    pinned = (ROOT / "requirements-dev.txt").read_text(encoding="utf-8")
    assert f"mypy=={mypy.version.__version__}\n" in pinned, "pin the installed mypy in requirements-dev.txt"
    run = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "mypy.ini")], cwd=ROOT,
                         capture_output=True, text=True, timeout=280)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Success: no issues found" in run.stdout, run.stdout


# --- no hard-coded user: owners, actors and approvers come from the signed-in user -----------------------

HARD_CODED_USERS = {"me", "approver"}  # the user of the releases before sign-in, and the approvals page's actor
USER_NAME = re.compile(r"(?:^|_)(?:owner|actor|user|approver)(?:_id|_name)?$", re.IGNORECASE)
OWNER_SCAN = ("navigo_core", "ui", "app_pages", "app.py")
# (file, where) -> why the literal may stay: where is "Class.NAME", a name, or a function's parameter.
OWNER_LITERALS_ALLOWED = {
    ("navigo_core/auth/models.py", "Role.APPROVER"): "the role's name, not a user",
    ("navigo_core/store/migrations/versions/0003_owners.py", "OLD_DEFAULT_USER"):
        "the migration moves the old hard-coded owner's rows to the legacy owner",
}


def _is_user_name(node: ast.AST | str | None) -> bool:
    name = node if isinstance(node, str) else (node.id if isinstance(node, ast.Name) else
                                              node.attr if isinstance(node, ast.Attribute) else
                                              node.value if isinstance(node, ast.Constant) else None)
    return isinstance(name, str) and bool(USER_NAME.search(name))


def _is_hard_coded(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value in HARD_CODED_USERS


def _hard_coded_users(root: Path) -> list[tuple[str, str, int]]:
    """Every string literal "me" / "approver" given as a user: a keyword argument ``owner=`` / ``actor=`` /
    ``user=`` / ``approver=`` (and ``*_id`` / ``*_name``), an assignment to such a name (``OWNER = "me"``,
    ``self.user = ...``), a parameter's default, a dict value under such a key, a comparison with such a name, a
    positional pair (``session_state.get("user", "me")``).
    Returns (file, where, line); a positional argument (``require_role("approver")``) is a role, not a user."""
    files = [p for part in OWNER_SCAN for p in ((root / part).rglob("*.py") if (root / part).is_dir() else [root / part])]
    found: list[tuple[str, str, int]] = []
    for path in sorted(files):
        rel = path.relative_to(root).as_posix()

        def visit(node: ast.AST, scope: str) -> None:
            for child in ast.iter_child_nodes(node):
                def add(where: str, at: ast.AST = child) -> None:
                    found.append((rel, where, getattr(at, "lineno", 0)))

                if isinstance(child, ast.keyword) and _is_user_name(child.arg) and _is_hard_coded(child.value):
                    add(f"{child.arg}=", at=child.value)
                elif isinstance(child, (ast.Assign, ast.AnnAssign)) and _is_hard_coded(child.value):
                    targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                    for target in targets:
                        if _is_user_name(target):
                            name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
                            add(f"{scope}.{name}" if scope else name)
                elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    params = [*child.args.posonlyargs, *child.args.args]
                    pairs = [*zip(params[len(params) - len(child.args.defaults):], child.args.defaults),
                             *zip(child.args.kwonlyargs, child.args.kw_defaults)]
                    for arg, default in pairs:
                        if _is_user_name(arg.arg) and _is_hard_coded(default):
                            add(f"{getattr(child, 'name', 'lambda')}({arg.arg}=)", at=default)
                elif isinstance(child, ast.Dict):
                    for key, value in zip(child.keys, child.values):
                        if _is_user_name(key) and _is_hard_coded(value):
                            add(f"{{{getattr(key, 'value', '')!r}: ...}}", at=value)
                elif isinstance(child, ast.Call) and any(
                        isinstance(key, ast.Constant) and _is_user_name(key) and _is_hard_coded(value)
                        for key, value in zip(child.args, child.args[1:])):
                    add("(\"user\", \"me\") argument")  # session_state.get("user", "me"), setdefault(...)
                elif isinstance(child, ast.Compare):
                    sides = [child.left, *child.comparators]
                    if any(_is_user_name(s) and not isinstance(s, ast.Constant) for s in sides) and any(
                            _is_hard_coded(s) for s in sides):
                        add("comparison")
                visit(child, child.name if isinstance(child, ast.ClassDef) else scope)

        visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), "")
    return found


def _owner_literals_not_allowed(found: list[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    return [f for f in found if (f[0], f[1]) not in OWNER_LITERALS_ALLOWED]


def test_no_hard_coded_owner_actor_or_approver_remains() -> None:
    """No "me" or "approver" is used as an owner, actor, user or approver in the app: every owner is the signed-in
    user (ui/auth.py), every approver the user holding the role. The role's name and the migration that maps the
    old "me" to the legacy owner are the only literals left (OWNER_LITERALS_ALLOWED)."""
    found = _hard_coded_users(ROOT)
    assert {(f, w) for f, w, _ in found} >= set(OWNER_LITERALS_ALLOWED), found  # the scan sees the allowed ones
    assert _owner_literals_not_allowed(found) == [], "a hard-coded user: take it from the signed-in user instead"


def test_the_owner_scan_catches_a_planted_hard_coded_user(tmp_path: Path) -> None:
    """The same scan fails on a copy of the sources where a page and a core module hard-code the user again."""
    ignore = shutil.ignore_patterns("__pycache__", "data", "*.yaml", "*.json", "*.md", "*.npz", "*.onnx", "*.bin")
    for part in OWNER_SCAN:
        if (ROOT / part).is_dir():
            shutil.copytree(ROOT / part, tmp_path / part, ignore=ignore)
        else:
            shutil.copy(ROOT / part, tmp_path / part)
    assert _owner_literals_not_allowed(_hard_coded_users(tmp_path)) == []  # the copy alone passes
    page = tmp_path / "app_pages" / "approvals.py"
    page.write_text(page.read_text(encoding="utf-8") + '\n\nAPPROVER_ID = "approver"\n'
                    'svc.approve(number, actor="approver")\n', encoding="utf-8")
    (tmp_path / "navigo_core" / "_probe.py").write_text(
        'def load(store, owner="me"):\n    return store.plans.list(owner="me")\n\n\n'
        'def mine(app, state):\n    return app.owner == "me" or {"user": "me"} or state.get("owner", "me")\n',
        encoding="utf-8")
    assert sorted((f, w) for f, w, _ in _owner_literals_not_allowed(_hard_coded_users(tmp_path))) == [
        ("app_pages/approvals.py", "APPROVER_ID"), ("app_pages/approvals.py", "actor="),
        ("navigo_core/_probe.py", '("user", "me") argument'), ("navigo_core/_probe.py", "comparison"),
        ("navigo_core/_probe.py", "load(owner=)"), ("navigo_core/_probe.py", "owner="),
        ("navigo_core/_probe.py", "{'user': ...}")]
