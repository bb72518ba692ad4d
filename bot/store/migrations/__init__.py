"""Alembic migrations, shipped inside the package and run by `Store.migrate()`.

There is no alembic.ini: `bot.store._migrate` builds the configuration in code and hands
env.py the store's open connection, so the same migrations run at start on SQLite and on
PostgreSQL. A new revision is a new file in versions/ whose `down_revision` is the newest
one; `tests/store/test_migrations.py` checks that the result matches `bot/store/schema.py`.
"""
