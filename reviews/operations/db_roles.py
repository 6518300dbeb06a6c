"""The application's PostgreSQL role: reads and writes rows, owns nothing.

Migrations run as the tables' owner; the desk and the workers connect as a role that
owns no table, so it cannot ALTER, DROP or DISABLE TRIGGER, and cannot TRUNCATE. Its
privileges follow each table's rule (dedup_site.permanence): append-only tables take
INSERT only (on labels also UPDATE of `superseded_by`), permanent tables INSERT and
UPDATE but no DELETE, free tables (and tables created later, through default
privileges) SELECT/INSERT/UPDATE/DELETE. The triggers behind (dedup_site.appendonly)
refuse the same statements whatever the grants say, and the columns of a permanent
table that must not change.
"""

from dataclasses import dataclass

from django.db import connection, transaction

from dedup_site.permanence import RULES, Kind

# Append-only tables, and the columns the application may still UPDATE on them.
APPEND_ONLY: dict[str, list[str]] = {
    table: ["superseded_by_id"] if table == "reviews_label" else []
    for table, rule in RULES.items()
    if rule.kind == Kind.APPEND_ONLY or table == "reviews_label"
}
# Tables whose rows are never deleted (UPDATE is the triggers' business).
PERMANENT = [table for table, rule in RULES.items() if rule.kind == Kind.PERMANENT]
# Tables only migrations write.
MIGRATIONS_ONLY = ["django_migrations"]


class RoleError(Exception):
    """The role cannot be the application's role (superuser, or owns tables)."""


@dataclass(frozen=True)
class RoleGrant:
    role: str
    created: bool
    statements: list[str]


def app_role_grant(*, role: str, create: bool = False, password: str = "") -> RoleGrant:
    """Grant `role` what the application needs on this database, and no more.
    Idempotent; run as the tables' owner after every `migrate`."""
    if connection.vendor != "postgresql":
        raise RoleError("database roles exist on PostgreSQL only")
    q = connection.ops.quote_name
    # One transaction: the role never holds the wide grants the first statements give.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT current_database(), current_schema(), current_user")
        database, schema, owner = cursor.fetchone()
        if role == owner:
            raise RoleError(f"{role} is the role running migrations: the app needs another")
        cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = %s", [role])
        row = cursor.fetchone()
        created = False
        if row is None:
            if not create:
                raise RoleError(f"role {role} does not exist (use --create)")
            cursor.execute(f"CREATE ROLE {q(role)} LOGIN")
            created = True
        elif row[0]:
            raise RoleError(f"{role} is a superuser: it would pass every check")
        if password:
            cursor.execute(f"ALTER ROLE {q(role)} LOGIN PASSWORD %s", [password])
        cursor.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s AND tableowner = %s",
            [schema, role],
        )
        owned = [r[0] for r in cursor.fetchall()]
        if owned:
            raise RoleError(f"{role} owns tables ({', '.join(owned[:5])}): it must own none")
        cursor.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s AND tablename = ANY(%s)",
            [schema, list(APPEND_ONLY) + PERMANENT + MIGRATIONS_ONLY],
        )
        present = {r[0] for r in cursor.fetchall()}
        r, s = q(role), q(schema)
        statements = [
            f"GRANT CONNECT, TEMPORARY ON DATABASE {q(database)} TO {r}",
            f"GRANT USAGE ON SCHEMA {s} TO {r}",
            f"REVOKE CREATE ON SCHEMA {s} FROM {r}",
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {s} TO {r}",
            f"REVOKE TRUNCATE, REFERENCES, TRIGGER ON ALL TABLES IN SCHEMA {s} FROM {r}",
            f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {s} TO {r}",
            # Tables and sequences the owner creates later (new migrations).
            f"ALTER DEFAULT PRIVILEGES IN SCHEMA {s} "
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {r}",
            f"ALTER DEFAULT PRIVILEGES IN SCHEMA {s} GRANT USAGE, SELECT ON SEQUENCES TO {r}",
        ]
        for table in MIGRATIONS_ONLY:
            if table in present:
                statements.append(f"REVOKE INSERT, UPDATE, DELETE ON {q(table)} FROM {r}")
        for table, columns in APPEND_ONLY.items():
            if table not in present:
                continue
            statements.append(f"REVOKE UPDATE, DELETE ON {q(table)} FROM {r}")
            if columns:
                cols = ", ".join(q(c) for c in columns)
                statements.append(f"GRANT UPDATE ({cols}) ON {q(table)} TO {r}")
        for table in PERMANENT:
            if table in present and table not in APPEND_ONLY:
                statements.append(f"REVOKE DELETE ON {q(table)} FROM {r}")
        for statement in statements:
            cursor.execute(statement)
    return RoleGrant(role=role, created=created, statements=statements)
