"""A local OAuth 2.1 authorization server for the authorization tests (test_oauth.py).

RFC 8414 metadata, dynamic client registration (RFC 7591), `/authorize` that approves at once
(PKCE S256 required, redirecting with `code`, `state` and `iss`), `/token` (authorization code
with the PKCE verifier checked) issuing RS256 JWT access tokens for the `resource` asked for
(RFC 8707), and the JWKS. The key is made at start; the subject is fixed per server.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import socket
import threading
import time
from typing import Any
from urllib.parse import urlencode

import jwt
import uvicorn
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route


class AuthServer:
    """Serves on 127.0.0.1 (a free port) in a thread until `stop`."""

    def __init__(self, subject: str = "alice", scopes: tuple[str, ...] = ("mcp", "calc.run")) -> None:
        self.subject = subject
        self.grantable = set(scopes)
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = "py-1"
        self.clients: dict[str, dict[str, Any]] = {}
        self.codes: dict[str, dict[str, Any]] = {}
        self.issued: list[dict[str, Any]] = []
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.issuer = f"http://127.0.0.1:{sock.getsockname()[1]}"
        app = Starlette(
            routes=[
                Route("/.well-known/oauth-authorization-server", self.metadata),
                Route("/jwks", self.jwks),
                Route("/register", self.register, methods=["POST"]),
                Route("/authorize", self.authorize),
                Route("/token", self.token, methods=["POST"]),
            ]
        )
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise TimeoutError("the authorization server did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=5)

    async def metadata(self, _: Request) -> Response:
        return JSONResponse(
            {
                "issuer": self.issuer,
                "authorization_endpoint": f"{self.issuer}/authorize",
                "token_endpoint": f"{self.issuer}/token",
                "registration_endpoint": f"{self.issuer}/register",
                "jwks_uri": f"{self.issuer}/jwks",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
                "authorization_response_iss_parameter_supported": True,
                "scopes_supported": sorted(self.grantable),
            }
        )

    async def jwks(self, _: Request) -> Response:
        jwk = jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
        return JSONResponse({"keys": [{**jwk, "kid": self.kid, "alg": "RS256", "use": "sig"}]})

    async def register(self, request: Request) -> Response:
        meta = await request.json()
        client_id = secrets.token_urlsafe(12)
        client = {**meta, "client_id": client_id, "client_id_issued_at": int(time.time())}
        if meta.get("token_endpoint_auth_method", "client_secret_post") != "none":
            client["client_secret"] = secrets.token_urlsafe(24)
            client["token_endpoint_auth_method"] = "client_secret_post"
        self.clients[client_id] = client
        return JSONResponse(client, status_code=201)

    async def authorize(self, request: Request) -> Response:
        q = request.query_params
        client = self.clients.get(q.get("client_id", ""))
        if client is None or q.get("redirect_uri") not in client.get("redirect_uris", []):
            return JSONResponse({"error": "invalid_request"}, status_code=400)
        if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
            return JSONResponse({"error": "invalid_request", "error_description": "PKCE S256 required"}, status_code=400)
        code = secrets.token_urlsafe(16)
        self.codes[code] = dict(q)
        answer = {"code": code, "state": q.get("state", ""), "iss": self.issuer}
        return RedirectResponse(f"{q['redirect_uri']}?{urlencode(answer)}", status_code=302)

    async def token(self, request: Request) -> Response:
        form = await request.form()
        asked = self.codes.pop(str(form.get("code", "")), None)
        if form.get("grant_type") != "authorization_code" or asked is None:
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        verifier = str(form.get("code_verifier", ""))
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if challenge != asked["code_challenge"] or form.get("redirect_uri") != asked["redirect_uri"]:
            return JSONResponse({"error": "invalid_grant", "error_description": "PKCE or redirect_uri mismatch"}, status_code=400)
        scope = " ".join(s for s in asked.get("scope", "").split() if s in self.grantable)
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": self.subject,
            "aud": asked.get("resource") or form.get("resource"),
            "scope": scope,
            "iat": now,
            "exp": now + 600,
            "email": f"{self.subject}@example.com",
        }
        self.issued.append(claims)
        token = jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": self.kid})
        return JSONResponse({"access_token": token, "token_type": "Bearer", "expires_in": 600, "scope": scope})
