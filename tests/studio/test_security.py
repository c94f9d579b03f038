"""Recall Studio's security targets over plain HTTP, against a real server: nothing answers without the token
(compared in constant time, never logged); no request from another origin or site changes anything (Origin,
Sec-Fetch-Site, JSON only, no CORS); the Host check that stops DNS rebinding; the server binds 127.0.0.1 only and
offers no other address; the page's headers forbid every script but its own."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
from collections.abc import Callable

import pytest

from botbin.studio.security import Guard
from studio.conftest import Running

SEARCH = "/api/folders/0/search"
QUERY = {"query": "release the agent"}


def test_nothing_answers_without_the_token(studio: Running) -> None:
    for method, path, body in (
        ("GET", "/", None),
        ("GET", "/api/info", None),
        ("GET", "/api/folders/0/rules", None),
        ("GET", "/api/folders/0/health", None),
        ("POST", SEARCH, QUERY),
        ("POST", "/api/folders/0/sync", {}),
        ("GET", "/no/such/path", None),
    ):
        status, headers, data = studio.request(method, path, body, token=False)
        assert status == 401, (method, path, status)
        assert b"hits" not in data and b"rules" not in data
        assert "access-control-allow-origin" not in headers


def test_a_wrong_token_is_refused(studio: Running) -> None:
    same_length = ("A" if studio.token[0] != "A" else "B") + studio.token[1:]
    for wrong in (same_length, studio.token[:-1], studio.token + "x", ""):
        status, _, _ = studio.request("GET", "/api/info", headers={"X-Botbin-Token": wrong}, token=False)
        assert status == 401, wrong
        status, _, _ = studio.request("GET", f"/?token={wrong}", token=False)
        assert status == 401, wrong


def test_the_page_takes_the_token_in_its_url_and_the_api_only_in_the_header(studio: Running) -> None:
    status, _, data = studio.request("GET", f"/?token={studio.token}", token=False)
    assert status == 200 and b"<!doctype html>" in data
    status, _, _ = studio.request("GET", f"/api/info?token={studio.token}", token=False)
    assert status == 401  # a link or an <img> carries a query, never a header


def test_the_token_is_compared_in_constant_time() -> None:
    """The comparison is hmac.compare_digest's: a guess sharing a longer prefix is not let in, and the guard's
    code path does not branch on where the strings differ (checked by reading the function's source)."""
    import inspect

    guard = Guard("s3cret-token-value", 8000)
    assert guard.token_ok("s3cret-token-value")
    assert not guard.token_ok("s3cret-token-valuf") and not guard.token_ok(None)
    assert "compare_digest" in inspect.getsource(Guard.token_ok)


def test_the_host_header_must_be_the_studio_s_own(studio: Running) -> None:
    """DNS rebinding: a page at evil.example whose name now points at 127.0.0.1 sends Host: evil.example."""
    port = studio.server.port
    for host in ("evil.example", f"evil.example:{port}", f"127.0.0.1:{port + 1}", f"0.0.0.0:{port}", ""):
        status, _, data = studio.request("GET", "/api/info", headers={"Host": host})
        assert status == 421, (host, status)
        assert b"version" not in data
    for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
        assert studio.request("GET", "/api/info", headers={"Host": host})[0] == 200


def test_no_request_from_another_origin_changes_anything(studio: Running) -> None:
    before = studio.service.last_sync
    for headers in (
        {"Origin": "http://evil.example"},
        {"Origin": "null"},  # a sandboxed frame, a file: page
        {"Origin": f"http://127.0.0.1:{studio.server.port + 1}"},  # another local server
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ):
        for path in ("/api/folders/0/sync", "/api/folders/0/prune", SEARCH):
            status, response_headers, _ = studio.request("POST", path, {}, headers=headers)
            assert status == 403, (headers, path, status)
            assert "access-control-allow-origin" not in response_headers
    assert studio.service.last_sync is before  # no sync ran


def test_a_form_post_is_refused(studio: Running) -> None:
    """A cross-site form can send only urlencoded, multipart or text/plain bodies, and no custom header."""
    for kind in ("application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain"):
        status, _, _ = studio.request("POST", "/api/folders/0/sync", {}, headers={"Content-Type": kind})
        assert status == 415, kind
    assert studio.service.last_sync is None


def test_a_preflight_gets_no_cors_answer(studio: Running) -> None:
    headers = {
        "Origin": "http://evil.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "x-botbin-token, content-type",
    }
    status, response_headers, _ = studio.request("OPTIONS", "/api/folders/0/sync", headers=headers, token=False)
    assert status >= 400
    assert not [h for h in response_headers if h.startswith("access-control-")]
    status, response_headers, _ = studio.request("OPTIONS", "/api/folders/0/sync")
    assert status == 405 and not [h for h in response_headers if h.startswith("access-control-")]


def test_the_page_forbids_every_script_but_its_own(studio: Running) -> None:
    status, headers, data = studio.request("GET", f"/?token={studio.token}", token=False)
    assert status == 200
    policy = headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'nonce-" in policy and "unsafe-inline" not in policy
    nonce = policy.split("script-src 'nonce-", 1)[1].split("'", 1)[0]
    assert data.count(b"<script") == 1 and f'<script nonce="{nonce}">'.encode() in data
    assert headers["x-frame-options"] == "DENY" and headers["referrer-policy"] == "no-referrer"
    assert headers["x-content-type-options"] == "nosniff" and headers["cache-control"] == "no-store"
    assert studio.token.encode() not in data  # the page reads it from its own URL


def test_it_listens_on_the_loopback_address_only(studio: Running) -> None:
    assert studio.server.socket.getsockname()[0] == "127.0.0.1"
    other = _outward_address()
    if other is None:
        pytest.skip("this machine has no address but the loopback one")
    with socket.socket() as s:
        s.settimeout(2)
        assert s.connect_ex((other, studio.server.port)) != 0


def test_the_command_offers_no_other_address() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "botbin", "studio", "--host", "0.0.0.0", "--no-browser"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "unrecognized arguments: --host" in done.stderr


def test_a_read_only_studio_refuses_the_actions(own_studio: Callable[..., Running]) -> None:
    studio = own_studio(read_only=True)
    before = studio.service.last_sync  # the fixture's own sync
    for path, body in (("sync", {}), ("prune", {}), ("restore", {"all": True}), ("consolidate", {"dryRun": False})):
        status, _, data = studio.request("POST", f"/api/folders/0/{path}", body)
        assert status == 403, (path, data)
    assert studio.request("POST", "/api/folders/0/consolidate", {"dryRun": True})[0] == 200  # a preview writes nothing
    assert studio.service.last_sync is before


def test_the_token_never_reaches_the_log(studio: Running, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    studio.request("GET", f"/?token={studio.token}", token=False)
    studio.request("GET", f"/?token={studio.token}x", token=False)
    studio.request("GET", "/api/info", headers={"Host": "evil.example"})
    studio.request("POST", SEARCH, QUERY)
    assert caplog.records  # the refusals are logged...
    assert all(studio.token not in r.getMessage() for r in caplog.records)  # ...without the token


def _outward_address() -> str | None:
    """This machine's address towards the network (no packet is sent), or None when it has only the loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))
            address = str(s.getsockname()[0])
        except OSError:
            return None
    return None if address.startswith("127.") else address
