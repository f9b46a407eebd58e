"""Schema migrations of the store (Alembic, ``navigo_core/store/migrations``), on SQLite and PostgreSQL.

* A database of the previous release (the schema of commit 3da9336: no ``counters``, no revision) upgrades
  when the store opens: every row survives unchanged, the counters are seeded from the stored numbers and
  plan versions, and new numbers and versions go on after the existing maximum.
* A database of the release between (``counters`` created in place, no revision) is stamped and keeps its
  counters; opening an upgraded database again changes nothing.
* Processes starting together on an old database upgrade it once.
* A read-only old database still opens for reading; nothing is written to it.
* The revisions build exactly the tables in code (so a change of the tables without a revision fails here),
  and downgrade and upgrade again.
* ``0003_owners``: a database of the previous revision (``0002_counters``) with rows upgrades; the rows keep their
  data, routes and plans get the legacy owner (``LEGACY_OWNER``), as do applications and claims of the old
  hard-coded user ``me``; threads keep their owners; the repositories then find them for that owner only.
"""

from __future__ import annotations

import threading
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import (
    Column,
    Date,
    DateTime,
    Engine,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    create_engine,
    inspect,
    select,
    text,
)

from navigo_core.business.applications import ApplicationService
from navigo_core.store import Store, StoreError, metadata, migrations

LEGACY = "demo-shared"  # Settings.legacy_owner's default (0003_owners.LEGACY_OWNER)

YEAR = datetime.now(timezone.utc).year
NOW = datetime(YEAR, 3, 4, 5, 6, 7, tzinfo=timezone.utc)


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'navigo.db'}"
    return str(request.getfixturevalue("postgres_url"))


# --- the previous release's tables, as its navigo_core/store/__init__.py defined them (commit 3da9336) -------

def previous_release_metadata() -> MetaData:
    m = MetaData()
    Table("routes", m,
          Column("id", String(36), primary_key=True),
          Column("created_at", DateTime(timezone=True), nullable=False),
          Column("title", String(300), nullable=False),
          Column("request_json", Text, nullable=False),
          Column("result_json", Text, nullable=False))
    Table("intent_events", m,
          Column("id", Integer, primary_key=True, autoincrement=True),
          Column("created_at", DateTime(timezone=True), nullable=False, index=True),
          Column("layer", String(2), nullable=False),
          Column("intent", String(40), nullable=False),
          Column("score", Float, nullable=True),
          Column("l1_ms", Float, nullable=True),
          Column("l2_ms", Float, nullable=True),
          Column("l3_ms", Float, nullable=True),
          Column("total_ms", Float, nullable=False),
          Column("lang", String(5), nullable=False),
          Column("text", Text, nullable=True))
    Table("plans", m,
          Column("id", String(36), nullable=False),
          Column("version", Integer, nullable=False),
          Column("created_at", DateTime(timezone=True), nullable=False),
          Column("request_text", Text, nullable=False),
          Column("state_json", Text, nullable=False),
          PrimaryKeyConstraint("id", "version"))
    Table("threads", m,
          Column("id", String(36), primary_key=True),
          Column("owner", String(100), nullable=False, index=True),
          Column("created_at", DateTime(timezone=True), nullable=False),
          Column("updated_at", DateTime(timezone=True), nullable=False, index=True),
          Column("title", String(300), nullable=False, default=""),
          Column("state_json", Text, nullable=True))
    Table("messages", m,
          Column("id", Integer, primary_key=True, autoincrement=True),
          Column("thread_id", String(36), ForeignKey("threads.id", ondelete="CASCADE"), nullable=False, index=True),
          Column("created_at", DateTime(timezone=True), nullable=False),
          Column("role", String(20), nullable=False),
          Column("content", Text, nullable=False),
          Column("status", String(20), nullable=True),
          Column("meta_json", Text, nullable=True))
    Table("applications", m,
          Column("id", String(36), primary_key=True),
          Column("number", String(20), nullable=False, unique=True),
          Column("owner", String(100), nullable=False, index=True),
          Column("traveller", String(200), nullable=False),
          Column("purpose", Text, nullable=False, default=""),
          Column("origin", String(200), nullable=False, default=""),
          Column("cities_json", Text, nullable=False),
          Column("aliases_json", Text, nullable=False),
          Column("start_date", Date, nullable=True),
          Column("end_date", Date, nullable=True),
          Column("estimated_cost", Float, nullable=True),
          Column("currency", String(3), nullable=False, default="CNY"),
          Column("excesses_json", Text, nullable=False),
          Column("status", String(20), nullable=False, index=True),
          Column("approver", String(100), nullable=True),
          Column("decision_comment", Text, nullable=True),
          Column("plan_id", String(36), nullable=True),
          Column("created_at", DateTime(timezone=True), nullable=False),
          Column("updated_at", DateTime(timezone=True), nullable=False))
    Table("application_audit", m,
          Column("id", Integer, primary_key=True, autoincrement=True),
          Column("application_id", String(36), ForeignKey("applications.id", ondelete="CASCADE"), nullable=False,
                 index=True),
          Column("at", DateTime(timezone=True), nullable=False),
          Column("actor", String(100), nullable=False),
          Column("action", String(30), nullable=False),
          Column("changes_json", Text, nullable=False),
          Column("comment", Text, nullable=True))
    Table("claims", m,
          Column("id", String(36), primary_key=True),
          Column("owner", String(100), nullable=False, index=True),
          Column("application_number", String(20), nullable=True),
          Column("created_at", DateTime(timezone=True), nullable=False),
          Column("total", Float, nullable=False),
          Column("currency", String(3), nullable=False),
          Column("items_json", Text, nullable=False),
          Column("summary_json", Text, nullable=False))
    return m


