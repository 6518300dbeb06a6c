"""Settings. This module alone reads the environment.

No DATABASE_URL: the embedded default (SQLite file, Celery tasks run eagerly).
DATABASE_URL=postgres://… and CELERY_BROKER_URL=redis://…: the real stack.
"""

import os
from pathlib import Path
from urllib.parse import unquote, urlsplit

from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else default


def database_from_url(url: str) -> dict[str, object]:
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql"}:
        raise ValueError(f"DATABASE_URL: unsupported scheme {parts.scheme!r}")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path.lstrip("/")) or "postgres",
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "",
        "PORT": str(parts.port or ""),
        "CONN_MAX_AGE": env_int("DB_CONN_MAX_AGE", 60),
        "CONN_HEALTH_CHECKS": True,
        # Prepared statements (the band index lookup) use one generic plan.
        "OPTIONS": {"options": "-c plan_cache_mode=force_generic_plan"},
        "TEST": {"NAME": env_str("TEST_DATABASE_NAME", "") or None},
    }


DEBUG = env_bool("DEBUG", default=False)
SECRET_KEY = env_str("SECRET_KEY", "dev-only-not-secret-change-me")
ALLOWED_HOSTS = [h for h in env_str("ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o for o in env_str("CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "ingest",
    "reviews",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "dedup_site.urls"
WSGI_APPLICATION = "dedup_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.csp",
            ],
        },
    },
]

DATA_DIR = Path(env_str("DATA_DIR", str(BASE_DIR / "var")))

DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    DATABASES = {"default": database_from_url(DATABASE_URL)}
else:
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": DATA_DIR / "dedup.sqlite3",
            "OPTIONS": {
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "ingest:document-list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))

# Content-Security-Policy for the desk itself. Crawled HTML gets a stricter one of its
# own (see the source view), and is only ever shown inside <iframe sandbox>.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "frame-src": [CSP.SELF],
    "frame-ancestors": [CSP.SELF],
    "form-action": [CSP.SELF],
    "base-uri": [CSP.NONE],
    "object-src": [CSP.NONE],
}
X_FRAME_OPTIONS = "SAMEORIGIN"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_SAMESITE = "Lax"

# --- Celery -------------------------------------------------------------------------
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
if CELERY_TASK_ALWAYS_EAGER:
    # Eager tasks never touch a broker; an in-memory one keeps kombu quiet.
    CELERY_BROKER_URL = "memory://localhost/"
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# With acks_late, a message whose worker died is handed out again once this many
# seconds pass without an ack (Redis transport). Keep it above the longest task.
# How often workers sweep for such messages: about interval × throttle seconds.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600),
    "unacked_restore_interval": env_int("CELERY_UNACKED_RESTORE_INTERVAL", 10),
    "unacked_restore_throttle": env_int("CELERY_UNACKED_RESTORE_THROTTLE", 10),
}
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "dedup")

# --- Ingest ---------------------------------------------------------------------------
INGEST_MAX_BODY_BYTES = env_int("INGEST_MAX_BODY_BYTES", 5 * 1024 * 1024)
INGEST_CHUNK_SIZE = env_int("INGEST_CHUNK_SIZE", 200)
# Documents per processing task (extraction + fingerprints).
PROCESS_TASK_SIZE = env_int("PROCESS_TASK_SIZE", 50)

# --- Extraction -----------------------------------------------------------------------
# The extractor version lives in ingest.core.extract (part of every method key).
# Main text with fewer word tokens than this is "too_short" (kept, never indexed).
EXTRACTION_MIN_TOKENS = env_int("EXTRACTION_MIN_TOKENS", 8)
# Documents whose main text has fewer tokens than this are typed "short".
SHORT_DOC_MAX_TOKENS = env_int("SHORT_DOC_MAX_TOKENS", 40)

# --- Fingerprints ---------------------------------------------------------------------
# Methods computed for every document; the active one feeds candidates.
FINGERPRINT_METHODS = [
    m
    for m in env_str(
        "FINGERPRINT_METHODS",
        "simhash64-words-sha256-v1,simhash64-shingle3-sha256-v1,simhash64-cjkbigram-sha256-v1",
    ).split(",")
    if m
]
ACTIVE_METHOD = env_str("ACTIVE_METHOD", "simhash64-words-sha256-v1")
FINGERPRINT_MIN_TOKENS = env_int("FINGERPRINT_MIN_TOKENS", 3)

# --- Tests ----------------------------------------------------------------------------
# Under REQUIRE_SERVICES, a test that needs a missing service fails instead of skipping.
REQUIRE_SERVICES = env_bool("REQUIRE_SERVICES", default=False)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "WARNING")},
    # trafilatura logs every page it finds empty; the extraction status records that.
    "loggers": {"trafilatura": {"level": "ERROR"}},
}

# API payloads carry whole pages: allow large request bodies (the per-page cap above
# still applies to each document).
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 64 * 1024 * 1024)

