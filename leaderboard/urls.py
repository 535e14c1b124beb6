from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import JsonResponse
from django.urls import include, path

from leaderboard.nodes.reception import reception_note_soon


def health(request):
    reception_note_soon()  # probes count as reception (leaderboard.nodes.reception)
    return JsonResponse({"status": "ok"})


urlpatterns = [
    path("api/", include("leaderboard.api_urls")),
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("health/", health, name="health"),
    path("", include("django_prometheus.urls")),
    path("", include("leaderboard.web.urls")),
]
