//! The fake's catalog: its toolkits (with their auth fields), their tools with
//! `input_parameters`/`output_parameters`, and the auth configs.

use super::*;

// ----- catalog ---------------------------------------------------------------------------

const LOGO: &str = "https://logos.composio.dev/api/app";
pub(super) const NOW: &str = "2026-01-01T00:00:00.000Z";

pub(super) fn toolkit(slug: &str, name: &str, description: &str, schemes: &[&str], no_auth: bool) -> Value {
    json!({
        "slug": slug, "name": name, "type": "native", "is_local_toolkit": false,
        "deprecated": {"toolkitId": format!("tk-{slug}")},
        "meta": {"categories": [{"id": "productivity", "name": "Productivity"}], "created_at": NOW,
                 "description": description, "logo": format!("{LOGO}/{slug}"), "tools_count": 2.0,
                 "triggers_count": 0.0, "updated_at": NOW, "version": "20260101_00", "app_url": null},
        "auth_schemes": schemes, "composio_managed_auth_schemes": schemes, "no_auth": no_auth,
        "auth_guide_url": null,
    })
}

/// The toolkits, in listing order.
pub fn toolkits() -> Vec<Value> {
    vec![
        toolkit("github", "GitHub", "Code hosting", &["OAUTH2"], false),
        toolkit("gmail", "Gmail", "Email by Google", &["OAUTH2"], false),
        toolkit("slack", "Slack", "Team chat", &["OAUTH2"], false),
        toolkit("zendesk", "Zendesk", "Customer support", &["API_KEY"], false),
        toolkit("notion", "Notion", "Notes and docs", &["OAUTH2"], false),
        toolkit("hackernews", "Hacker News", "Tech news", &[], true),
        toolkit("composio", "Composio", "Composio's own tools", &[], true),
    ]
}

fn field(name: &str, display: &str, kind: &str, required: bool, default: Option<&str>) -> Value {
    json!({"name": name, "displayName": display, "type": kind, "required": required, "description": format!("The {display}"),
           "default": default, "is_secret": false, "user_visible": true})
}

pub(super) fn toolkit_detail(slug: &str) -> Option<Value> {
    let base = toolkits().into_iter().find(|t| t["slug"] == slug)?;
    let mode = |mode: &str, required: Vec<Value>, optional: Vec<Value>| {
        json!({"mode": mode, "name": mode, "required_scopes": [], "fields": {
            "auth_config_creation": {"required": [], "optional": []},
            "connected_account_initiation": {"required": required, "optional": optional}}})
    };
    let details = match slug {
        "zendesk" => vec![mode(
            "API_KEY",
            vec![
                field("subdomain", "Your Subdomain", "string", true, None),
                field("generic_api_key", "API Key", "string", true, None),
            ],
            vec![field("page_size", "Page Size", "integer", false, Some("50"))],
        )],
        "hackernews" | "composio" => vec![],
        _ => vec![mode("OAUTH2", vec![], vec![])],
    };
    let mut meta = base["meta"].clone();
    meta["available_versions"] = json!(["20260101_00"]);
    meta["categories"] = json!([{"name": "Productivity", "slug": "productivity"}]);
    Some(json!({
        "slug": slug, "name": base["name"], "type": "native", "enabled": true, "is_local_toolkit": false,
        "composio_managed_auth": [], "composio_managed_auth_schemes": base["auth_schemes"],
        "deprecated": {"rawProxyInfoByAuthSchemes": [], "toolkitId": format!("tk-{slug}")},
        // No `base_url`: the API leaves it out unless the toolkit has a fixed one, and
        // `@composio/core` 0.21.0 rejects `null` there (an optional string in its schema).
        "meta": meta, "auth_config_details": details,
    }))
}

pub(super) fn tool(slug: &str, toolkit: &str, name: &str, description: &str, input: Value, output: Value, no_auth: bool) -> Value {
    json!({
        "slug": slug, "name": name, "description": description, "human_description": description,
        "toolkit": {"slug": toolkit, "name": toolkit, "logo": format!("{LOGO}/{toolkit}")},
        "input_parameters": input, "output_parameters": output, "no_auth": no_auth,
        "version": "20260101_00", "available_versions": ["20260101_00"], "is_deprecated": false,
        "deprecated": {"available_versions": ["20260101_00"], "displayName": name, "is_deprecated": false,
                       "toolkit": {"logo": format!("{LOGO}/{toolkit}")}, "version": "20260101_00"},
        "scopes": [], "tags": ["fake"], "scope_requirements": null,
    })
}

fn wrapped(data: Value) -> Value {
    json!({"type": "object", "title": "Response", "required": ["data", "successful"], "properties": {
        "data": data, "error": {"type": "string", "nullable": true}, "successful": {"type": "boolean"}}})
}

