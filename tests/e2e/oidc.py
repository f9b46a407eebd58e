"""A local OpenID Connect provider and a Streamlit app signed in through it, for the browser tests.

:func:`start_oidc_provider` runs ``oidc-provider-mock`` (pinned in requirements-dev.txt) as a subprocess on a free
loopback port: it accepts any client id and secret, and its authorize page is a form where the test types the
``sub`` to sign in as (users given with ``--user-claims`` get those claims; any other sub gets ``email = sub``).
:func:`start_streamlit_with_auth` runs ``streamlit run SCRIPT`` from a temporary folder whose
``.streamlit/secrets.toml`` has an ``[auth]`` section pointing at the provider, so ``st.login()`` signs in there.
:func:`start_app_with_auth` runs the real ``app.py`` (from the project folder) in ``AUTH_MODE=oidc`` with the
secrets of :func:`write_auth_secrets` (one file may serve several replicas: ``redirect_uri`` with ``{port}``);
:func:`sign_in` completes the provider's form in a browser page.
Both are loopback only; the waits poll a URL until it answers.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.error import URLError
from urllib.request import urlopen

from playwright.sync_api import Page, expect

from tests.e2e.conftest import ROOT, free_port, wait_for_app


class Server:
    def __init__(self, url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
        self.url, self.proc, self.log = url, proc, log

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)


def _wait_until_up(proc: subprocess.Popen[bytes], url: str, log: Path, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited early:\n{log.read_text(errors='replace')}")
        try:
            with urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return
        except (URLError, OSError):
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"{what} did not answer {url}:\n{log.read_text(errors='replace')}")


def start_oidc_provider(tmp: Path, users: Sequence[Mapping[str, object]] = ()) -> Server:
    """oidc-provider-mock on 127.0.0.1 and a free port; ``users``: claims dicts, each with a ``sub``."""
    port = free_port()
    log = tmp / "oidc-provider.log"
    args = [sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1", "--port", str(port)]
    for claims in users:
        args += ["--user-claims", json.dumps(claims)]
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.Popen(args, cwd=tmp, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    _wait_until_up(proc, f"{url}/.well-known/openid-configuration", log, "oidc-provider-mock")
    return Server(url, proc, log)


def start_streamlit_with_auth(tmp: Path, script: Path, provider_url: str,
                              extra_env: dict[str, str] | None = None) -> Server:
    """``streamlit run script`` on 127.0.0.1 and a free port, from ``tmp`` with a ``.streamlit/secrets.toml``
    whose ``[auth]`` names the provider; the returned URL is ``http://localhost:PORT`` (the redirect URI's host,
    so the sign-in cookie is set for the host the browser is on)."""
    port = free_port()
    app_url = f"http://localhost:{port}"
    (tmp / ".streamlit").mkdir(exist_ok=True)
    (tmp / ".streamlit" / "secrets.toml").write_text(
        "[auth]\n"
        f'redirect_uri = "{app_url}/oauth2callback"\n'
        f'cookie_secret = "{secrets.token_hex(32)}"\n'
        'client_id = "navigo-e2e"\n'
        'client_secret = "navigo-e2e-secret"\n'
        f'server_metadata_url = "{provider_url}/.well-known/openid-configuration"\n',
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LLM_", "OPENAI_", "OSRM_", "AMAP_", "NOMINATIM_", "MAP_TILES", "AUTH_", "ROLES_"))}
    env.update({"PYTHONPATH": str(ROOT), "DATABASE_URL": f"sqlite:///{tmp / 'e2e.db'}"})
    env.update(extra_env or {})
    log = tmp / "streamlit.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(port),
         "--server.headless", "true", "--server.address", "127.0.0.1",
         "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=tmp, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
    )
    _wait_until_up(proc, f"http://127.0.0.1:{port}/_stcore/health", log, "streamlit")
    return Server(app_url, proc, log)


def write_auth_secrets(path: Path, provider_url: str, *, redirect_uri: str = "http://localhost:{port}/oauth2callback",
                       cookie_secret: str | None = None) -> Path:
    """A ``secrets.toml`` at ``path`` whose ``[auth]`` names the provider. The default ``redirect_uri`` has
    Streamlit's ``{port}`` placeholder (filled with each server's ``server.port``), so one file serves every
    replica of a deployment; they share the ``cookie_secret`` and the client id and secret."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "[auth]\n"
        f'redirect_uri = "{redirect_uri}"\n'
        f'cookie_secret = "{cookie_secret or secrets.token_hex(32)}"\n'
        'client_id = "navigo-e2e"\n'
        'client_secret = "navigo-e2e-secret"\n'
        f'server_metadata_url = "{provider_url}/.well-known/openid-configuration"\n',
        encoding="utf-8",
    )
    return path


def start_app_with_auth(tmp: Path, secrets_file: Path, extra_env: dict[str, str] | None = None) -> Server:
    """The real app (``streamlit run app.py`` from the project folder, so its ``.streamlit/config.toml`` holds)
    on a free port in ``AUTH_MODE=oidc``, its secrets read from ``secrets_file`` only (``--secrets.files``);
    ``DATABASE_URL`` defaults to a SQLite file in ``tmp``. The returned URL is ``http://localhost:PORT``."""
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LLM_", "OPENAI_", "OSRM_", "AMAP_", "NOMINATIM_", "MAP_TILES", "AUTH_", "ROLES_"))}
    env.update({"PYTHONPATH": str(ROOT), "DATABASE_URL": f"sqlite:///{tmp / 'e2e.db'}", "AUTH_MODE": "oidc"})
    env.update(extra_env or {})
    log = tmp / "streamlit.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
         "--server.headless", "true", "--server.address", "127.0.0.1", "--secrets.files", str(secrets_file),
         "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
    )
    _wait_until_up(proc, f"http://127.0.0.1:{port}/_stcore/health", log, "streamlit")
    return Server(f"http://localhost:{port}", proc, log)


def sign_in(page: Page, app_url: str, provider_url: str, sub: str) -> None:
    """Open ``app_url``, press Sign in, type ``sub`` into the provider's authorize form, and wait until the app
    has drawn again for the signed-in user (its sign-out button is there)."""
    page.goto(app_url)
    wait_for_app(page)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(re.escape(provider_url) + r"/oauth2/authorize\b.*"), timeout=60_000)
    page.locator("input[name='sub']").fill(sub)
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(re.compile(re.escape(app_url) + r"/.*"), timeout=60_000)
    wait_for_app(page)
    expect(page.get_by_role("button", name="Sign out")).to_be_visible(timeout=60_000)
