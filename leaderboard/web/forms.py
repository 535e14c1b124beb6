from __future__ import annotations

from django import forms
from django.conf import settings

from leaderboard.nodes.selectors import hardware_online
from leaderboard.problems.models import HardwareClass, Problem
from leaderboard.submissions.models import Submission


class SubmitForm(forms.Form):
    problem = forms.ChoiceField(help_text="suite / problem")
    hardware = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    mode = forms.ChoiceField(choices=Submission.Mode.choices, initial="leaderboard")
    file = forms.FileField(required=False, help_text="one Python file defining kernel(*inputs)")
    source = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 10, "cols": 80}),
        help_text="or paste the source here",
    )
    private = forms.BooleanField(
        required=False, initial=False, help_text="private submissions never appear on a board"
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        problems = Problem.objects.order_by("suite_id", "name").values_list("suite_id", "name")
        self.fields["problem"].choices = [(f"{s}/{n}", f"{s} / {n}") for s, n in problems]
        default = f"{settings.FARM_DEFAULT_SUITE}/vector_add"
        if default in dict(self.fields["problem"].choices):
            self.fields["problem"].initial = default
        online = hardware_online()
        self.fields["hardware"].choices = [
            (h, h if online.get(h) else f"{h} (no node online: runs wait in the queue)")
            for h in HardwareClass.objects.filter(active=True).values_list("name", flat=True)
        ]
