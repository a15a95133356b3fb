"""URL routes."""

from django.contrib import admin
from django.urls import include, path

from assignment.api.views import HealthView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("assignment.api.urls")),
    path("healthz", HealthView.as_view(), name="healthz"),
]
