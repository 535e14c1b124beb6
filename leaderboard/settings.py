"""Settings of the leaderboard server. Everything configurable comes from the environment,
read here once through the helpers of leaderboard.env; unset means the embedded default
(SQLite and a local broker under var/, artifacts on the local filesystem)."""

from __future__ import annotations

import secrets
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from farm.queues import TIME_LIMITS_S, local_broker_url
from leaderboard.env import (
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_secret,
    env_str,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("FARM_VAR_DIR", str(BASE_DIR / "var"))).resolve()
VAR_DIR.mkdir(parents=True, exist_ok=True)


def _local_secret_key() -> str:
    """The embedded default: a random key kept in var/ so sessions survive restarts."""
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = env_secret("DJANGO_SECRET_KEY") or _local_secret_key()
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

_database_url = env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'farm.sqlite3'}")
try:
    DATABASES = {
        "default": dj_database_url.parse(
            _database_url, conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60, minimum=0)
        )
    }
except ValueError as exc:
    raise ImproperlyConfigured(f"DATABASE_URL: cannot be used ({exc})") from None
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded database serves several processes (web, worker, beat): writers take the lock
    # when their transaction begins (IMMEDIATE: no deadlock upgrading a read lock, which SQLite
    # answers with "database is locked" at once), wait for it up to the busy timeout, and
    # readers never block writers (WAL).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": env_int("FARM_SQLITE_BUSY_TIMEOUT_S", 30, minimum=1),
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and Redoc served from our own static files
    "django_prometheus",
    "leaderboard.accounts",
    "leaderboard.problems",
    "leaderboard.nodes",
    "leaderboard.submissions",
    "leaderboard.runs",
    "leaderboard.boards",
    "leaderboard.artifacts",
    "leaderboard.judging",
    "leaderboard.web",
]

MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "leaderboard.middleware.BoundedBodyMiddleware",
    "leaderboard.middleware.RejectNulMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

ROOT_URLCONF = "leaderboard.urls"
WSGI_APPLICATION = "leaderboard.wsgi.application"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "leaderboard" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

STATIC_URL = "/static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "leaderboard" / "static"]
WHITENOISE_USE_FINDERS = True
MEDIA_ROOT = Path(env_str("FARM_ARTIFACTS_DIR", str(VAR_DIR / "artifacts"))).resolve()
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
FARM_MAX_REQUEST_BYTES = env_int("FARM_MAX_REQUEST_BYTES", 32 * 2**20, minimum=2**20)
DATA_UPLOAD_MAX_MEMORY_SIZE = FARM_MAX_REQUEST_BYTES  # all bodies: leaderboard.middleware

# --- artifacts: S3 (through django-storages) when a bucket is named, the filesystem otherwise
FARM_S3_BUCKET = env_str("FARM_S3_BUCKET", "")
FARM_S3_PREFIX = env_str("FARM_S3_PREFIX", "")
AWS_S3_ENDPOINT_URL = env_str("AWS_S3_ENDPOINT_URL", "") or None
AWS_S3_REGION_NAME = env_str("AWS_S3_REGION_NAME", env_str("AWS_DEFAULT_REGION", "us-east-1"))
FARM_S3_TIMEOUT_S = env_float("FARM_S3_TIMEOUT_S", 5.0, minimum=0.1)
FARM_S3_ATTEMPTS = env_int("FARM_S3_ATTEMPTS", 3, minimum=1)
FARM_S3_REQUEST_TIMEOUT_S = env_float("FARM_S3_REQUEST_TIMEOUT_S", 2.0, minimum=0.1)
FARM_S3_BACKOFF_S = env_float("FARM_S3_BACKOFF_S", 0.2, minimum=0.0)
FARM_PRESIGN_EXPIRES_S = env_int("FARM_PRESIGN_EXPIRES_S", 900, minimum=60)