OLD_TABLES = ("routes", "intent_events", "plans", "threads", "messages", "applications", "application_audit",
              "claims")


def _application(n: str, number: str, created: datetime) -> dict[str, Any]:
    return {"id": n, "number": number, "owner": "me", "traveller": "Li Lei", "purpose": "client visit",
            "origin": "上海", "cities_json": '["杭州"]', "aliases_json": '["杭州", "Hangzhou"]',
            "start_date": date(created.year, 5, 1), "end_date": date(created.year, 5, 3), "estimated_cost": 1234.5,
            "currency": "CNY", "excesses_json": "[]", "status": "submitted", "approver": None,
            "decision_comment": None, "plan_id": "p-old", "created_at": created, "updated_at": created}


def make_previous_release_database(url: str) -> dict[str, list[dict[str, Any]]]:
    """A database as the previous release left it, with rows in every table; returns them as read back."""
    old = previous_release_metadata()
    engine = create_engine(url)
    try:
        if engine.dialect.name == "sqlite":
            with engine.connect() as conn:  # as that release's make_engine did (the mode stays with the file)
                conn.exec_driver_sql("PRAGMA journal_mode=WAL")
        old.create_all(engine)
        t = old.tables
        with engine.begin() as conn:
            conn.execute(t["routes"].insert(), [{"id": "r-1", "created_at": NOW, "title": "上海 → 杭州",
                                                  "request_json": '{"origin": "上海"}', "result_json": '{"km": 176}'}])
            conn.execute(t["intent_events"].insert(), [
                {"created_at": NOW, "layer": "L1", "intent": "greeting", "score": 1.0, "l1_ms": 0.1, "l2_ms": None,
                 "l3_ms": None, "total_ms": 0.1, "lang": "en", "text": None},
                {"created_at": NOW, "layer": "L2", "intent": "policy_query", "score": 0.83, "l1_ms": 0.1,
                 "l2_ms": 2.5, "l3_ms": None, "total_ms": 2.6, "lang": "zh", "text": "差旅标准是多少"}])
            conn.execute(t["plans"].insert(), [
                {"id": "p-old", "version": v, "created_at": NOW, "request_text": f"Berlin to Rome v{v}",
                 "state_json": f'{{"v": {v}}}'} for v in (1, 2, 3)] + [
                {"id": "p-other", "version": 1, "created_at": NOW, "request_text": "Kyoto", "state_json": "{}"}])
            conn.execute(t["threads"].insert(), [{"id": "t-1", "owner": "alice", "created_at": NOW, "updated_at": NOW,
                                                   "title": "to Hangzhou", "state_json": '{"flow": "trip"}'}])
            conn.execute(t["messages"].insert(), [
                {"thread_id": "t-1", "created_at": NOW, "role": "user", "content": "to Hangzhou", "status": None,
                 "meta_json": None},
                {"thread_id": "t-1", "created_at": NOW, "role": "assistant", "content": "When?", "status": "asking",
                 "meta_json": '{"quick": ["Monday"]}'}])
            conn.execute(t["applications"].insert(), [
                _application("a-1", f"TA-{YEAR}-0001", NOW), _application("a-2", f"TA-{YEAR}-0002", NOW),
                _application("a-7", f"TA-{YEAR}-0007", NOW),
                _application("a-old", "TA-2025-0003", datetime(2025, 6, 1, tzinfo=timezone.utc))])
            conn.execute(t["application_audit"].insert(), [
                {"application_id": "a-7", "at": NOW, "actor": "me", "action": "create", "changes_json": "[]",
                 "comment": None},
                {"application_id": "a-7", "at": NOW, "actor": "boss", "action": "approve", "changes_json": "[]",
                 "comment": "ok"}])
            conn.execute(t["claims"].insert(), [{"id": "c-1", "owner": "me", "application_number": f"TA-{YEAR}-0007",
                                                  "created_at": NOW, "total": 88.0, "currency": "CNY",
                                                  "items_json": "[]", "summary_json": '{"total": 88.0}'}])
        return rows_of(engine, OLD_TABLES)
    finally:
        engine.dispose()