/// The tools, in listing order.
pub fn tools() -> Vec<Value> {
    vec![
        tool(
            "GITHUB_CREATE_ISSUE",
            "github",
            "Create an issue",
            "Create an issue in a GitHub repository",
            json!({"type": "object", "properties": {
                "owner": {"type": "string", "description": "The repository owner"},
                "repo": {"type": "string", "description": "The repository name"},
                "title": {"type": "string", "description": "The issue title"},
                "body": {"type": "string", "description": "The issue body"}},
                "required": ["owner", "repo", "title"]}),
            wrapped(json!({"type": "object", "properties": {"number": {"type": "integer"}, "url": {"type": "string"}}})),
            false,
        ),
        tool(
            "GITHUB_GET_REPO",
            "github",
            "Get a repository",
            "Get a GitHub repository",
            json!({"type": "object", "properties": {"owner": {"type": "string"}, "repo": {"type": "string"}}, "required": ["owner", "repo"]}),
            // A union `data`: parameter schemas are always `"type": "object"` at the top
            // (`@composio/core` 0.21.0 rejects a tool whose output_parameters are not).
            wrapped(json!({"anyOf": [{"type": "object"}, {"type": "null"}]})),
            false,
        ),
        tool(
            "GMAIL_SEND_EMAIL",
            "gmail",
            "Send an email",
            "Send an email from the user's Gmail account",
            json!({"type": "object", "properties": {
                "recipient_email": {"type": "string", "description": "The recipient"},
                "subject": {"type": "string"}, "body": {"type": "string"}},
                "required": ["recipient_email", "body"]}),
            json!({"type": "object", "properties": {"data": {"anyOf": [{"type": "object"}, {"type": "string"}]}, "successful": {"type": "boolean"}}}),
            false,
        ),
        tool(
            "GMAIL_FETCH_EMAILS",
            "gmail",
            "Fetch emails",
            "Fetch recent emails",
            json!({"type": "object", "properties": {"max_results": {"type": "integer"}}}),
            wrapped(json!({"type": "object"})),
            false,
        ),
        tool(
            "SLACK_SEND_MESSAGE",
            "slack",
            "Send a message",
            "Send a message to a Slack channel",
            json!({"type": "object", "properties": {"channel": {"type": "string"}, "text": {"type": "string"}}, "required": ["channel", "text"]}),
            wrapped(json!({"type": "object"})),
            false,
        ),
        tool(
            "HACKERNEWS_GET_FRONTPAGE",
            "hackernews",
            "Front page",
            "Get the Hacker News front page",
            json!({"type": "object", "properties": {}}),
            wrapped(json!({"type": "object", "properties": {"stories": {"type": "array"}}})),
            true,
        ),
        tool(
            "COMPOSIO_MANAGE_CONNECTIONS",
            "composio",
            "Manage connections",
            "Create authorization links for toolkits",
            json!({"type": "object", "properties": {"toolkits": {"type": "array", "items": {"type": "string"}}}, "required": ["toolkits"]}),
            wrapped(json!({"type": "object"})),
            true,
        ),
        tool(
            "COMPOSIO_WAIT_FOR_CONNECTIONS",
            "composio",
            "Wait for connections",
            "Wait until the user finished connecting",
            json!({"type": "object", "properties": {"toolkits": {"type": "array", "items": {"type": "string"}}}, "required": ["toolkits"]}),
            wrapped(json!({"type": "object"})),
            true,
        ),
    ]
}

pub(super) fn auth_config(id: &str, toolkit: &str, scheme: &str, enabled: bool, managed: bool) -> Value {
    json!({
        "id": id, "uuid": format!("uuid-{id}"), "name": format!("{toolkit} auth"), "no_of_connections": 0.0,
        "status": if enabled { "ENABLED" } else { "DISABLED" }, "tool_access_config": {},
        "toolkit": {"slug": toolkit, "logo": format!("{LOGO}/{toolkit}")},
        "type": if managed { "default" } else { "custom" }, "auth_scheme": scheme,
        "is_composio_managed": managed, "created_at": NOW, "created_by": "fake", "last_updated_at": NOW,
    })
}

/// The auth configs: `notion` has no enabled one, `slack` two.
pub fn auth_configs() -> Vec<Value> {
    vec![
        auth_config("ac_github", "github", "OAUTH2", true, false),
        auth_config("ac_gmail", "gmail", "OAUTH2", true, true),
        auth_config("ac_slack_a", "slack", "OAUTH2", true, true),
        auth_config("ac_slack_b", "slack", "OAUTH2", true, false),
        auth_config("ac_zendesk", "zendesk", "API_KEY", true, false),
        auth_config("ac_notion", "notion", "OAUTH2", false, true),
    ]
}
