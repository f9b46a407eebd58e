"""Foundation invariants: i18n completeness, settings documented, import directions, store."""

from __future__ import annotations

import ast
import re
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


def test_core_never_imports_streamlit() -> None:
    offenders = []
    for path in ROOT.joinpath("navigo_core").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "streamlit" or n.startswith(("streamlit.", "streamlit_folium")) for n in names):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


FORBIDDEN_IMPORTS = {
    # package: what it must never import (imports run downward only)
    "providers": ("navigo_core.route", "navigo_core.intent", "navigo_core.scenes", "navigo_core.llm"),
    "llm": ("navigo_core.intent", "navigo_core.scenes", "navigo_core.route", "navigo_core.providers",
            "navigo_core.planner", "navigo_core.security"),
    "security": ("navigo_core.planner", "navigo_core.scenes", "navigo_core.intent", "navigo_core.route"),
    "planner": ("navigo_core.scenes", "navigo_core.intent", "navigo_core.route"),
    "intent": ("navigo_core.scenes", "navigo_core.route"),
    "route": ("navigo_core.intent", "navigo_core.scenes", "navigo_core.llm"),
    "store": ("navigo_core.",),  # but the two leaves of ALLOWED_IMPORTS
    # the one request parser sits under every consumer: it knows places, the LLM client and i18n only
    "understand": ("navigo_core.planner", "navigo_core.scenes", "navigo_core.intent", "navigo_core.route",
                   "navigo_core.clarify", "navigo_core.chat", "navigo_core.applications", "navigo_core.expenses",
                   "navigo_core.security", "navigo_core.store", "navigo_core.policy"),
}


# leaf modules a package may import although a banned prefix covers them (they import nothing of ours)
ALLOWED_IMPORTS = {"store": ("navigo_core.errors", "navigo_core.redact")}


@pytest.mark.parametrize("package", sorted(FORBIDDEN_IMPORTS))
def test_imports_run_downward(package: str) -> None:
    offenders = []
    banned = (*FORBIDDEN_IMPORTS[package], "app_pages", "ui")
    allowed = ALLOWED_IMPORTS.get(package, ())
    for path in ROOT.joinpath("navigo_core", package).rglob("*.py"):
        for line in path.read_text(encoding="utf-8").splitlines():
            m = re.match(r"\s*(?:from|import) ([\w.]+)", line)
            if m and m.group(1) not in allowed and any(m.group(1) == b.rstrip(".") or m.group(1).startswith(b if b.endswith(".") else b + ".")
                         or m.group(1) == b for b in banned):
                offenders.append(f"{path.name}: {line.strip()}")
    assert offenders == []


def test_store_saves_lists_and_reopens_routes(tmp_path: Path) -> None:
    store = Store.from_url(f"sqlite:///{tmp_path / 'sub' / 't.db'}")
    rid = store.routes.save("上海 → 杭州", {"origin": "上海"}, {"order": ["Shanghai", "Hangzhou"]})
    listed = store.routes.list()
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
