"""Contract check: the official Arcade SDK (`arcadepy==1.10.0`) against our local Arcade fake.

The fake (tool-providers/tests/support/arcade_fake.rs) is what the Rust provider is tested
against; this script keeps it honest by having the official SDK parse every answer the
provider relies on, and asserting the parsed values.

Run with the fake served by
    cargo run -p tool-providers --example serve_fake -- arcade --key <key> --url-file <file>
(it writes its URL to <file>) and then
    FAKE_URL=<url> FAKE_KEY=<key> python tests/providers/contract_arcade.py

Exits 0 when every check holds, 1 with a message naming the first mismatch, 2 on a bad setup.
"""

import os
import sys
import time

try:
    import arcadepy
    from arcadepy import Arcade
except ImportError:  # pragma: no cover - setup problem, not a contract mismatch
    print("contract_arcade: the arcadepy package is not installed (pip install arcadepy==1.10.0)", file=sys.stderr)
    sys.exit(2)

PINNED = "1.10.0"


class Mismatch(Exception):
    pass


def check(condition, what, got=None):
    if not condition:
        raise Mismatch(f"{what} (got {got!r})" if got is not None else what)


def main():
    url = os.environ.get("FAKE_URL", "").strip()
    key = os.environ.get("FAKE_KEY", "").strip()
    if not url or not key:
        print("contract_arcade: set FAKE_URL and FAKE_KEY", file=sys.stderr)
        return 2
    if arcadepy.__version__ != PINNED:
        print(f"contract_arcade: arcadepy {arcadepy.__version__} installed; this check is pinned to {PINNED}", file=sys.stderr)
        return 2

    client = Arcade(api_key=key, base_url=url, max_retries=0, timeout=30.0)
    checks = []

    def step(name, fn):
        try:
            fn()
        except Mismatch as e:
            raise Mismatch(f"{name}: {e}") from None
        except arcadepy.APIError as e:
            raise Mismatch(f"{name}: the SDK raised {type(e).__name__}: {e}") from None
        except Exception as e:  # a parse failure inside the SDK is a contract mismatch too
            raise Mismatch(f"{name}: {type(e).__name__}: {e}") from None
        checks.append(name)

    # Health.
    def health():
        h = client.health.check()
        check(h.healthy is True, "GET /v1/health: healthy is not true", h.healthy)

    # Tools: two pages of offset pagination.
    def list_tools():
        first = client.tools.list(limit=2)
        names = [t.qualified_name for t in first.items]
        check(names == ["Math.Add", "Math.Divide"], "first page names", names)
        check(first.total_count == 5, "total_count", first.total_count)
        check(first.offset == 0, "first page offset", first.offset)
        check(first.has_next_page(), "the SDK sees a next page")
        second = first.get_next_page()
        names2 = [t.qualified_name for t in second.items]
        check(names2 == ["Github.GetRepository", "Gmail.ListEmails"], "second page names", names2)
        check(second.offset == 2, "second page offset", second.offset)
        everything = [t.qualified_name for t in client.tools.list(limit=2)]
        check(len(everything) == 5 and everything[-1] == "Slack.SendMessage", "auto-pagination over every page", everything)
        math = client.tools.list(toolkit="Math", limit=10)
        check([t.toolkit.name for t in math.items] == ["Math", "Math"], "toolkit filter", [t.toolkit.name for t in math.items])
        gh = second.items[0]
        auth = gh.requirements.authorization if gh.requirements else None
        check(auth is not None and auth.provider_id == "github", "Github tools require the github auth provider", auth)

    # One tool's definition.
    def get_tool():
        t = client.tools.get("Github.GetRepository")
        check(t.qualified_name == "Github.GetRepository", "qualified_name", t.qualified_name)
        check(t.fully_qualified_name == "Github.GetRepository@1.0.0", "fully_qualified_name", t.fully_qualified_name)
        check(t.name == "GetRepository" and t.toolkit.name == "Github", "name and toolkit", (t.name, t.toolkit.name))
        params = {p.name: p for p in (t.input.parameters or [])}
        check(sorted(params) == ["archived", "filters", "include", "owner", "repo"], "parameter names", sorted(params))
        check(params["owner"].required is True and params["owner"].value_schema.val_type == "string", "owner", params["owner"])
        inc = params["include"].value_schema
        check(inc.val_type == "array" and inc.inner_val_type == "string" and inc.enum == ["issues", "pulls"], "include", inc)
        check(t.output is not None and t.output.value_schema.val_type == "json", "output value_schema", t.output)
        try:
            client.tools.get("Math.Nope")
        except arcadepy.NotFoundError:
            pass
        else:
            raise Mismatch("an unknown tool is not a 404")

    # Execute: success, a tool error, and the two authorization-required forms.
    def execute():
        r = client.tools.execute(tool_name="Math.Add", input={"a": 2, "b": 3}, user_id="sdk-user")
        check(r.success is True and r.output is not None and r.output.value == 5, "Math.Add output.value", r)
        check(r.output.error is None and r.output.authorization is None, "no error or authorization on success", r.output)
        e = client.tools.execute(tool_name="Math.Divide", input={"a": 1, "b": 0}, user_id="sdk-user")
        err = e.output.error
        check(e.success is False and err is not None, "a tool error is success=false with output.error", e)
        check(err.kind == "TOOL_RUNTIME_FATAL" and err.can_retry is False, "error kind and can_retry", err)
        check(err.message == "Cannot divide by zero" and err.additional_prompt_content, "error message", err)
        ok = client.tools.execute(tool_name="Github.GetRepository", input={"owner": "o", "repo": "r"}, user_id="sdk-user")
        check(ok.output.value == {"full_name": "o/r", "user": "sdk-user"}, "authorized Github run", ok.output)
        g = client.tools.execute(tool_name="Gmail.ListEmails", input={}, user_id="sdk-new")
        a = g.output.authorization
        check(a is not None and a.status == "pending" and a.url and "sdk-new" in a.url, "output.authorization", g.output)
        try:
            client.tools.execute(tool_name="Github.GetRepository", input={"owner": "o", "repo": "r"}, user_id="sdk-new")
        except arcadepy.PermissionDeniedError as denied:
            body = denied.body if isinstance(denied.body, dict) else {}
            check(denied.status_code == 403, "status", denied.status_code)
            check(body.get("name") == "tool_authorization_required", "403 body name", body)
        else:
            raise Mismatch("an unauthorized Github run is not a 403 tool_authorization_required")

    # Authorize and auth status (with and without the long poll).
    def authorize():
        pending = client.tools.authorize(tool_name="Github.GetRepository", user_id="sdk-new")
        check(pending.status == "pending" and pending.id == "ac_sdk-new", "pending authorization", pending)
        check(pending.url and "state=sdk-new" in pending.url and pending.user_id == "sdk-new", "its URL and user", pending)
        check(pending.provider_id == "github", "provider_id", pending.provider_id)
        s = client.auth.status(id=pending.id)
        check(s.status == "pending" and s.id == pending.id, "status without wait", s)
        started = time.monotonic()
        s = client.auth.status(id=pending.id, wait=1)
        check(s.status == "pending", "status after a 1 s wait", s)
        check(time.monotonic() - started >= 0.9, "the wait was honoured", time.monotonic() - started)
        done = client.tools.authorize(tool_name="Github.GetRepository", user_id="sdk-user")
        check(done.status == "completed" and done.id and not done.url, "already-authorized user", done)
        s = client.auth.status(id=done.id, wait=5)
        check(s.status == "completed", "a completed flow answers at once", s)
        s = client.auth.wait_for_completion(done.id)
        check(s.status == "completed", "wait_for_completion", s)
        try:
            client.auth.status(id="ac_nobody")
        except arcadepy.NotFoundError:
            pass
        else:
            raise Mismatch("an unknown authorization is not a 404")

    # Admin user connections: filtered offset pages, delete, 404 on a second delete.
    def connections():
        page = client.admin.user_connections.list(user={"id": "sdk-user"}, limit=1)
        check(len(page.items) == 1 and page.total_count == 2 and page.offset == 0, "first page", page)
        c = page.items[0]
        check(c.id == "uc_0001" and c.user_id == "sdk-user" and c.provider_id == "github", "first connection", c)
        check(c.connection_status == "active" and c.scopes == ["read"], "its status and scopes", c)
        all_mine = list(client.admin.user_connections.list(user={"id": "sdk-user"}, limit=1))
        check([x.id for x in all_mine] == ["uc_0001", "uc_0002"], "auto-pagination", [x.id for x in all_mine])
        gh = list(client.admin.user_connections.list(provider={"id": "github"}))
        check(sorted(x.user_id for x in gh) == ["sdk-other", "sdk-user"], "provider filter", [x.user_id for x in gh])
        both = list(client.admin.user_connections.list(provider={"id": "github"}, user={"id": "sdk-other"}))
        check([x.id for x in both] == ["uc_0003"], "provider and user filters", [x.id for x in both])
        check(client.admin.user_connections.delete("uc_0002") is None, "delete returns nothing")
        left = [x.id for x in client.admin.user_connections.list(user={"id": "sdk-user"})]
        check(left == ["uc_0001"], "deleted connection gone", left)
        try:
            client.admin.user_connections.delete("uc_0002")
        except arcadepy.NotFoundError:
            pass
        else:
            raise Mismatch("deleting a missing connection is not a 404")

    # A wrong key is a 401 the SDK understands.
    def unauthorized():
        wrong = Arcade(api_key="arc_wrong", base_url=url, max_retries=0)
        try:
            wrong.health.check()
        except arcadepy.AuthenticationError:
            pass
        else:
            raise Mismatch("a wrong key is not a 401")

    try:
        for name, fn in [
            ("health", health),
            ("tools.list", list_tools),
            ("tools.get", get_tool),
            ("tools.execute", execute),
            ("tools.authorize + auth.status", authorize),
            ("admin.user_connections", connections),
            ("authentication", unauthorized),
        ]:
            step(name, fn)
    except Mismatch as e:
        print(f"contract_arcade: MISMATCH in {e}", file=sys.stderr)
        return 1
    print(f"contract_arcade: arcadepy {arcadepy.__version__}: {len(checks)} groups passed ({', '.join(checks)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
