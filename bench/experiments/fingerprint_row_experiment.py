"""What would one SimHash row a document weigh? Measured on a loaded scale-bench database.

It reads a database at ingest 0034 (two fingerprint rows a document, main text and full
page, 0034's packed layout, and one band index entry; ingest 0035 made the first of the
layouts below the product's, without the full page's digest and token count). This
builds, beside them in the same database and from their rows, two tables:

- ``exp_fp_one``: one row per (document, method) holding both branches' values (SimHash,
  token count, status, text digest), keyed (document, method), with the watermark's
  ``id`` index and the main digest's hash index;
- ``exp_fp_merged``: that row with the document's fetch time, keyed as the band index
  is ((method, document, fetch time)), carrying the two covering band btrees itself
  (ingest 0029's definitions), so that the band index needs no table of its own.

It prints bytes a document (heap, each index, total) of both and of the product's
tables, then drops the two tables. Every index is built after the rows are in (so
compare with a scale-bench load made with ``--build-after all``).

    python bench/scale_bench.py --size 200000 --chunk 50000 --spacing 160 --stage load \\
        --migrate-to 0034_fingerprint_row_packed --database dedup_fp_rows
    python bench/experiments/fingerprint_row_experiment.py --database dedup_fp_rows

Answer recorded in bench/results/2026-12-04-scale-10m.md.
"""

import argparse
import json

import psycopg

ONE = """
CREATE TABLE exp_fp_one (
  id bigint NOT NULL, document_id bigint NOT NULL, simhash bigint, full_simhash bigint,
  token_count int NOT NULL, full_token_count int NOT NULL, method_id smallint NOT NULL,
  status varchar(24) NOT NULL, full_status varchar(24) NOT NULL,
  text_sha256 bytea NOT NULL, full_text_sha256 bytea NOT NULL);
INSERT INTO exp_fp_one
  SELECT m.id, m.document_id, m.simhash, f.simhash, m.token_count, f.token_count,
         m.method_id, m.status, f.status, m.text_sha256, f.text_sha256
  FROM ingest_fingerprint m
  JOIN ingest_fingerprint f
    ON f.document_id = m.document_id AND f.method_id = m.method_id AND f.branch = 'full'
  WHERE m.branch = 'main' ORDER BY m.document_id;
ALTER TABLE exp_fp_one ADD PRIMARY KEY (document_id, method_id);
CREATE INDEX exp_fp_one_id ON exp_fp_one (id);
CREATE INDEX exp_fp_one_text ON exp_fp_one USING hash (text_sha256);
"""

MERGED = """
CREATE TABLE exp_fp_merged (
  id bigint NOT NULL, document_id bigint NOT NULL, simhash bigint, full_simhash bigint,
  fetched_at timestamptz NOT NULL, token_count int NOT NULL, full_token_count int NOT NULL,
  method_id smallint NOT NULL, status varchar(24) NOT NULL, full_status varchar(24) NOT NULL,
  text_sha256 bytea NOT NULL, full_text_sha256 bytea NOT NULL);
INSERT INTO exp_fp_merged
  SELECT o.id, o.document_id, o.simhash, o.full_simhash, e.fetched_at, o.token_count,
         o.full_token_count, o.method_id, o.status, o.full_status, o.text_sha256,
         o.full_text_sha256
  FROM exp_fp_one o JOIN ingest_indexentry e ON e.document_id = o.document_id
  ORDER BY o.document_id;
ALTER TABLE exp_fp_merged ADD PRIMARY KEY (method_id, document_id, fetched_at);
CREATE INDEX exp_fp_merged_id ON exp_fp_merged (id);
CREATE INDEX exp_fp_merged_text ON exp_fp_merged USING hash (text_sha256);
CREATE INDEX exp_fp_merged_band_0 ON exp_fp_merged (method_id, dedup_band_key_0(simhash))
  INCLUDE (simhash, document_id, fetched_at) WHERE simhash IS NOT NULL;
CREATE INDEX exp_fp_merged_band_1 ON exp_fp_merged (method_id, dedup_band_key_1(simhash))
  INCLUDE (simhash, document_id, fetched_at) WHERE simhash IS NOT NULL;
"""


def sizes(cur: psycopg.Cursor, table: str, documents: int) -> dict[str, object]:
    """Bytes a document of the table (its partitions' too) and of each of its indexes."""
    cur.execute(
        """
        SELECT coalesce(sum(pg_relation_size(c.oid)), 0),
               coalesce(sum(pg_indexes_size(c.oid)), 0)
        FROM pg_class c
        WHERE c.oid = %s::regclass
           OR c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = %s::regclass)
        """,
        [table, table],
    )
    heap, indexes = (int(v) for v in cur.fetchone())
    cur.execute(
        """
        SELECT i.relname, pg_relation_size(i.oid)
        FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
        WHERE x.indrelid = %s::regclass
           OR x.indrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = %s::regclass)
        """,
        [table, table],
    )
    each: dict[str, float] = {}
    for name, size in cur.fetchall():
        each[name] = round(each.get(name, 0) + size / documents, 1)
    return {
        "heap": round(heap / documents, 1),
        "indexes": each,
        "total": round((heap + indexes) / documents, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args()
    with psycopg.connect(host=args.host, user="postgres", dbname=args.database) as conn:
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("SELECT count(*) FROM ingest_document")
            (documents,) = cur.fetchone()
            cur.execute("DROP TABLE IF EXISTS exp_fp_one, exp_fp_merged")
            cur.execute(ONE)
            cur.execute(MERGED)
            cur.execute("VACUUM ANALYZE exp_fp_one")
            cur.execute("VACUUM ANALYZE exp_fp_merged")
            out = {
                "documents": documents,
                "product": {
                    t: sizes(cur, t, documents) for t in ("ingest_fingerprint", "ingest_indexentry")
                },
                "one_row": sizes(cur, "exp_fp_one", documents),
                "one_row_with_band": sizes(cur, "exp_fp_merged", documents),
            }
            cur.execute("DROP TABLE exp_fp_one, exp_fp_merged")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
