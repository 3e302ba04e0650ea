//! Composio's wire: the serde types of the requests sent and the answers read (only the
//! fields the provider uses; anything else is ignored, anything missing is `None`), cursor
//! paging over `{items, next_cursor, total_items}` listings, and the error envelope.
//!
//! Owns every shape of Composio's JSON. Must not decide anything: what the fields mean for
//! tools, accounts and statuses is the other modules' job. `serde_json::Value` stays only
//! where Composio's JSON is free-form (a tool's JSON Schemas, its arguments and results).

use std::collections::BTreeSet;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tool_core::provider::ProviderError;

use super::ComposioToolProvider;
use crate::wire::{self, Scalar};

/// Items asked for per page when a listing is walked to its end.
const LIST_LIMIT: u32 = 100;

// ----- answers ---------------------------------------------------------------------------

/// One page of a listing: `{items, next_cursor, total_pages, current_page, total_items}`.
#[derive(Debug, Deserialize)]
#[serde(bound = "T: DeserializeOwned")]
pub(super) struct Page<T> {
    /// The items that read as `T` (an odd one is skipped).
    #[serde(default, deserialize_with = "wire::items")]
    pub(super) items: Vec<T>,
    /// The next page's cursor (none, or empty: the last page).
    #[serde(default)]
    next_cursor: Option<String>,
    /// Items in all pages (Composio writes it as a float).
    #[serde(default)]
    total_items: Option<f64>,
}

impl<T> Page<T> {
    /// The next page's cursor, when there is one.
    pub(super) fn next(&self) -> Option<&str> {
        self.next_cursor.as_deref().filter(|c| !c.is_empty())
    }

    /// Items in all pages, when told.
    pub(super) fn total(&self) -> Option<u64> {
        self.total_items.filter(|t| *t >= 0.0).map(|t| t as u64)
    }

    /// An empty last page that still tells the total.
    fn past_the_end(total: Option<u64>) -> Self {
        Page {
            items: Vec::new(),
            next_cursor: None,
            total_items: total.map(|t| t as f64),
        }
    }
}

/// `{slug}` of a toolkit, as tools, auth configs and accounts name theirs.
#[derive(Debug, Clone, Default, Deserialize)]
pub(super) struct ToolkitRef {
    #[serde(default)]
    pub(super) slug: Option<String>,
}

/// A listed toolkit: `{slug, name, meta: {description, logo}}`.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
pub(super) struct Toolkit {
    pub(super) slug: Option<String>,
    pub(super) name: Option<String>,
    pub(super) meta: Option<ToolkitMeta>,
}

/// A toolkit's `meta`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct ToolkitMeta {
    pub(super) description: Option<String>,
    pub(super) logo: Option<String>,
}

/// A tool, listed or fetched alone (`GET /tools/{slug}`): `{slug, name, description,
/// toolkit: {slug}, input_parameters, output_parameters, version}`.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub(super) struct Tool {
    pub(super) slug: Option<String>,
    pub(super) name: Option<String>,
    pub(super) description: Option<String>,
    pub(super) toolkit: Option<ToolkitRef>,
    /// The input JSON Schema (free-form).
    pub(super) input_parameters: Option<Value>,
    /// The output JSON Schema (free-form; usually the `{data, error, successful}` envelope).
    pub(super) output_parameters: Option<Value>,
    pub(super) version: Option<String>,
}

impl Tool {
    /// Its toolkit's slug (empty when not told).
    pub(super) fn toolkit_slug(&self) -> &str {
        self.toolkit.as_ref().and_then(|t| t.slug.as_deref()).unwrap_or_default()
    }
}

/// The answer of `POST /tools/execute/{SLUG}`: `{data, error, successful, log_id}`.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
pub(super) struct Execution {
    /// The tool's result (free-form).
    pub(super) data: Value,
    /// Why it failed: usually text, sometimes an object (free-form).
    pub(super) error: Value,
    pub(super) successful: Option<bool>,
    pub(super) log_id: Option<String>,
}

/// An auth config: `{id, status, toolkit: {slug}, auth_scheme, is_composio_managed}`.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub(super) struct AuthConfig {
    pub(super) id: Option<String>,
    pub(super) status: Option<String>,
    pub(super) toolkit: Option<ToolkitRef>,
    pub(super) auth_scheme: Option<String>,
    pub(super) is_composio_managed: Option<bool>,
}

