"""Django settings, read from the environment (see README, "Configuration").

Defaults run the whole product on one machine with no services: SQLite in ``var/``. Set
``DATABASE_URL`` for PostgreSQL.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from config.env import (
    cache_from_url,
    database_from_url,
    env_bool,
    env_dir,
    env_int,
    env_list,
    env_str,
)

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = env_dir("TVCS_DATA_DIR", BASE_DIR / "var")

DEBUG = env_bool("DJANGO_DEBUG", False)


def _secret_key() -> str:
    """``DJANGO_SECRET_KEY``, else a random key kept in ``DATA_DIR`` (never in the repo)."""
    key = env_str("DJANGO_SECRET_KEY")
    if key:
        return key
    path = DATA_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50), encoding="utf-8")
        path.chmod(0o600)
    return path.read_text(encoding="utf-8").strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])

# HTTPS in production (TVCS_HTTPS=1): redirect plain HTTP, cookies only over HTTPS, and HSTS.
# Behind a reverse proxy that ends TLS (TVCS_NUM_PROXIES > 0), its X-Forwarded-Proto says https.
TVCS_HTTPS = env_bool("TVCS_HTTPS", False)
SECURE_SSL_REDIRECT = TVCS_HTTPS and env_bool("TVCS_SSL_REDIRECT", True)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = TVCS_HTTPS
SECURE_HSTS_SECONDS = env_int("TVCS_HSTS_SECONDS", 31_536_000, minimum=0) if TVCS_HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("TVCS_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("TVCS_HSTS_PRELOAD", False)
if TVCS_HTTPS and env_int("TVCS_NUM_PROXIES", 0, minimum=0):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "assignment",
    "charts",
    "frontend",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files from the WSGI server itself (gunicorn in docker/, runserver on the defaults).
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "assignment.middleware.DatabaseBusyMiddleware",
    # A page's empty 405 (an action's address opened as a page) becomes the site's 405.html.
    "frontend.methods.MethodNotAllowedPageMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
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

DATABASES = {
    "default": database_from_url(env_str("DATABASE_URL", f"sqlite:///{DATA_DIR / 'db.sqlite3'}"))
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Shared by every process of the product (the throttles count here): Redis by URL in production,
# else files in the data folder.
CACHES = {"default": cache_from_url(env_str("TVCS_CACHE_URL"), folder=DATA_DIR / "cache")}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("TVCS_STATIC_ROOT", str(DATA_DIR / "static")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise looks in it from the start
# WhiteNoise serves the static files. TVCS_STATIC_MANIFEST=1 (the docker image, where
# collectstatic ran at build): from STATIC_ROOT, compressed, with content-hashed names cached
# for a year. Otherwise (runproduct, tests): straight from the apps' static folders.
TVCS_STATIC_MANIFEST = env_bool("TVCS_STATIC_MANIFEST", False)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if TVCS_STATIC_MANIFEST
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = not TVCS_STATIC_MANIFEST

# Every sign-in (pages, admin, API token) goes through one backend that refuses locked
# accounts and addresses (assignment/sign_in.py); failures count in the shared cache.
AUTHENTICATION_BACKENDS = ["assignment.sign_in.ThrottledModelBackend"]
TVCS_SIGN_IN_MAX_FAILURES = env_int("TVCS_SIGN_IN_MAX_FAILURES", 10, minimum=1)
TVCS_SIGN_IN_LOCKOUT_SECONDS = env_int("TVCS_SIGN_IN_LOCKOUT_SECONDS", 900, minimum=1)

# The pages (frontend/): everything needs a signed-in user.
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "frontend:projects"
LOGOUT_REDIRECT_URL = "login"
# A form refused by the CSRF check (a stale tab after signing in or out): a page that says so
# and links back; JSON under /api/.
CSRF_FAILURE_VIEW = "frontend.views.errors.csrf_failure"

#: Largest data file an import accepts, in bytes.
TVCS_MAX_IMPORT_BYTES = env_int("TVCS_MAX_IMPORT_BYTES", 200 * 1024 * 1024, minimum=1)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("TVCS_LOG_LEVEL", "INFO")},
}

# --- Celery -----------------------------------------------------------------------------------
# Default: kombu's filesystem transport under DATA_DIR, a broker that needs no server (all
# workers on this machine). Production: CELERY_BROKER_URL=redis://host:6379/0 or amqp://...
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://")


def filesystem_broker_options(folder: Path) -> dict:
    """Transport options of kombu's filesystem broker, in (newly created) folders of ``folder``."""
    for name in ("queue", "processed", "control"):
        (folder / name).mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "processed_folder": str(folder / "processed"),
        "control_folder": str(folder / "control"),
        "store_processed": False,
    }


if CELERY_BROKER_URL.startswith("filesystem://"):
    CELERY_BROKER_TRANSPORT_OPTIONS = filesystem_broker_options(DATA_DIR / "broker")
