from django.urls import path

from leaderboard.web import views

urlpatterns = [
    path("", views.home, name="home"),
    path("problems/", views.problems, name="problems"),
    path("problems/<str:suite>/<str:name>/", views.problem, name="problem"),
    path("boards/<str:suite>/<str:problem>/<str:hardware>/", views.board, name="board"),
    path("submissions/<int:submission_id>/", views.submission, name="submission"),
    path("runs/<int:run_id>/cancel/", views.run_cancel, name="run-cancel"),
    path("submit/", views.submit, name="submit"),
    path("nodes/", views.nodes, name="nodes"),
]
