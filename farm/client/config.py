"""Where the client finds its server URL and API token.

Order: the environment (`FARM_URL`, `FARM_TOKEN`), then the config file, then the default URL
(no token). The config file is JSON, `{"url": "...", "token": "..."}`, mode 0600, in the config
directory: `$FARM_HOME` when FARM_HOME is set, else `$XDG_CONFIG_HOME/farm` (default
`~/.config/farm`). `farm login` writes `config.json` there.

Profiles: a named profile (`--profile NAME` or `FARM_PROFILE=NAME`) is `profiles/NAME.json` in
the same directory. The one-command local farm (`farm up`) writes only the `local` profile, so a
real server's login in `config.json` is never touched; when there is no `config.json` at all,
the client falls back to the `local` profile, so `farm submit` works right after `farm up`.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from farm.config import Env
from farm.errors import FarmError

DEFAULT_URL = "http://127.0.0.1:8000"
FILE_MODE = 0o600
LOCAL_PROFILE = "local"
_PROFILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_env = Env()


@dataclass(frozen=True)
class Config:
    """`url` has no trailing slash; `token` is None when none is configured. `source` says
    where the values came from ("env", the file's path, or "default")."""

    url: str
    token: str | None
    source: str


def env_token() -> str | None:
    """FARM_TOKEN; None when unset or blank."""
    return _env.raw("FARM_TOKEN")


def config_dir() -> Path:
    home = _env.raw("FARM_HOME")
    if home:
        return Path(home)
    base = _env.text("XDG_CONFIG_HOME", str(Path.home() / ".config"))
    return Path(base) / "farm"


def config_path(profile: str | None = None) -> Path:
    """The config file of `profile` (default: FARM_PROFILE, else the main `config.json`).
    Raises FarmError for a profile name that is not a plain word."""
    profile = profile or _env.raw("FARM_PROFILE")
    if profile is None:
        return config_dir() / "config.json"
    if not _PROFILE_NAME.match(profile):
        raise FarmError(
            f"profile name {profile!r} is not a plain word",
            hint="use letters, digits, '.', '_' or '-' (e.g. `local`)",
        )
    return config_dir() / "profiles" / f"{profile}.json"


def _readable_path(profile: str | None) -> Path:
    """The file to read: the named profile; else config.json, or the local profile when
    config.json does not exist."""
    path = config_path(profile)
    if profile or _env.raw("FARM_PROFILE") or path.exists():
        return path
    return config_path(LOCAL_PROFILE)


def config_read(path: Path | None = None) -> dict[str, str]:
    """The config file's values ({} when there is none). Raises FarmError when it is unreadable
    or is readable by other users (a token must stay private)."""
    path = path or config_path()
    if not path.exists():
        return {}
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise FarmError(
            f"{path} is readable by other users (mode {mode:o}); it holds an API token",
            hint=f"run `chmod 600 {path}` (or `farm login` again)",
        )
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise FarmError(
            f"{path}: not a readable JSON config ({exc})", hint="run `farm login`"
        ) from None
    if not isinstance(data, dict):
        raise FarmError(f"{path}: must hold a JSON object", hint="run `farm login`")
    return {k: str(v) for k, v in data.items() if isinstance(v, str)}


def config_write(
    *, url: str, token: str, path: Path | None = None, profile: str | None = None
) -> Path:
    """Write url + token to the config file (of `profile`) with mode 0600 (created that way,
    never widened)."""
    path = path or config_path(profile)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(fd, "w") as f:
        json.dump({"url": url.rstrip("/"), "token": token}, f, indent=1)
        f.write("\n")
    os.chmod(tmp, FILE_MODE)
    os.replace(tmp, path)
    return path


def config_load(
    *, url: str | None = None, token: str | None = None, profile: str | None = None
) -> Config:
    """Resolve the settings: explicit arguments, then env, then the config file (of `profile`,
    see the module's docstring), then defaults."""
    file_values: dict[str, str] = {}
    env_url, token_of_env = _env.raw("FARM_URL"), env_token()
    path = _readable_path(profile)
    if not ((url or env_url) and (token or token_of_env)):
        file_values = config_read(path)
    final_url = url or env_url or file_values.get("url") or DEFAULT_URL
    final_token = token or token_of_env or file_values.get("token") or None
    if url or token:
        source = "arguments"
    elif env_url or token_of_env:
        source = "env"
    elif file_values:
        source = str(path)
    else:
        source = "default"
    return Config(url=final_url.rstrip("/"), token=final_token, source=source)