def upgraded(before: dict[str, list[dict[str, Any]]], legacy: str = LEGACY) -> dict[str, list[dict[str, Any]]]:
    """The rows ``before`` as 0003_owners leaves them: routes and plans owned by ``legacy``, applications and
    claims of ``me`` moved to it, applications with an unknown department; every other value unchanged."""
    out: dict[str, list[dict[str, Any]]] = {}
    for name, rows in before.items():
        new = []
        for row in rows:
            row = dict(row)
            if name in ("routes", "plans"):
                row["owner"] = legacy
            if name in ("applications", "claims") and row["owner"] == "me":
                row["owner"] = legacy
            if name == "applications":
                row["owner_department"] = None
            new.append(row)
        out[name] = new
    return out


def rows_of(engine: Engine, tables: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    """Every row of ``tables``, in a stable order, read with the tables' reflected definitions."""
    reflected = MetaData()
    reflected.reflect(engine, only=list(tables))
    out: dict[str, list[dict[str, Any]]] = {}
    with engine.connect() as conn:
        for name in tables:
            table = reflected.tables[name]
            rows = [dict(r._mapping) for r in conn.execute(select(table).order_by(*table.primary_key.columns))]
            out[name] = rows
    return out


def _plain(url: str) -> Engine:
    return create_engine(url)


def _revision_and_counters(url: str) -> tuple[list[str], dict[str, int]]:
    engine = _plain(url)
    try:
        with engine.connect() as conn:
            revisions = [r[0] for r in conn.execute(text("SELECT version_num FROM alembic_version"))]
            counters = {r[0]: int(r[1]) for r in conn.execute(text("SELECT name, value FROM counters"))}
        return revisions, counters
    finally:
        engine.dispose()


def test_a_database_of_the_previous_release_upgrades_on_start_with_nothing_lost(url: str) -> None:
    before = make_previous_release_database(url)
    assert sum(len(rows) for rows in before.values()) == 17

    store = Store.from_url(url)

    engine = _plain(url)
    try:
        assert rows_of(engine, OLD_TABLES) == upgraded(before)  # every row, every value kept; the legacy owner
        assert set(inspect(engine).get_table_names()) == {*metadata.tables, "alembic_version"}
    finally:
        engine.dispose()
    revisions, counters = _revision_and_counters(url)
    assert revisions == [migrations.head()]
    assert counters == {f"application:TA-{YEAR}-": 7, "application:TA-2025-": 3, "plan:p-old": 3, "plan:p-other": 1}

    # the repositories read the old rows
    assert store.routes.get("r-1")["request"] == {"origin": "上海"}  # type: ignore[index]
    assert [m["content"] for m in store.threads.messages("t-1")] == ["to Hangzhou", "When?"]
    assert store.threads.get_state("t-1") == {"flow": "trip"}
    assert [a["action"] for a in store.applications.audit("a-7")] == ["create", "approve"]
    assert store.claims.get("c-1")["summary"] == {"total": 88.0}  # type: ignore[index]
    assert store.events.count() == 2 and store.plans.get("p-old")["version"] == 3  # type: ignore[index]

    # numbering goes on after the existing maximum: per year, per plan
    assert ApplicationService(store).create(owner="me", cities=["Hangzhou"]).number == f"TA-{YEAR}-0008"
    last_year = store.applications.insert(
        {"number": None, "owner": "me", "traveller": "me", "purpose": "", "origin": "", "cities": ["Kyoto"],
         "aliases": [], "currency": "CNY", "excesses": [], "status": "draft",
         "created_at": datetime(2025, 7, 1, tzinfo=timezone.utc)}, actor="me")
    assert last_year["number"] == "TA-2025-0004"
    assert store.plans.save("p-old", "again", {}, owner=LEGACY) == ("p-old", 4)
    assert store.plans.save("p-other", "again", {}, owner=LEGACY) == ("p-other", 2)
    assert store.plans.save(None, "new", {}, owner=LEGACY)[1] == 1
    assert len(store.applications.list()) == 6
    store.engine.dispose()

    # opening it again runs nothing and changes nothing
    after = rows_of(_plain(url), OLD_TABLES)
    Store.from_url(url).engine.dispose()
    assert rows_of(_plain(url), OLD_TABLES) == after
    assert _revision_and_counters(url)[0] == [migrations.head()]


def test_a_database_of_the_release_between_is_stamped_and_keeps_its_counters(url: str) -> None:
    """Tables made by the code before Alembic (``counters`` created in place, in use, no revision)."""
    engine = _plain(url)
    try:
        metadata.create_all(engine)  # the release between: today's tables, no alembic_version
        with engine.begin() as conn:
            conn.execute(metadata.tables["applications"].insert(), [_application("a-3", f"TA-{YEAR}-0003", NOW)])
            conn.execute(metadata.tables["plans"].insert(), [
                {"id": "p-1", "version": 1, "owner": "me", "created_at": NOW, "request_text": "x", "state_json": "{}"},
                {"id": "p-2", "version": 5, "owner": "me", "created_at": NOW, "request_text": "y", "state_json": "{}"}])
            # ahead of the rows (a number taken by a rolled-back insert is never given again) / behind them
            conn.execute(metadata.tables["counters"].insert(), [{"name": f"application:TA-{YEAR}-", "value": 9},
                                                                {"name": "plan:p-2", "value": 2}])
    finally:
        engine.dispose()

    store = Store.from_url(url)
    revisions, counters = _revision_and_counters(url)
    assert revisions == [migrations.head()]
    assert counters == {f"application:TA-{YEAR}-": 9, "plan:p-1": 1, "plan:p-2": 5}
    assert ApplicationService(store).create(owner="me", cities=["Hangzhou"]).number == f"TA-{YEAR}-0010"
    assert store.plans.save("p-2", "again", {}, owner="me") == ("p-2", 6)
    store.engine.dispose()


def test_a_new_database_is_created_at_the_newest_revision(url: str) -> None:
    store = Store.from_url(url)
    assert _revision_and_counters(url) == ([migrations.head()], {})
    assert ApplicationService(store).create(owner="me", cities=["Hangzhou"]).number == f"TA-{YEAR}-0001"
    store.engine.dispose()


def test_processes_starting_together_upgrade_an_old_database_once(url: str) -> None:
    before = make_previous_release_database(url)
    errors: list[BaseException] = []
    stores: list[Store] = []
    start = threading.Barrier(4)

    def open_store() -> None:
        try:
            start.wait()
            stores.append(Store.from_url(url))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    workers = [threading.Thread(target=open_store) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert errors == [] and len(stores) == 4
    revisions, counters = _revision_and_counters(url)
    assert revisions == [migrations.head()] and counters[f"application:TA-{YEAR}-"] == 7
    numbers = {ApplicationService(s).create(owner="me", cities=["Hangzhou"]).number for s in stores}
    assert numbers == {f"TA-{YEAR}-{n:04d}" for n in (8, 9, 10, 11)}
    after = upgraded(before)
    assert rows_of(_plain(url), ("routes", "messages", "claims")) == {k: after[k] for k in ("routes", "messages",
                                                                                            "claims")}
    for s in stores:
        s.engine.dispose()


def test_a_read_only_database_of_the_previous_release_opens_for_reading(tmp_path: Path) -> None:
    db = tmp_path / "navigo.db"
    make_previous_release_database(f"sqlite:///{db}")
    content = db.read_bytes()

    store = Store.open(f"sqlite:///file:{db}?mode=ro&uri=true")

    assert store.available and store.fault is not None and "read-only" in store.fault.message("en")
    assert [m["content"] for m in store.threads.messages("t-1")] == ["to Hangzhou", "When?"]
    assert [t["id"] for t in store.threads.list("alice")] == ["t-1"]
    # not upgraded (read-only): the tables that gained owners in 0003_owners cannot be read per owner; the read
    # fails with a StoreError (one sentence), never a traceback and never someone else's rows
    with pytest.raises(StoreError):
        store.routes.list(LEGACY)
    store.engine.dispose()
    assert db.read_bytes() == content  # no upgrade was tried: nothing written
    assert "alembic_version" not in inspect(_plain(f"sqlite:///{db}")).get_table_names()


def test_the_revisions_build_the_tables_in_code_and_downgrade(url: str) -> None:
    """Upgrading an empty database through every revision gives exactly ``metadata``'s tables: changing the
    tables in code without a revision fails here."""
    engine = _plain(url)
    try:
        with engine.begin() as conn:
            migrations.upgrade(conn)
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), metadata)
        assert diff == []
        with engine.begin() as conn:
            command.downgrade(migrations.config(conn), "0001_baseline")
        assert "counters" not in inspect(engine).get_table_names()
        with engine.begin() as conn:
            command.downgrade(migrations.config(conn), "base")
        assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
        with engine.begin() as conn:
            migrations.upgrade(conn)
            assert migrations.current(conn) == migrations.head()
    finally:
        engine.dispose()