# --- Candidates and groups ----------------------------------------------------------
DOC_TYPES = ["article", "product", "short", "listing", "other"]


def env_per_doc_type(name: str, default: dict[str, float]) -> dict[str, float]:
    """`article=3,product=2` overrides the defaults for the doc types it names."""
    out = dict(default)
    for item in env_str(name).split(","):
        if "=" in item:
            key, value = item.split("=", 1)
            out[key.strip()] = float(value)
    return out


# Candidate threshold (Hamming bits, main-text branch) per doc type; at most 6, the
# largest distance the band index answers. Calibrate them from labels.
CANDIDATE_THRESHOLDS = {
    k: int(v)
    for k, v in env_per_doc_type(
        "CANDIDATE_THRESHOLDS",
        {"article": 3, "product": 3, "short": 2, "listing": 3, "other": 3},
    ).items()
}
# Pairs whose token-set similarity (0–100) is under the floor, and whose shorter text is
# not contained in the longer one, are stored but kept out of the queue and of groups.
SIMILARITY_FLOORS = env_per_doc_type(
    "SIMILARITY_FLOORS",
    {"article": 60.0, "product": 70.0, "short": 80.0, "listing": 60.0, "other": 60.0},
)
CONTAINMENT_FLOOR = 0.8
# Compare only with documents fetched within this many days (0: off).
CANDIDATE_LOOKBACK_DAYS = env_int("CANDIDATE_LOOKBACK_DAYS", 0)
# Methods whose main-text fingerprints are indexed and searched.
CANDIDATE_METHODS = [m for m in env_str("CANDIDATE_METHODS", ACTIVE_METHOD).split(",") if m]
# Text compared by rapidfuzz is cut to this many characters (bounded work per pair).
SIMILARITY_MAX_CHARS = env_int("SIMILARITY_MAX_CHARS", 20_000)
# More candidates than this for one document: the nearest are kept, the rest counted.
CANDIDATES_PER_DOCUMENT_MAX = env_int("CANDIDATES_PER_DOCUMENT_MAX", 200)

# Grouping rule: "connected-components-v1" or "representative-centred-v1".
GROUP_RULE = env_str("GROUP_RULE", "connected-components-v1")
# Groups larger than this are flagged (likely a login wall or an error page).
GROUP_LARGE = env_int("GROUP_LARGE", 50)
# Pairwise work (diameter) is done on at most this many members.
GROUP_PAIRWISE_MAX = env_int("GROUP_PAIRWISE_MAX", 500)
# Ordered policy for the suggested representative.
REPRESENTATIVE_POLICY = [
    p
    for p in env_str(
        "REPRESENTATIVE_POLICY", "site_priority,extraction_complete,newest,canonical_url"
    ).split(",")
    if p
]

# --- Review desk ----------------------------------------------------------------------
# "Next" leases a queue item to one editor for this long; an expired claim returns.
REVIEW_LEASE_MINUTES = env_int("REVIEW_LEASE_MINUTES", 15)
# Diffs are bounded: words per side (text diffs) and lines per side (HTML source diff).
REVIEW_DIFF_MAX_WORDS = env_int("REVIEW_DIFF_MAX_WORDS", 4000)
REVIEW_SOURCE_MAX_LINES = env_int("REVIEW_SOURCE_MAX_LINES", 3000)

# --- Labels out: export and calibration --------------------------------------------
# Share of pairs in the holdout split (a stable hash of the pair's key decides).
LABEL_HOLDOUT_SHARE = float(env_str("LABEL_HOLDOUT_SHARE", "0.2"))
# Verdicts counted as "same" and as "not the same"; the rest (unsure, and revision by
# default) count as neither.
CALIBRATION_POSITIVE = [
    v for v in env_str("CALIBRATION_POSITIVE", "duplicate,near_duplicate").split(",") if v
]
CALIBRATION_NEGATIVE = [v for v in env_str("CALIBRATION_NEGATIVE", "distinct").split(",") if v]
# Cost of one false merge and of one missed duplicate, in the sweep's cost column.
CALIBRATION_COST_FALSE_MERGE = float(env_str("CALIBRATION_COST_FALSE_MERGE", "10"))
CALIBRATION_COST_MISSED = float(env_str("CALIBRATION_COST_MISSED", "1"))
# Fewer labelled pairs than this per class and split: a plain warning on the report.
CALIBRATION_MIN_PER_CLASS = env_int("CALIBRATION_MIN_PER_CLASS", 30)
# The sweep covers thresholds 0..this many bits.
CALIBRATION_MAX_THRESHOLD = env_int("CALIBRATION_MAX_THRESHOLD", 16)
# Policies: "send to review" needs this recall, "merge automatically" this precision.
CALIBRATION_MIN_RECALL = float(env_str("CALIBRATION_MIN_RECALL", "0.95"))
CALIBRATION_MIN_PRECISION = float(env_str("CALIBRATION_MIN_PRECISION", "0.99"))
# Before labels: random document pairs drawn per doc type and method (site-stratified)
# for the score histograms and the suggested starting threshold, the seed of the draw,
# and how often the beat task "prelabel-distributions" recomputes them.
PRELABEL_SAMPLE_PAIRS = env_int("PRELABEL_SAMPLE_PAIRS", 2000)
PRELABEL_SEED = env_int("PRELABEL_SEED", 1)
# Fewer indexable documents of a doc type than this: no suggestion (modes from noise).
PRELABEL_MIN_DOCUMENTS = env_int("PRELABEL_MIN_DOCUMENTS", 10)
PRELABEL_EVERY_SECONDS = env_int("PRELABEL_EVERY_SECONDS", 21600)

