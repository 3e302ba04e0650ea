"""Contract check: the official `composio` Python SDK pointed at our Composio fake.

Run the fake first (`cargo run -p tool-providers --example serve_fake -- composio --key <key>`,
which prints its URL), then:

    FAKE_URL=http://127.0.0.1:PORT FAKE_KEY=ak_... python tests/providers/contract_composio.py

Pinned: composio==0.30.0 (it pulls composio-client 2.0.0rc19). The SDK's telemetry is turned
off (`allow_tracking=False`) and every request goes to FAKE_URL, so nothing reaches the
internet. Exits non-zero with a message naming the failed step.
"""

import os
import sys
import traceback

# Nothing may leave the machine: the SDK reads these, and we pass everything explicitly.
for name in ("COMPOSIO_BASE_URL", "COMPOSIO_API_KEY", "COMPOSIO_USER_API_KEY", "COMPOSIO_ORG_API_KEY", "COMPOSIO_CUSTOM_HEADERS"):
    os.environ.pop(name, None)
os.environ.setdefault("COMPOSIO_LOGGING_LEVEL", "warning")
# Belt and braces: any request to another host fails instead of reaching the internet.
os.environ["HTTPS_PROXY"] = os.environ["HTTP_PROXY"] = "http://127.0.0.1:9"
os.environ["NO_PROXY"] = "127.0.0.1,localhost"

STEP = "start"


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def strict(model):
    """Re-validates a response model with pydantic: the generated client builds models
    leniently, so a field the fake forgot would otherwise go unnoticed."""
    type(model).model_validate(model.model_dump(mode="json", by_alias=True, exclude_unset=True))
    return model


