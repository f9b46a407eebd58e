"""The store under concurrency, on SQLite and on a real PostgreSQL server (issue "Hardening").

* Numbers from the database: 8 processes × 200 rounds (an application, a plan version of one shared plan, a
  new chat thread with its first message) lose nothing, duplicate nothing, raise nothing — on both backends.
  Before, ``next_number`` and ``PlanRepo.save`` read the maximum and then inserted: 110/400 and 113/400
  creates failed with IntegrityError on SQLite, 225/400 and 166/400 on PostgreSQL.
* A SQLite database made before the counters still works: its numbering goes on where it stopped.
* The same value on both backends: NULs stripped (PostgreSQL refused them), a value longer than its column
  refused with a clear message (SQLite kept it, PostgreSQL raised DataError).
* Storage faults are messages (a damaged file, a read-only database, a busy one): one sentence, no path or SQL.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from navigo_core.business.applications import ApplicationService
from navigo_core.store import (
    Store,
    StoreBusy,
    StoreError,
    StoreUnavailable,
    StoreValueError,
    metadata,
)
from tests.store_concurrency import run, summary

pytestmark = [pytest.mark.usefixtures("no_internet"), pytest.mark.heavy]
YEAR = datetime.now(timezone.utc).year


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return str(request.getfixturevalue("postgres_url"))


def test_concurrent_creates_lose_nothing_duplicate_nothing_raise_nothing(url: str) -> None:
    result = run(url, processes=8, rounds=200)
    print(summary(result))
    assert result["errors"] == []
    assert result["workers_reported"] == 8
    assert result["applications"] == result["plan_versions"] == result["threads"] == 1600
    assert result["duplicate_numbers"] == 0 and result["duplicate_versions"] == 0
    assert result["stored_numbers"] == [f"TA-{YEAR}-{n:04d}" for n in range(1, 1601)]  # no gap either
    assert result["stored_versions"] == list(range(1, 1601))
    assert result["threads_stored"] == result["threads_with_one_message"] == 1600  # no orphaned or empty thread
    assert result["empty_threads"] == 0


def test_a_database_from_before_the_counters_is_upgraded_in_place(tmp_path: Path) -> None:
    """The old schema (no ``counters`` table) with numbers and versions already used: they go on from there."""
    db = tmp_path / "old.db"
    old = create_engine(f"sqlite:///{db}")
    metadata.create_all(old, tables=[t for name, t in metadata.tables.items() if name != "counters"])
    now = datetime.now(timezone.utc)
    with old.begin() as conn:
        for n in (1, 2, 7):
            conn.execute(text("INSERT INTO applications (id, number, owner, traveller, purpose, origin, cities_json, "
                              "aliases_json, currency, excesses_json, status, created_at, updated_at) VALUES "
                              "(:id, :number, 'me', 'me', '', '', '[]', '[]', 'CNY', '[]', 'draft', :now, :now)"),
                         {"id": f"old-{n}", "number": f"TA-{YEAR}-{n:04d}", "now": now})
        for v in (1, 2, 3):
            conn.execute(text("INSERT INTO plans (id, version, owner, created_at, request_text, state_json) VALUES "
                              "('p-old', :v, 'me', :now, 'old', '{}')"), {"v": v, "now": now})
    old.dispose()
    assert "counters" not in {r[0] for r in sqlite3.connect(db).execute("SELECT name FROM sqlite_master")}

    store = Store.from_url(f"sqlite:///{db}")
    assert ApplicationService(store).create(owner="me", cities=["Hangzhou"]).number == f"TA-{YEAR}-0008"
    assert store.plans.save("p-old", "again", {}, owner="me") == ("p-old", 4)
    assert store.plans.save(None, "new", {}, owner="me")[1] == 1
    assert len(store.applications.list()) == 4  # the old rows are all still there


def test_nul_characters_are_stripped_the_same_way_on_both_backends(url: str) -> None:
    store = Store.from_url(url)
    tid = store.threads.new_id()
    store.threads.add_message(tid, "user", "to Hang\x00zhou", owner="al\x00ice", meta={"note": "a\x00b"})
    [message] = store.threads.messages(tid)
    assert message["content"] == "to Hangzhou"
    assert message["meta"] == {"note": "a\x00b"}  # JSON keeps it as the \u0000 escape, which both accept
    assert store.threads.list("alice")[0]["title"] == "to Hangzhou"
    app = ApplicationService(store).create(owner="me", cities=["Hang\x00zhou"], purpose="client\x00 visit",
                                           traveller="Li\x00 Lei")
    assert (app.traveller, app.purpose) == ("Li Lei", "client visit")
    rid = store.routes.save("A\x00 → B", {"stops": ["x\x00"]}, {}, owner="me")
    assert store.routes.get(rid)["title"] == "A → B"  # type: ignore[index]


def test_too_long_values_are_refused_with_a_message_on_both_backends(url: str) -> None:
    store = Store.from_url(url)
    service = ApplicationService(store)
    with pytest.raises(StoreValueError) as exc:
        service.create(owner="me", cities=["Hangzhou"], traveller="x" * 201)
    assert exc.value.message("en") == ("The traveller is too long to save (201 characters; at most 200): "
                                       "shorten it and try again.")
    assert "太长" in exc.value.message("zh")
    with pytest.raises(StoreValueError):
        store.claims.save("me", [], {"total": 1.0}, application_number="TA-" + "9" * 30)
    assert service.list() == [] and store.claims.list("me") == []  # nothing stored half-way
    # long text columns take long values on both backends
    app = service.create(owner="me", cities=["Hangzhou"], purpose="p" * 50_000)
    assert len(app.purpose) == 50_000


def test_a_damaged_database_file_gives_one_sentence_and_a_read_only_stand_in(tmp_path: Path) -> None:
    bad = tmp_path / "navigo.db"
    bad.write_bytes(b"this is not a database " * 200)
    with pytest.raises(StoreUnavailable) as exc:
        Store.from_url(f"sqlite:///{bad}")
    message = exc.value.message("en")
    assert message.startswith("The database file navigo.db is damaged") and "backup" in message
    assert str(tmp_path) not in message and "sqlite3" not in message.lower() and "SELECT" not in message
    store = Store.open(f"sqlite:///{bad}")
    assert store.fault is not None and not store.available
    assert store.routes.list("me") == [] and store.threads.list("me") == [] and store.events.count() == 0
    with pytest.raises(StoreUnavailable) as write:
        store.routes.save("A → B", {}, {}, owner="me")
    assert write.value.message("en") == message
    with pytest.raises(StoreUnavailable):
        ApplicationService(store).create(owner="me", cities=["Hangzhou"])


def test_a_read_only_database_still_reads_and_refuses_writes_with_what_to_do(tmp_path: Path) -> None:
    db = tmp_path / "navigo.db"
    rid = Store.from_url(f"sqlite:///{db}").routes.save("A → B", {}, {}, owner="me")
    store = Store.open(f"sqlite:///file:{db}?mode=ro&uri=true")
    assert store.available and store.fault is not None
    assert "read-only" in store.fault.message("en")
    assert [r["id"] for r in store.routes.list("me")] == [rid]  # its data is still shown
    with pytest.raises(StoreUnavailable) as exc:
        store.routes.save("C → D", {}, {}, owner="me")
    assert exc.value.message("en").startswith("The database navigo.db is read-only, so nothing can be saved")


def test_an_unreachable_server_gives_one_sentence(postgres_server) -> None:  # type: ignore[no-untyped-def]
    url = postgres_server.url("no_such_database")
    with pytest.raises(StoreUnavailable) as exc:
        Store.from_url(url)
    message = exc.value.message("en")
    assert message.startswith("The database 127.0.0.1/no_such_database cannot be reached") and "DATABASE_URL" in message
    assert "psycopg" not in message and "FATAL" not in message
    assert Store.open(url).fault is not None


def test_a_writer_waits_for_a_lock_instead_of_failing(tmp_path: Path) -> None:
    """Another connection holds SQLite's write lock for a moment: the write waits (busy timeout), then succeeds."""
    db = tmp_path / "busy.db"
    store = Store.from_url(f"sqlite:///{db}")
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    released = threading.Event()

    def release() -> None:
        time.sleep(0.5)
        holder.execute("COMMIT")
        released.set()

    threading.Thread(target=release, daemon=True).start()
    rid = store.routes.save("A → B", {}, {}, owner="me")
    assert released.is_set() and store.routes.get(rid) is not None
    holder.close()


