"""A local OpenID Connect provider and a Streamlit app signed in through it, for the browser tests.

:func:`start_oidc_provider` runs ``oidc-provider-mock`` (pinned in requirements-dev.txt) as a subprocess on a free
loopback port: it accepts any client id and secret, and its authorize page is a form where the test types the
``sub`` to sign in as (users given with ``--user-claims`` get those claims; any other sub gets ``email = sub``).
:func:`start_streamlit_with_auth` runs ``streamlit run SCRIPT`` from a temporary folder whose
``.streamlit/secrets.toml`` has an ``[auth]`` section pointing at the provider, so ``st.login()`` signs in there.
Both are loopback only; the waits poll a URL until it answers.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.error import URLError
from urllib.request import urlopen

from tests.e2e.conftest import ROOT, free_port


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
