"""URL routes."""

from django.contrib import admin
from django.urls import include, path

from assignment.api.views import HealthView
from frontend.urls import auth_urlpatterns

# The API first: its polls are the most frequent requests, and Django tries the patterns in order.
urlpatterns = [
    path("api/", include("assignment.api.urls")),
    path("healthz", HealthView.as_view(), name="healthz"),
    *auth_urlpatterns,
    path("", include("frontend.urls")),
    path("admin/", admin.site.urls),
]

# JSON under /api/, the site's error pages (frontend/templates/) elsewhere.
handler400 = "assignment.api.errors.bad_request"
handler403 = "assignment.api.errors.permission_denied"
handler404 = "assignment.api.errors.not_found"
handler500 = "assignment.api.errors.server_error"
