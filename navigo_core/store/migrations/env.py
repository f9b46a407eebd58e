"""Alembic environment of the store (see ``navigo_core/store/migrations/__init__.py``).

Online: over the connection the store passes in (``config.attributes["connection"]``, already holding the
schema lock and inside its transaction, which the caller commits), else over ``sqlalchemy.url``.
Offline (``--sql``): the SQL for ``sqlalchemy.url``'s dialect.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine

from navigo_core.store.schema import metadata

cfg = context.config
VERSION_TABLE = cfg.get_main_option("version_table") or "alembic_version"


def configure(*, connection: Connection | None = None, url: str | None = None, literal_binds: bool = False) -> None:
    """Alembic's context over ``connection`` (online) or ``url`` (offline), with the options of every run."""
    context.configure(
        connection=connection, url=url, literal_binds=literal_binds,
        target_metadata=metadata,  # autogenerate compares against the tables of navigo_core.store
        version_table=VERSION_TABLE,
        render_as_batch=True,  # SQLite cannot ALTER most things: autogenerate writes batch operations
        compare_type=True,
    )


def run_offline() -> None:
    configure(url=cfg.get_main_option("sqlalchemy.url"), literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    connection = cfg.attributes.get("connection")
    if connection is not None:
        configure(connection=connection)
        with context.begin_transaction():  # the caller's transaction: nothing is committed here
            context.run_migrations()
        return
    engine = create_engine(str(cfg.get_main_option("sqlalchemy.url")))
    try:
        with engine.connect() as conn:
            configure(connection=conn)
            with context.begin_transaction():
                context.run_migrations()
            conn.commit()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