def test_busy_after_waiting_is_retried_then_reported_as_busy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import navigo_core.store.repos.plans as plans_module  # where PlanRepo._save looks _next_value up

    store = Store.from_url(f"sqlite:///{tmp_path / 'r.db'}")
    calls: list[int] = []
    real = plans_module._next_value

    def flaky(conn, name, seed):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) < 3:
            raise StoreBusy("store.error.busy", db="r.db")
        return real(conn, name, seed)

    monkeypatch.setattr(plans_module, "_next_value", flaky)
    assert store.plans.save(None, "x", {}, owner="me")[1] == 1 and len(calls) == 3  # retried in a fresh transaction
    monkeypatch.setattr(plans_module, "_next_value", lambda *a: (_ for _ in ()).throw(
        StoreBusy("store.error.busy", db="r.db")))
    with pytest.raises(StoreBusy) as exc:
        store.plans.save(None, "y", {}, owner="me")
    assert "busy" in exc.value.message("en") and isinstance(exc.value, StoreError)


def test_a_thread_is_stored_only_with_its_first_message(tmp_path: Path) -> None:
    store = Store.from_url(f"sqlite:///{tmp_path / 't.db'}")
    tid = store.threads.new_id()
    assert store.threads.get(tid) is None and store.threads.list("alice") == []
    store.threads.add_message(tid, "user", "hello", owner="alice")
    assert [t["id"] for t in store.threads.list("alice")] == [tid]
    with pytest.raises(KeyError):  # another owner cannot write into it
        store.threads.add_message(tid, "user", "mine now", owner="mallory")
    with pytest.raises(KeyError):  # without an owner a thread must exist
        store.threads.add_message(store.threads.new_id(), "user", "x")
    assert [m["content"] for m in store.threads.messages(tid)] == ["hello"]
