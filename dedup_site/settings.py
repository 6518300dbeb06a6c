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
DEFAULT_DOC_TYPE = "other"

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