CELERY_TASK_IGNORE_RESULT = True  # results live in the database (AssignmentRun)
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A pool process loads the numeric kernels before it reports itself up (assignment.tasks:
# _load_kernels, about a second from the cache; minutes if it must compile them): Celery's
# default of 4 s would have it killed and started again.
CELERY_WORKER_PROC_ALIVE_TIMEOUT = 600.0
#: Soft and hard time limits of one assignment run, in seconds.
CELERY_TASK_SOFT_TIME_LIMIT = env_int("TVCS_RUN_SOFT_TIME_LIMIT", 3600, minimum=1)
CELERY_TASK_TIME_LIMIT = env_int("TVCS_RUN_TIME_LIMIT", 3900, minimum=1)
if CELERY_TASK_SOFT_TIME_LIMIT > CELERY_TASK_TIME_LIMIT:
    # Celery would refuse to enqueue any task (runs, the recovery sweep) with these.
    raise ImproperlyConfigured(
        f"TVCS_RUN_SOFT_TIME_LIMIT ({CELERY_TASK_SOFT_TIME_LIMIT} s) must not exceed "
        f"TVCS_RUN_TIME_LIMIT ({CELERY_TASK_TIME_LIMIT} s)"
    )
#: A running run whose heartbeat is older than this many seconds is presumed dead.
TVCS_RUN_STALE_AFTER = env_int("TVCS_RUN_STALE_AFTER", 120, minimum=5)
#: A run still queued this many seconds after it was handed to the broker is enqueued again
#: (its message may be lost); a duplicate message finds the run claimed and does nothing.
TVCS_RUN_LOST_AFTER = env_int("TVCS_RUN_LOST_AFTER", 600, minimum=5)
#: Most runs one user may have queued or running at once (a comparison counts all its runs).
TVCS_MAX_ACTIVE_RUNS = env_int("TVCS_MAX_ACTIVE_RUNS", 100, minimum=1)
#: How many times a run whose worker died is re-queued before it is marked failed.
TVCS_RUN_MAX_ATTEMPTS = env_int("TVCS_RUN_MAX_ATTEMPTS", 2, minimum=1)
#: Address space each worker pool process may map, in MiB (0: no limit). A run that needs more
#: fails with a MemoryError and says so, instead of the kernel's out-of-memory killer ending
#: the worker (and the run re-queued onto the next worker, to end it too).
TVCS_RUN_MEMORY_LIMIT_MB = env_int("TVCS_RUN_MEMORY_LIMIT_MB", 0, minimum=0)
CELERY_BEAT_SCHEDULE = {
    "recover-stale-runs": {
        "task": "assignment.runs_recover_stale",
        "schedule": float(max(5, TVCS_RUN_STALE_AFTER // 2)),
    }
}
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")

# --- REST API ---------------------------------------------------------------------------------
# Django REST framework under /api/ (assignment/api/), token authentication everywhere except
# POST /api/token/ and /healthz; OpenAPI schema and docs by drf-spectacular. README, "REST API".

INSTALLED_APPS += [
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and Redoc files served from here, not from a CDN
]


def _throttle_rate(name: str, default: str) -> str:
    """A DRF throttle rate from the environment: ``N/second|minute|hour|day`` (``60/hour``)."""
    rate = env_str(name, default).strip()
    count, _, period = rate.partition("/")
    if not count.isdigit() or int(count) < 1 or period not in {"second", "minute", "hour", "day"}:
        raise ImproperlyConfigured(
            f"{name} must be a number of requests per second, minute, hour or day, such as "
            f"60/hour; got {rate!r}"
        )
    return rate


#: The largest page a list of the API gives, whatever ``?limit=`` asks for.
TVCS_API_MAX_PAGE_SIZE = env_int("TVCS_API_MAX_PAGE_SIZE", 1000, minimum=1)

#: API tokens expire this many days after they were made (0: never). POST /api/token/ (or the
#: pages' API token page) then gives a new one.
TVCS_TOKEN_MAX_AGE_DAYS = env_int("TVCS_TOKEN_MAX_AGE_DAYS", 90, minimum=0)

REST_FRAMEWORK = {
    # Tokens for API clients; the browser session (with CSRF) for the API docs' "Try it out".
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "assignment.api.authentication.ExpiringTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["assignment.api.parsers.JSONParser"],  # uploads: multipart
    "DEFAULT_PAGINATION_CLASS": "assignment.api.pagination.BoundedLimitOffsetPagination",
    "PAGE_SIZE": env_int("TVCS_API_PAGE_SIZE", 50, minimum=1),
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "assignment.api.errors.exception_handler",
    # Throttled views name their scope: uploads, run and comparison requests, and the token
    # endpoint (password guessing). Counters live in the shared cache (CACHES).
    "DEFAULT_THROTTLE_RATES": {
        "uploads": _throttle_rate("TVCS_UPLOAD_RATE", "60/hour"),
        "token": _throttle_rate("TVCS_TOKEN_RATE", "30/minute"),
        "runs": _throttle_rate("TVCS_RUN_RATE", "120/hour"),
    },
    # Anonymous clients (the token endpoint) are told apart by address: the peer's, or the one
    # this many trusted reverse proxies put in X-Forwarded-For (a client could forge the header).
    "NUM_PROXIES": env_int("TVCS_NUM_PROXIES", 0, minimum=0),
    # ?format=csv|json chooses the format of downloads, not DRF's renderer.
    "URL_FORMAT_OVERRIDE": None,
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "tvcs-assign API",
    "DESCRIPTION": (
        "Task assignment for crowdsourced labelling. Authenticate with "
        "`Authorization: Token <key>` (POST /api/token/ gives the key, and so does the pages' "
        "API token page), or, signed in to the pages in this browser, with its session: "
        '"Try it out" then works as it is.'
    ),
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and the docs need a token too, or a logged-in (admin) session for a browser.
    "SERVE_AUTHENTICATION": [
        "assignment.api.authentication.ExpiringTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/api/",
    "ENUM_NAME_OVERRIDES": {
        "MethodEnum": "assignment.models.Method",
        "RunStatusEnum": "assignment.models.RunStatus",
        "HealthStateEnum": "assignment.api.serializers.HEALTH_STATES",
        "EstimateSourceEnum": "assignment.models.EstimateSource",
        "QualityModelEnum": "assignment.engine.answer_quality.MODELS",
    },
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",  # the default
        "assignment.api.schema.closed_request_bodies",
    ],
}