# --- the farm's rules
FARM_DEFAULT_SUITE = env_str("FARM_DEFAULT_SUITE", "core-v1")
FARM_MAX_SOURCE_BYTES = env_int("FARM_MAX_SOURCE_BYTES", 256 * 1024, minimum=1)
FARM_MAX_BATCH = env_int("FARM_MAX_BATCH", 200, minimum=1)
FARM_QUOTA_RUNS_PER_HOUR = env_int("FARM_QUOTA_RUNS_PER_HOUR", 120, minimum=0)
FARM_NODE_DEAD_AFTER_S = env_int("FARM_NODE_DEAD_AFTER_S", 120, minimum=5)
FARM_MAX_ATTEMPTS = env_int("FARM_MAX_ATTEMPTS", 3, minimum=1)
# Attempts that end by a fault of the node or its host are not charged to the submission; this
# bounds them (a kernel that takes every node down still ends, as the farm's outcome)
FARM_MAX_NODE_FAULTS = env_int("FARM_MAX_NODE_FAULTS", 5, minimum=1)
# A pause longer than this (s) in the heartbeats and health probes the web tier receives counts
# as an outage of the server: no node is presumed dead until a full FARM_NODE_DEAD_AFTER_S of
# reception has passed since (health probes keep a farm whose nodes all died counted).
FARM_RECEPTION_GAP_S = env_float("FARM_RECEPTION_GAP_S", FARM_NODE_DEAD_AFTER_S / 2, minimum=1.0)
# Celery beat intervals (s) of the upkeep tasks, and when a queued run's message counts as lost
FARM_REAP_INTERVAL_S = env_float("FARM_REAP_INTERVAL_S", 30.0, minimum=1.0)
FARM_RESEND_INTERVAL_S = env_float("FARM_RESEND_INTERVAL_S", 60.0, minimum=1.0)
FARM_RESEND_QUEUED_AFTER_S = env_int("FARM_RESEND_QUEUED_AFTER_S", 900, minimum=1)
# A run queued this long (s) for a class no usable node served in that time fails as NO_NODE
FARM_UNSERVED_FAIL_AFTER_S = env_int("FARM_UNSERVED_FAIL_AFTER_S", 6 * 3600, minimum=60)
FARM_BOARD_RECOMPUTE_S = env_float("FARM_BOARD_RECOMPUTE_S", 3600.0, minimum=1.0)
FARM_STALE_NODE_SWEEP_S = env_float("FARM_STALE_NODE_SWEEP_S", 60.0, minimum=1.0)
FARM_NODE_ENROLL_TOKEN = env_secret("FARM_NODE_ENROLL_TOKEN") or ""
FARM_BOARD_LIMIT = env_int("FARM_BOARD_LIMIT", 100, minimum=1)
# Audit of would-be first places (leaderboard.judging.audits): on by default; classes served by a
# single node cannot be audited (the audit needs another node) and can be listed to skip it.
# The tolerance is relative: run-to-run spread of one GPU is under 1 % (docs/harness-fidelity.md)
# and a power-bound kernel read 3-5 % slow late in a run; two nodes of a class differ more.
FARM_AUDIT = env_bool("FARM_AUDIT", True)
FARM_AUDIT_SKIP_HARDWARE = env_list("FARM_AUDIT_SKIP_HARDWARE", [])
FARM_AUDIT_TOLERANCE = env_float("FARM_AUDIT_TOLERANCE", 0.10, minimum=0.0)
# A class with a single enabled node: "same-node" audits there (a fresh process and secret
# seed), "wait" waits for a second node, "skip" shows results unaudited (leaderboard.judging.audits)
FARM_AUDIT_SINGLE_NODE = env_choice(
    "FARM_AUDIT_SINGLE_NODE", "same-node", ("same-node", "wait", "skip")
)

# --- Celery: a local SQLAlchemy broker needs no server; agents read queues hw.<class>
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", local_broker_url(VAR_DIR))
CELERY_TASK_DEFAULT_QUEUE = "server"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_TIMEOUT = env_float("CELERY_BROKER_CONNECTION_TIMEOUT", 4.0, minimum=0.1)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 3, "interval_start": 0.2, "interval_step": 0.5}
# Soft, then hard time limits (s) that agents apply to one evaluation, by mode.
FARM_TIME_LIMITS_S = {
    mode: (env_int(f"FARM_TIME_LIMIT_{mode.upper()}_S", soft, minimum=10), hard)
    for mode, (soft, hard) in TIME_LIMITS_S.items()
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "leaderboard.accounts.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_PARSER_CLASSES": [
        "leaderboard.parsers.StorableJSONParser",
        "leaderboard.parsers.StorableFormParser",
        "leaderboard.parsers.StorableMultiPartParser",
    ],
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    "EXCEPTION_HANDLER": "leaderboard.api_errors.handle",
    # leaderboard.accounts.throttles: token creation (Basic auth) and node enrolment, per address
    "DEFAULT_THROTTLE_RATES": {"credentials": env_str("FARM_CREDENTIAL_RATE", "30/min")},
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Kernel evaluation farm",
    "DESCRIPTION": "Submit kernels, follow their runs, read boards; node-facing endpoints under "
    "/api/agent/. See docs/server.md.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # /api/docs/ and /api/redoc/ load their scripts from this server, not a CDN: they work on a
    # farm without internet access.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "leaderboard.schema.declare_error_responses",
    ],
    "ENUM_NAME_OVERRIDES": {
        "RunStateEnum": "leaderboard.runs.models.Run.State",
        "SubmissionModeEnum": "leaderboard.submissions.models.Submission.Mode",
        "SubmissionStateEnum": ["queued", "running", "done", "failed"],
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("FARM_LOG_LEVEL", "INFO")},
}
