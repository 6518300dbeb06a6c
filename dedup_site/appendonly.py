"""Append-only tables in PostgreSQL itself, whatever the client: for migrations.

`append_only(table, prefix)` is a reversible migration operation that installs a row
trigger refusing UPDATE and DELETE and (unless `truncate=False`) a statement trigger
refusing TRUNCATE (CASCADE included), both raising "<table> is append-only: <op>
refused". Only a superuser gets past them (`session_replication_role = replica`), and
the application's role owns no table, so it can neither drop nor disable them. SQLite
has no such triggers: there the model layer alone refuses."""

from typing import Any

from django.db import migrations


def append_only_sql(table: str, prefix: str, *, truncate: bool = True) -> tuple[str, str]:
    """(install, remove) SQL for `table`; functions and triggers are named `prefix_…`."""
    function = f"{prefix}_append_only"
    install = f"""
CREATE OR REPLACE FUNCTION {function}() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS {function} ON {table};
CREATE TRIGGER {function}
    BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION {function}();
"""
    remove = f"\nDROP TRIGGER IF EXISTS {function} ON {table};\n"
    if truncate:
        install += f"""DROP TRIGGER IF EXISTS {prefix}_no_truncate ON {table};
CREATE TRIGGER {prefix}_no_truncate
    BEFORE TRUNCATE ON {table}
    FOR EACH STATEMENT EXECUTE FUNCTION {function}();
"""
        remove += f"DROP TRIGGER IF EXISTS {prefix}_no_truncate ON {table};\n"
    remove += f"DROP FUNCTION IF EXISTS {function}();\n"
    return install, remove


def on_postgresql(forward: str, reverse: str) -> migrations.RunPython:
    """Run `forward` (and `reverse` on the way back) on PostgreSQL only."""

    def run(sql: str) -> Any:
        def apply(apps: Any, schema_editor: Any) -> None:
            if schema_editor.connection.vendor == "postgresql":
                schema_editor.execute(sql, None)  # no params: "%" is plpgsql here

        return apply

    return migrations.RunPython(run(forward), run(reverse))


def append_only(table: str, prefix: str, *, truncate: bool = True) -> migrations.RunPython:
    return on_postgresql(*append_only_sql(table, prefix, truncate=truncate))
