"""Typed readers for the environment: the only place settings come from (leaderboard/settings.py).

They are the farm's readers (farm.config.Env) raising ImproperlyConfigured, so a misconfigured
server stops at start-up naming the variable instead of failing on the first request.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from farm.config import Env

_env = Env(ImproperlyConfigured)

env_str = _env.text
env_choice = _env.choice
env_bool = _env.flag
env_int = _env.integer
env_float = _env.number
env_list = _env.items
env_secret = _env.secret
