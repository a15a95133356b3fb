"""Django project configuration for tvcs-assign (settings come from the environment)."""

from config.celery import app as celery_app

__all__ = ["celery_app"]