def main() -> int:
    global STEP
    url = os.environ.get("FAKE_URL")
    key = os.environ.get("FAKE_KEY")
    if not url or not key:
        print("contract_composio: set FAKE_URL and FAKE_KEY", file=sys.stderr)
        return 2

    from composio import Composio

    composio = Composio(api_key=key, base_url=url, allow_tracking=False, toolkit_versions="20260101_00", max_retries=0, timeout=10)

    STEP = "list toolkits"
    toolkits = composio.toolkits.get()
    strict(composio.client.toolkits.list())
    slugs = [t.slug for t in toolkits]
    check("github" in slugs and "gmail" in slugs, f"toolkits: {slugs}")
    check(toolkits[0].meta.logo.startswith("https://"), "toolkit meta.logo")

    STEP = "get one toolkit"
    zendesk = strict(composio.toolkits.get("zendesk"))
    fields = zendesk.auth_config_details[0].fields.connected_account_initiation.required
    check([f.name for f in fields] == ["subdomain", "generic_api_key"], f"zendesk fields: {fields}")

    STEP = "list tools, two pages"
    first = strict(composio.client.tools.list(limit=3))
    check(len(first.items) == 3 and first.next_cursor, f"first page: {len(first.items)} items, cursor {first.next_cursor!r}")
    second = strict(composio.client.tools.list(limit=3, cursor=first.next_cursor))
    check(len(second.items) == 3, f"second page: {len(second.items)} items")
    seen = [t.slug for t in first.items + second.items]
    check(len(set(seen)) == 6, f"pages overlap: {seen}")
    check(first.total_items == 8 and first.current_page == 1, f"envelope: {first.total_items} {first.current_page}")
    raw = composio.tools.get_raw_composio_tools(toolkits=["gmail"])
    check(sorted(t.slug for t in raw) == ["GMAIL_FETCH_EMAILS", "GMAIL_SEND_EMAIL"], f"gmail tools: {[t.slug for t in raw]}")

    STEP = "get one tool"
    tool = composio.tools.get_raw_composio_tool_by_slug("GITHUB_CREATE_ISSUE")
    check(tool.input_parameters["required"] == ["owner", "repo", "title"], f"input_parameters: {tool.input_parameters}")
    check(tool.toolkit.slug == "github" and tool.version == "20260101_00", "tool toolkit/version")
    strict(composio.client.tools.retrieve(tool_slug="GITHUB_CREATE_ISSUE"))

    STEP = "execute for a user with a connected account"
    result = composio.tools.execute(
        "GITHUB_CREATE_ISSUE", {"owner": "octo", "repo": "hello", "title": "Bug"}, user_id="sdk-user"
    )
    check(result["successful"] is True, f"execute: {result}")
    check(result["data"]["number"] == 7, f"execute data: {result['data']}")
    strict(composio.client.tools.execute(tool_slug="HACKERNEWS_GET_FRONTPAGE", arguments={}, user_id="sdk-user", version="20260101_00"))

    STEP = "execute without a connected account"
    missing = None
    try:
        composio.tools.execute("GMAIL_SEND_EMAIL", {"recipient_email": "a@b.c", "body": "hi"}, user_id="nobody")
    except Exception as e:  # the SDK raises its typed 400
        missing = e
    check(missing is not None and "No connected account found" in str(missing), f"missing account: {missing!r}")

    STEP = "list auth configs"
    configs = strict(composio.auth_configs.list(toolkit_slug="slack"))
    check(len(configs.items) == 2 and all(c.status == "ENABLED" for c in configs.items), f"slack configs: {configs.items}")
    github_config = composio.auth_configs.list(toolkit_slug="github").items[0]
    check(github_config.id == "ac_github" and github_config.auth_scheme == "OAUTH2", f"github config: {github_config}")

    STEP = "initiate a connected account"
    request = composio.connected_accounts.initiate(user_id="sdk-new", auth_config_id="ac_github")
    check(request.id.startswith("ca_") and request.status == "INITIATED", f"initiate: {request.id} {request.status}")
    check(request.redirect_url and request.redirect_url.startswith("https://"), f"redirect_url: {request.redirect_url}")
    strict(composio.client.connected_accounts.create(auth_config={"id": "ac_github"}, connection={"user_id": "sdk-other"}))

    STEP = "link a connected account"
    linked = composio.connected_accounts.link(user_id="sdk-new", auth_config_id="ac_gmail")
    check(linked.id.startswith("ca_") and "/link/" in (linked.redirect_url or ""), f"link: {linked.id} {linked.redirect_url}")
    strict(composio.client.link.create(auth_config_id="ac_gmail", user_id="sdk-other"))

    STEP = "get a connected account"
    account = strict(composio.connected_accounts.get(request.id))
    check(account.status == "INITIATED" and account.toolkit.slug == "github", f"get: {account.status} {account.toolkit}")
    check(account.auth_config.id == "ac_github" and account.user_id == "sdk-new", "get: auth_config/user")

    STEP = "list connected accounts"
    listed = strict(composio.connected_accounts.list(user_ids=["sdk-new"], toolkit_slugs=["github", "gmail"]))
    ids = sorted(a.id for a in listed.items)
    check(ids == sorted([request.id, linked.id]), f"list: {ids}")
    others = composio.connected_accounts.list(user_ids=["sdk-user"])
    check([a.toolkit.slug for a in others.items] == ["github"], "list by another user")

    STEP = "delete a connected account"
    deleted = strict(composio.connected_accounts.delete(request.id))
    check(deleted.success is True, f"delete: {deleted}")
    gone = None
    try:
        composio.connected_accounts.get(request.id)
    except Exception as e:
        gone = e
    check(gone is not None and getattr(gone, "status_code", None) == 404, f"deleted account still readable: {gone!r}")

    STEP = "a wrong key is refused"
    refused = None
    try:
        Composio(api_key="ak_wrong", base_url=url, allow_tracking=False, max_retries=0).toolkits.get()
    except Exception as e:
        refused = e
    check(refused is not None and getattr(refused, "status_code", None) == 401, f"wrong key: {refused!r}")

    print("contract_composio: ok (composio SDK against the fake: toolkits, tools, execute, auth configs, connected accounts)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # noqa: BLE001 - report any failure with the step it happened in
        traceback.print_exc()
        print(f"contract_composio: FAILED at step '{STEP}': {e}", file=sys.stderr)
        sys.exit(1)