def test_a_database_of_the_previous_revision_gets_owners_and_keeps_its_rows(url: str) -> None:
    """0002_counters → 0003_owners: routes and plans get the legacy owner given by the opener (Settings.legacy_owner),
    applications and claims of the old hard-coded ``me`` move to it, others' rows keep their owners; the repositories
    then list and open them for their owner only."""
    engine = _plain(url)
    try:
        with engine.begin() as conn:
            migrations.upgrade(conn, "0002_counters")
        old = MetaData()
        old.reflect(engine, only=list(OLD_TABLES))
        assert "owner" not in old.tables["routes"].c and "owner" not in old.tables["plans"].c
        t = old.tables
        with engine.begin() as conn:
            conn.execute(t["routes"].insert(), [{"id": "r-1", "created_at": NOW, "title": "A → B",
                                                  "request_json": "{}", "result_json": '{"km": 1}'}])
            conn.execute(t["plans"].insert(), [{"id": "p-1", "version": 1, "created_at": NOW, "request_text": "Rome",
                                                 "state_json": "{}"}])
            conn.execute(t["applications"].insert(), [_application("a-1", f"TA-{YEAR}-0001", NOW),
                                                      {**_application("a-2", f"TA-{YEAR}-0002", NOW), "owner": "bob"}])
            conn.execute(t["claims"].insert(), [{"id": "c-1", "owner": "me", "application_number": None,
                                                  "created_at": NOW, "total": 5.0, "currency": "CNY",
                                                  "items_json": "[]", "summary_json": "{}"}])
            conn.execute(t["threads"].insert(), [{"id": "t-1", "owner": "browser-1", "created_at": NOW,
                                                   "updated_at": NOW, "title": "hi", "state_json": None}])
        before = rows_of(engine, OLD_TABLES)
    finally:
        engine.dispose()

    store = Store.from_url(url, legacy_owner="legacy-team")
    assert _revision_and_counters(url)[0] == [migrations.head()]
    engine = _plain(url)
    try:
        after = rows_of(engine, OLD_TABLES)
    finally:
        engine.dispose()
    assert after == upgraded(before, "legacy-team")
    assert [a["owner"] for a in after["applications"]] == ["legacy-team", "bob"]
    assert after["threads"][0]["owner"] == "browser-1"

    assert [r["id"] for r in store.routes.list("legacy-team")] == ["r-1"] and store.routes.list("alice") == []
    assert store.routes.get("r-1", owner="alice") is None and store.routes.get("r-1", owner="legacy-team") is not None
    assert [p["id"] for p in store.plans.list("legacy-team")] == ["p-1"] and store.plans.get("p-1", owner="alice") is None
    assert [c["id"] for c in store.claims.list("legacy-team")] == ["c-1"] and store.claims.list("me") == []
    assert [a["number"] for a in store.applications.list("bob")] == [f"TA-{YEAR}-0002"]
    assert store.applications.get_by_number(f"TA-{YEAR}-0002", owner="legacy-team") is None
    # a plan id of another owner is not continued: the save starts a plan of its own
    other_id, version = store.plans.save("p-1", "mine", {}, owner="alice")
    assert other_id != "p-1" and version == 1 and store.plans.versions("p-1") == store.plans.versions("p-1", "legacy-team")
    store.engine.dispose()