/// A connected account: `{id, status, is_disabled, toolkit: {slug}, user_id, created_at}`.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub(super) struct Account {
    pub(super) id: Option<String>,
    pub(super) status: Option<String>,
    pub(super) is_disabled: Option<bool>,
    pub(super) toolkit: Option<ToolkitRef>,
    pub(super) user_id: Option<String>,
    pub(super) created_at: Option<String>,
}

impl Account {
    /// Its toolkit's slug, lower-cased (empty when not told).
    pub(super) fn toolkit_slug(&self) -> String {
        self.toolkit
            .as_ref()
            .and_then(|t| t.slug.as_deref())
            .unwrap_or_default()
            .to_ascii_lowercase()
    }

    /// Whether it belongs to one of `users` (an account that names no user is not excluded:
    /// the listing was asked for these users).
    pub(super) fn owned_by_any(&self, users: &[String]) -> bool {
        self.user_id.as_deref().is_none_or(|u| users.iter().any(|x| x == u))
    }
}

/// The answer of `POST /connected_accounts/link`: `{redirect_url, connected_account_id,
/// expires_at, link_token}`.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
pub(super) struct Link {
    pub(super) redirect_url: Option<String>,
    pub(super) connected_account_id: Option<String>,
    pub(super) expires_at: Option<String>,
}

/// A started connection (`POST /connected_accounts`, `.../refresh`): `{id, redirect_url}`, the
/// URL also as `redirect_uri` or in `connectionData.val`.
#[derive(Debug, Default, Deserialize)]
pub(super) struct NewConnection {
    #[serde(default)]
    pub(super) id: Option<String>,
    #[serde(default)]
    redirect_url: Option<String>,
    #[serde(default)]
    redirect_uri: Option<String>,
    #[serde(default, rename = "connectionData")]
    connection_data: Option<ConnectionData>,
}

/// `connectionData` of a started connection.
#[derive(Debug, Default, Deserialize)]
struct ConnectionData {
    #[serde(default)]
    val: Option<ConnectionDataVal>,
}

/// `connectionData.val`: the redirect URL in either spelling.
#[derive(Debug, Default, Deserialize)]
struct ConnectionDataVal {
    #[serde(default, rename = "redirectUrl")]
    redirect_url_camel: Option<String>,
    #[serde(default)]
    redirect_url: Option<String>,
}

impl From<Link> for NewConnection {
    /// A Connect link as a started connection: its account and URL.
    fn from(link: Link) -> Self {
        NewConnection {
            id: link.connected_account_id,
            redirect_url: link.redirect_url,
            ..NewConnection::default()
        }
    }
}

impl NewConnection {
    /// Where the user goes to authorize (the first non-empty spelling).
    pub(super) fn redirect(&self) -> Option<String> {
        let val = self.connection_data.as_ref().and_then(|d| d.val.as_ref());
        [
            self.redirect_url.as_ref(),
            self.redirect_uri.as_ref(),
            val.and_then(|v| v.redirect_url_camel.as_ref()),
            val.and_then(|v| v.redirect_url.as_ref()),
        ]
        .into_iter()
        .flatten()
        .find(|s| !s.is_empty())
        .cloned()
    }
}

/// `GET /toolkits/{slug}`: the part that says what connecting asks for.
#[derive(Debug, Deserialize)]
pub(super) struct ToolkitDetail {
    #[serde(default, deserialize_with = "wire::items")]
    pub(super) auth_config_details: Vec<AuthMode>,
}

/// One auth mode of a toolkit: `{mode, fields: {connected_account_initiation: {required,
/// optional}}}`.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
pub(super) struct AuthMode {
    pub(super) mode: Option<String>,
    pub(super) fields: Option<AuthModeFields>,
}

/// The fields of an auth mode.
#[derive(Debug, Deserialize)]
pub(super) struct AuthModeFields {
    #[serde(default)]
    pub(super) connected_account_initiation: Option<InitiationFields>,
}

/// What a connection's initiation asks for.
#[derive(Debug, Deserialize)]
pub(super) struct InitiationFields {
    #[serde(default, deserialize_with = "wire::items")]
    pub(super) required: Vec<Field>,
    #[serde(default, deserialize_with = "wire::items")]
    pub(super) optional: Vec<Field>,
}

