"""Django app configuration of the assignment app."""

from django.apps import AppConfig


class AssignmentConfig(AppConfig):
    name = "assignment"
    verbose_name = "Task assignment"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from assignment import sign_in  # noqa: F401  (connects the sign-in counters)
