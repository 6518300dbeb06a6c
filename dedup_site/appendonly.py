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


# --- permanent tables: one generic trigger, its rule in the trigger's arguments ------------

REWRITE_SETTING = "dedup.rewrite"

# The rule of a table travels in its trigger's arguments: TG_ARGV[0] 'app' (binds the
# roles that do not own the table) or 'all' (the owner too, unless its transaction
# declared a rewrite); TG_ARGV[1] 'append-only' or 'permanent'; TG_ARGV[2] the sealing
# column or ''; the rest the columns an UPDATE may change. Comparing whole rows (minus
# the mutable columns) protects a column added later without a new trigger.
PERMANENT_FUNCTION_SQL = """
CREATE OR REPLACE FUNCTION dedup_permanent_row() RETURNS trigger AS $$
DECLARE
    mutable text[] := '{}';
    changed text;
BEGIN
    -- The application's common case first, without the role test: an UPDATE of mutable
    -- columns only (measured: the role test cost as much as the comparison).
    IF TG_OP = 'UPDATE' AND TG_ARGV[1] = 'permanent' THEN
        IF TG_NARGS > 3 THEN
            mutable := TG_ARGV[3:TG_NARGS - 1];
        END IF;
        IF (TG_ARGV[2] = '' OR (to_jsonb(OLD) -> TG_ARGV[2]) = 'null'::jsonb)
           AND (to_jsonb(NEW) - mutable) = (to_jsonb(OLD) - mutable) THEN
            RETURN NEW;
        END IF;
    END IF;
    IF dedup_rewrite_allowed(TG_RELID, TG_ARGV[0]) THEN
        IF TG_OP = 'DELETE' THEN
            RETURN OLD;
        END IF;
        RETURN NEW;
    END IF;
    IF TG_OP = 'UPDATE' AND TG_ARGV[1] = 'permanent' THEN
        IF to_jsonb(NEW) = to_jsonb(OLD) THEN
            RETURN NEW;
        END IF;
        IF TG_ARGV[2] <> '' AND (to_jsonb(OLD) -> TG_ARGV[2]) <> 'null'::jsonb THEN
            RAISE EXCEPTION '% is permanent: UPDATE refused (% is set: the row is sealed)',
                TG_TABLE_NAME, TG_ARGV[2] USING ERRCODE = 'insufficient_privilege';
        END IF;
        SELECT string_agg(n.key, ', ' ORDER BY n.key) INTO changed
            FROM jsonb_each(to_jsonb(NEW) - mutable) AS n
            WHERE n.value IS DISTINCT FROM (to_jsonb(OLD) -> n.key);
        RAISE EXCEPTION '% is permanent: UPDATE of % refused', TG_TABLE_NAME, changed
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RAISE EXCEPTION '% is %: % refused', TG_TABLE_NAME, TG_ARGV[1], TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
"""

# Who passes a table's rule: a role holding the table owner's privileges (the owner, a
# superuser), for an 'app' rule always, for an 'all' rule only inside a transaction that
# set `dedup.rewrite` (a migration's declared rewrite). Any role can set the setting;
# only the owner's role test makes it count. (PL/pgSQL: its plan is kept per session,
# where a SQL function would be planned again on every row.)
REWRITE_ALLOWED_SQL = """
CREATE OR REPLACE FUNCTION dedup_rewrite_allowed(rel oid, bound text) RETURNS boolean AS $$
DECLARE
    owner oid;
BEGIN
    SELECT c.relowner INTO owner FROM pg_class AS c WHERE c.oid = rel;
    RETURN pg_has_role(current_user, owner, 'USAGE')
        AND (bound = 'app' OR coalesce(current_setting('dedup.rewrite', true), '') <> '');
END;
$$ LANGUAGE plpgsql STABLE;
"""

PERMANENT_FUNCTIONS_REMOVE_SQL = """
DROP FUNCTION IF EXISTS dedup_permanent_row();
DROP FUNCTION IF EXISTS dedup_rewrite_allowed(oid, text);
"""


def _literal(value: str) -> str:
    if not value.replace("_", "").isalnum() and value not in ("", "append-only"):
        raise ValueError(f"not a column or rule name: {value!r}")
    return f"'{value}'"


def permanent_sql(
    table: str,
    *,
    kind: str,
    mutable: tuple[str, ...] = (),
    sealed_by: str = "",
    owner_bound: bool = False,
) -> tuple[str, str]:
    """(install, remove) SQL of `table`'s row and TRUNCATE triggers under the generic
    function (installed first by `permanent_functions`)."""
    if kind not in ("append-only", "permanent"):
        raise ValueError(f"no database rule for kind {kind!r}")
    args = ", ".join(
        _literal(a) for a in ("all" if owner_bound else "app", kind, sealed_by, *mutable)
    )
    row, truncate = f"{table}_permanent", f"{table}_permanent_truncate"
    install = f"""
DROP TRIGGER IF EXISTS {row} ON {table};
CREATE TRIGGER {row}
    BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION dedup_permanent_row({args});
DROP TRIGGER IF EXISTS {truncate} ON {table};
CREATE TRIGGER {truncate}
    BEFORE TRUNCATE ON {table}
    FOR EACH STATEMENT EXECUTE FUNCTION dedup_permanent_row({args});
"""
    remove = f"""
DROP TRIGGER IF EXISTS {row} ON {table};
DROP TRIGGER IF EXISTS {truncate} ON {table};
"""
    return install, remove


def permanent_functions() -> migrations.RunPython:
    return on_postgresql(
        REWRITE_ALLOWED_SQL + PERMANENT_FUNCTION_SQL, PERMANENT_FUNCTIONS_REMOVE_SQL
    )


def permanent(
    table: str,
    *,
    kind: str,
    mutable: tuple[str, ...] = (),
    sealed_by: str = "",
    owner_bound: bool = False,
) -> migrations.RunPython:
    return on_postgresql(
        *permanent_sql(
            table, kind=kind, mutable=mutable, sealed_by=sealed_by, owner_bound=owner_bound
        )
    )


def owner_rewrite(reason: str) -> migrations.RunPython:
    """First operation of a migration that changes rows an owner-bound rule protects:
    declares the rewrite (with its reason) for the migration's transaction. Only a role
    with the owner's privileges gets anything from it."""

    def apply(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute("SELECT set_config(%s, %s, true)", [REWRITE_SETTING, reason])

    return migrations.RunPython(apply, apply)