/// One field: `{name, displayName, description, type, required, default}`.
#[derive(Debug, Deserialize)]
pub(super) struct Field {
    pub(super) name: String,
    #[serde(default, rename = "displayName")]
    pub(super) display_name: Option<String>,
    #[serde(default)]
    pub(super) description: Option<String>,
    #[serde(default, rename = "type")]
    pub(super) field_type: Option<String>,
    #[serde(default)]
    pub(super) required: Option<bool>,
    #[serde(default)]
    pub(super) default: Option<Scalar>,
}

// ----- requests --------------------------------------------------------------------------

/// `POST /tools/execute/{SLUG}`.
#[derive(Debug, Serialize)]
pub(super) struct ExecuteRequest<'a> {
    pub(super) arguments: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) user_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) connected_account_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) version: Option<&'a str>,
}

/// `POST /connected_accounts/link`.
#[derive(Debug, Serialize)]
pub(super) struct LinkRequest<'a> {
    pub(super) auth_config_id: &'a str,
    pub(super) user_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) callback_url: Option<&'a str>,
}

/// `POST /connected_accounts/{id}/refresh`.
#[derive(Debug, Serialize)]
pub(super) struct RefreshRequest<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) redirect_url: Option<&'a str>,
}

/// `POST /connected_accounts`: `{auth_config: {id}, connection: {user_id, state?,
/// callback_url?}}`.
#[derive(Debug, Serialize)]
pub(super) struct CreateAccountRequest<'a> {
    pub(super) auth_config: IdRef<'a>,
    pub(super) connection: ConnectionRequest<'a>,
}

/// `{id}`.
#[derive(Debug, Serialize)]
pub(super) struct IdRef<'a> {
    pub(super) id: &'a str,
}

/// The `connection` of a new connected account.
#[derive(Debug, Serialize)]
pub(super) struct ConnectionRequest<'a> {
    pub(super) user_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) state: Option<ConnectionStateRequest<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) callback_url: Option<&'a str>,
}

/// The initial state of a new connected account: the auth scheme and the user's values.
#[derive(Debug, Serialize)]
pub(super) struct ConnectionStateRequest<'a> {
    #[serde(rename = "authScheme")]
    pub(super) auth_scheme: &'a str,
    /// The toolkit's connection fields as the user filled them in (free-form), plus `status`.
    pub(super) val: Map<String, Value>,
}

// ----- paging ----------------------------------------------------------------------------

impl ComposioToolProvider {
    /// One page of `limit` items after `cursor`.
    pub(super) async fn page<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
        limit: u32,
        cursor: Option<&str>,
    ) -> Result<Page<T>, ProviderError> {
        let mut q: Vec<(&str, String)> = query.to_vec();
        q.push(("limit", limit.to_string()));
        if let Some(c) = cursor {
            q.push(("cursor", c.to_owned()));
        }
        self.http.get(&self.path(path), &q).await
    }

    /// Every item of a listing, following `next_cursor` up to the page cap.
    pub(super) async fn all<T: DeserializeOwned>(&self, path: &str, query: &[(&str, String)]) -> Result<Vec<T>, ProviderError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = BTreeSet::new();
        for _ in 0..self.max_pages {
            let page: Page<T> = self.page(path, query, LIST_LIMIT, cursor.as_deref()).await?;
            let next = page.next().map(str::to_owned);
            items.extend(page.items);
            match next {
                Some(next) if seen.insert(next.clone()) => cursor = Some(next),
                Some(_) => return Err(self.http.transport(format!("the listing of {path} repeated a cursor; stopped"))),
                None => return Ok(items),
            }
        }
        Err(self.http.transport(format!(
            "the listing of {path} did not end after {} pages; stopped (raise `max_pages` if it is really that large)",
            self.max_pages
        )))
    }

    /// Page `page` (1-based) of `per_page` items, reached by walking the cursors.
    pub(super) async fn nth_page<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
        page: u32,
        per_page: u32,
    ) -> Result<Page<T>, ProviderError> {
        if page as usize > self.max_pages {
            return Err(ProviderError::Config(format!(
                "page {page} is beyond this provider's page cap ({}); raise `max_pages` to reach it",
                self.max_pages
            )));
        }
        let mut cursor: Option<String> = None;
        for _ in 1..page {
            let skipped: Page<serde::de::IgnoredAny> = self.page(path, query, per_page, cursor.as_deref()).await?;
            match skipped.next() {
                Some(next) => cursor = Some(next.to_owned()),
                None => return Ok(Page::past_the_end(skipped.total())),
            }
        }
        self.page(path, query, per_page, cursor.as_deref()).await
    }
}