# --- Merge decisions: automatic merging (issue 6) -----------------------------------
# Per doc type: off | semi (proposals wait for an editor) | auto (applied, logged as
# rule:automerge-v1). Off by default; "short" is never merged automatically.
# AUTO_MERGE="article=auto,product=semi" overrides.
AUTO_MERGE = {t: "off" for t in DOC_TYPES}
for _item in env_str("AUTO_MERGE").split(","):
    if "=" in _item:
        _k, _v = _item.split("=", 1)
        AUTO_MERGE[_k.strip()] = _v.strip()
# Besides exact groups: near groups whose diameter (largest pairwise distance, bits) is
# at most this are eligible. Choose them from the calibration report's precision policy.
AUTO_MERGE_THRESHOLDS = {
    k: int(v)
    for k, v in env_per_doc_type(
        "AUTO_MERGE_THRESHOLDS",
        {"article": 1, "product": 0, "short": 0, "listing": 1, "other": 0},
    ).items()
}
CELERY_BEAT_SCHEDULE = {
    "automerge": {
        "task": "reviews.tasks.automerge_run",
        "schedule": env_int("AUTO_MERGE_EVERY_SECONDS", 600),
    },
}

# --- Metrics, drift and method upgrades (issue 7) -----------------------------------
# The beat task recomputes the daily rollups of the last N days (today included) every
# ROLLUP_EVERY_SECONDS: late documents of a recent crawl day are counted on the next run.
ROLLUP_DAYS = env_int("ROLLUP_DAYS", 2)
ROLLUP_EVERY_SECONDS = env_int("ROLLUP_EVERY_SECONDS", 3600)
# Drift alerts (rules in ingest/core/drift.py), each day against the site's own
# baseline of the previous DRIFT_BASELINE_DAYS days (at least DRIFT_MIN_BASELINE_DAYS
# days with documents).
DRIFT_BASELINE_DAYS = env_int("DRIFT_BASELINE_DAYS", 7)
DRIFT_MIN_BASELINE_DAYS = env_int("DRIFT_MIN_BASELINE_DAYS", 3)
# A group created or grown in the day with at least this many members.
DRIFT_LARGE_GROUP = env_int("DRIFT_LARGE_GROUP", 50)
# Empty or blocked share: today ≥ baseline + JUMP and ≥ RATIO × baseline, on a day with
# at least DRIFT_MIN_DOCUMENTS documents of the site.
DRIFT_SHARE_JUMP = float(env_str("DRIFT_SHARE_JUMP", "0.2"))
DRIFT_SHARE_RATIO = float(env_str("DRIFT_SHARE_RATIO", "2.0"))
DRIFT_MIN_DOCUMENTS = env_int("DRIFT_MIN_DOCUMENTS", 20)
# Token count shift: today's median main-text tokens differs from the baseline median
# of daily medians by more than this fraction of the baseline (0.5 = ±50 %).
DRIFT_TOKEN_SHIFT = float(env_str("DRIFT_TOKEN_SHIFT", "0.5"))
# The metrics page shows alerts of this many recent days.
DRIFT_ALERT_DAYS = env_int("DRIFT_ALERT_DAYS", 7)
# GET /metrics (Prometheus): open when empty, else "Authorization: Bearer <token>".
METRICS_TOKEN = env_str("METRICS_TOKEN")
# Task durations kept for /metrics (older TaskRun rows are pruned by the rollup task).
METRICS_TASK_RUN_DAYS = env_int("METRICS_TASK_RUN_DAYS", 7)
# Documents per chunk of a background refingerprint or candidate run (one transaction
# each, cursor saved with it), and seconds of work per task before it re-enqueues.
REFINGERPRINT_CHUNK_SIZE = env_int("REFINGERPRINT_CHUNK_SIZE", 500)
REFINGERPRINT_TASK_SECONDS = env_int("REFINGERPRINT_TASK_SECONDS", 30)
CELERY_BEAT_SCHEDULE["rollup-metrics"] = {
    "task": "ingest.tasks.rollup_metrics",
    "schedule": ROLLUP_EVERY_SECONDS,
}
CELERY_BEAT_SCHEDULE["prelabel-distributions"] = {
    "task": "reviews.tasks.prelabel_compute",
    "schedule": PRELABEL_EVERY_SECONDS,
}