// ----- errors ----------------------------------------------------------------------------

/// A Composio error body: `{error: {message, code, slug?, status, request_id?,
/// suggested_fix?}}`, `{error: "text"}`, or the fields at the top.
#[derive(Debug, Deserialize)]
struct ErrorBody {
    #[serde(default)]
    error: Option<ErrorField>,
    #[serde(flatten)]
    top: ErrorDetail,
}

/// What `error` holds.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ErrorField {
    Detail(ErrorDetail),
    Text(String),
    Other(serde::de::IgnoredAny),
}

/// The fields of an error.
#[derive(Debug, Default, Deserialize)]
struct ErrorDetail {
    #[serde(default)]
    slug: Option<Scalar>,
    #[serde(default)]
    code: Option<Scalar>,
    #[serde(default)]
    name: Option<Scalar>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    suggested_fix: Option<String>,
}

/// `(code, message)` of a Composio error body (the slug wins over the numeric code; the
/// suggested fix is appended to the message), or its text.
pub(super) fn envelope(bytes: &[u8]) -> (Option<String>, String) {
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).chars().take(300).collect::<String>();
    let Ok(body) = serde_json::from_slice::<ErrorBody>(bytes) else {
        return (None, text(bytes));
    };
    let e = match body.error {
        Some(ErrorField::Detail(e)) => e,
        Some(ErrorField::Text(s)) => return (None, s),
        Some(ErrorField::Other(_)) | None => body.top,
    };
    let code = [&e.slug, &e.code, &e.name].into_iter().find_map(|c| match c {
        Some(Scalar::Text(s)) if !s.is_empty() => Some(s.clone()),
        Some(Scalar::Number(n)) => Some(n.to_string()),
        _ => None,
    });
    let mut message = e.message.unwrap_or_default();
    if let Some(fix) = e.suggested_fix.filter(|f| !f.trim().is_empty()) {
        message = if message.is_empty() { fix } else { format!("{message} ({fix})") };
    }
    if message.is_empty() && code.is_none() {
        return (None, text(bytes));
    }
    (code, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_envelopes_read_slug_code_and_suggested_fix() {
        let body = br#"{"error":{"message":"No connected account found","code":1803,"status":400,"request_id":"r","suggested_fix":""}}"#;
        assert_eq!(envelope(body), (Some("1803".into()), "No connected account found".into()));
        let body =
            br#"{"error":{"message":"Bad","code":600,"slug":"ConnectedAccount_BadRequest","status":400,"suggested_fix":"Use link"}}"#;
        assert_eq!(
            envelope(body),
            (Some("ConnectedAccount_BadRequest".into()), "Bad (Use link)".into())
        );
        assert_eq!(envelope(b"<html>oops"), (None, "<html>oops".into()));
        assert_eq!(envelope(br#"{"error":"plain"}"#), (None, "plain".into()));
        assert_eq!(envelope(br#"{"message":"top","code":"E1"}"#), (Some("E1".into()), "top".into()));
    }

    #[test]
    fn pages_tolerate_odd_items_and_missing_fields() {
        let page: Page<Account> =
            serde_json::from_value(serde_json::json!({"items": [{"id": "ca_1", "extra": 1}, 7, {"id": 5}], "total_items": 3.0})).unwrap();
        assert_eq!(page.items.len(), 1, "an item of another shape is skipped");
        assert_eq!((page.next(), page.total()), (None, Some(3)));
        let empty: Page<Account> = serde_json::from_value(serde_json::json!({"items": null, "next_cursor": ""})).unwrap();
        assert!(empty.items.is_empty() && empty.next().is_none());
        assert!(serde_json::from_value::<Page<Account>>(serde_json::json!({"items": "no"})).is_err());
        let started: NewConnection =
            serde_json::from_value(serde_json::json!({"id": "ca_1", "connectionData": {"val": {"redirectUrl": "https://x"}}})).unwrap();
        assert_eq!(started.redirect().as_deref(), Some("https://x"));
    }
}
