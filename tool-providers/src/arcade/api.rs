//! Arcade's wire: the serde types of the requests sent and the answers read (only the fields
//! the provider uses; anything else is ignored, anything missing is `None`), offset paging
//! over `{items, total_count, offset, limit}` listings, and the error envelope.
//!
//! Owns every shape of Arcade's JSON. Must not decide anything: what the fields mean for
//! tools, schemas, connections and statuses is the other modules' job. `serde_json::Value`
//! stays only where Arcade's JSON is free-form (tool inputs and results, enum values, the
//! health answer passed on as details).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tool_core::provider::ProviderError;

use super::ArcadeToolProvider;
use crate::wire::{self, Scalar};

/// The largest page Arcade's listings answer.
pub(super) const MAX_LIMIT: u32 = 100;

// ----- answers ---------------------------------------------------------------------------

/// One page of a listing: `{items, total_count, offset, limit}`.
#[derive(Debug, Deserialize)]
#[serde(bound = "T: DeserializeOwned")]
pub(super) struct Page<T> {
    /// The items that read as `T` (an odd one is skipped).
    #[serde(default, deserialize_with = "wire::items")]
    pub(super) items: Vec<T>,
    /// Items in all pages, when told.
    #[serde(default)]
    pub(super) total_count: Option<u64>,
}

/// `{name, description}` of a tool's toolkit.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(super) struct ToolkitRef {
    pub(super) name: Option<String>,
    pub(super) description: Option<String>,
}

/// A tool, listed or fetched alone (`GET /v1/tools/{name}`): `{qualified_name, name,
/// description, toolkit, input: {parameters}, output: {value_schema}, requirements:
/// {authorization: {provider_id}}}`.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub(super) struct ToolDefinition {
    pub(super) qualified_name: Option<String>,
    pub(super) name: Option<String>,
    pub(super) description: Option<String>,
    pub(super) toolkit: Option<ToolkitRef>,
    pub(super) input: Option<Input>,
    pub(super) output: Option<Output>,
    pub(super) requirements: Option<Requirements>,
}

impl ToolDefinition {
    /// Its toolkit's name, when told.
    pub(super) fn toolkit_name(&self) -> Option<&str> {
        self.toolkit.as_ref().and_then(|t| t.name.as_deref())
    }

    /// `Toolkit.Tool`: the `qualified_name`, else the name under its toolkit.
    pub(super) fn qualified(&self) -> Option<String> {
        if let Some(q) = &self.qualified_name {
            return Some(q.clone());
        }
        let name = self.name.as_deref()?;
        Some(match self.toolkit_name() {
            Some(t) => format!("{t}.{name}"),
            None => name.to_owned(),
        })
    }

    /// The auth provider its authorization requires (`github`, `google`, …), when any.
    pub(super) fn auth_provider(&self) -> Option<&str> {
        self.requirements
            .as_ref()
            .and_then(|r| r.authorization.as_ref())
            .and_then(|a| a.provider_id.as_deref())
            .map(str::trim)
            .filter(|p| !p.is_empty())
    }
}

/// A tool's `input`.
#[derive(Debug, Clone, Default, Deserialize)]
pub(super) struct Input {
    #[serde(default, deserialize_with = "wire::items")]
    pub(super) parameters: Vec<Parameter>,
}

/// One input parameter: `{name, description?, required?, value_schema}`.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct Parameter {
    pub(super) name: String,
    #[serde(default)]
    pub(super) description: Option<String>,
    #[serde(default)]
    pub(super) required: Option<bool>,
    #[serde(default)]
    pub(super) value_schema: Option<ValueSchema>,
}

/// A tool's `output`: what `output.value` of an execution holds.
#[derive(Debug, Clone, Default, Deserialize)]
pub(super) struct Output {
    #[serde(default)]
    pub(super) value_schema: Option<ValueSchema>,
}

/// Arcade's type of a value: `{val_type, inner_val_type?, enum?}`, and the newer nested forms
/// (`properties`/`required_keys` of `json` values, `items` or
/// `inner_properties`/`inner_required_keys` of arrays).
#[derive(Debug, Clone, Default, Deserialize)]
pub(super) struct ValueSchema {
    #[serde(default)]
    pub(super) val_type: Option<String>,
    #[serde(default)]
    pub(super) inner_val_type: Option<String>,
    /// The allowed values (free-form JSON values).
    #[serde(default, rename = "enum")]
    pub(super) values: Option<Vec<Value>>,
    #[serde(default)]
    pub(super) items: Option<Box<ValueSchema>>,
    #[serde(default, deserialize_with = "wire::entries")]
    pub(super) properties: Option<Vec<(String, ValueSchema)>>,
    #[serde(default)]
    pub(super) required_keys: Option<Vec<String>>,
    #[serde(default, deserialize_with = "wire::entries")]
    pub(super) inner_properties: Option<Vec<(String, ValueSchema)>>,
    #[serde(default)]
    pub(super) inner_required_keys: Option<Vec<String>>,
    #[serde(default)]
    pub(super) description: Option<String>,
}

/// A tool's `requirements`.
#[derive(Debug, Clone, Default, Deserialize)]
pub(super) struct Requirements {
    #[serde(default)]
    pub(super) authorization: Option<AuthorizationRequirement>,
}

/// The authorization a tool requires.
#[derive(Debug, Clone, Default, Deserialize)]
pub(super) struct AuthorizationRequirement {
    #[serde(default)]
    pub(super) provider_id: Option<String>,
}

/// The answer of `POST /v1/tools/execute`: `{id, status, success, output}`.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Execution {
    #[serde(default)]
    pub(super) output: Option<ExecutionOutput>,
}

/// An execution's `output`: `{value?, error?, authorization?}`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct ExecutionOutput {
    /// The tool's result (free-form; the tool's output schema describes it).
    pub(super) value: Option<Value>,
    pub(super) error: Option<ExecutionError>,
    pub(super) authorization: Option<Authorization>,
}

/// Why an execution failed: `{message, kind, can_retry, retry_after_ms?,
/// additional_prompt_content?}`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct ExecutionError {
    pub(super) message: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) can_retry: Option<bool>,
    pub(super) retry_after_ms: Option<serde_json::Number>,
    pub(super) additional_prompt_content: Option<String>,
}

/// An authorization flow (`POST /v1/tools/authorize`, `GET /v1/auth/status`, an execution's
/// `output.authorization`): `{id, status, url?, user_id?}`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Authorization {
    pub(super) id: Option<String>,
    pub(super) status: Option<String>,
    pub(super) url: Option<String>,
    pub(super) user_id: Option<String>,
}

/// One user connection (`GET /v1/admin/user_connections`): `{id, connection_status,
/// provider_id, user_id, created_at?}`.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub(super) struct UserConnection {
    pub(super) id: Option<String>,
    pub(super) connection_status: Option<String>,
    pub(super) provider_id: Option<String>,
    pub(super) user_id: Option<String>,
    pub(super) created_at: Option<String>,
    pub(super) created: Option<String>,
}

/// `GET /v1/health`: `{healthy}`.
#[derive(Debug, Default, Deserialize)]
pub(super) struct HealthBody {
    #[serde(default)]
    pub(super) healthy: Option<bool>,
}

// ----- requests --------------------------------------------------------------------------

/// `POST /v1/tools/execute`.
#[derive(Debug, Serialize)]
pub(super) struct ExecuteRequest<'a> {
    pub(super) tool_name: &'a str,
    pub(super) input: &'a Value,
    pub(super) user_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) tool_version: Option<&'a str>,
}

/// `POST /v1/tools/authorize`.
#[derive(Debug, Serialize)]
pub(super) struct AuthorizeRequest<'a> {
    pub(super) tool_name: &'a str,
    pub(super) user_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) tool_version: Option<&'a str>,
}

// ----- paging ----------------------------------------------------------------------------

/// Whether an offset listing is done after a page of `got` items (offset now `offset`).
pub(super) fn last_page(got: u64, offset: u64, total: Option<u64>) -> bool {
    got == 0 || got < u64::from(MAX_LIMIT) || total.is_some_and(|t| offset >= t)
}

impl ArcadeToolProvider {
    /// One page of the tool listing (optionally of one toolkit).
    pub(super) async fn tools_page(&self, toolkit: Option<&str>, limit: u32, offset: u64) -> Result<Page<ToolDefinition>, ProviderError> {
        let mut query = vec![("limit", limit.to_string()), ("offset", offset.to_string())];
        if let Some(t) = toolkit {
            query.push(("toolkit", t.to_owned()));
        }
        self.http.get("/v1/tools", &query).await
    }

    /// Every tool (optionally of one toolkit), following offset pagination up to the page cap.
    pub(super) async fn all_tools(&self, toolkit: Option<&str>) -> Result<Vec<ToolDefinition>, ProviderError> {
        let mut items = Vec::new();
        let mut offset: u64 = 0;
        for _ in 0..self.max_pages {
            let page = self.tools_page(toolkit, MAX_LIMIT, offset).await?;
            let got = page.items.len() as u64;
            items.extend(page.items);
            offset += got;
            if last_page(got, offset, page.total_count) {
                return Ok(items);
            }
        }
        Err(self.http.transport(format!(
            "the tool listing did not end after {} pages; stopped (raise `max_pages` if the catalog is really that large)",
            self.max_pages
        )))
    }

    /// One page of user connections, filtered by auth provider and/or user. Both filter
    /// spellings are sent: `provider_id`/`user_id` (Arcade's OpenAPI and `@arcadeai/arcadejs`)
    /// and `provider[id]`/`user[id]` (`arcadepy` 1.10).
    pub(super) async fn user_connections_page(
        &self,
        provider_id: Option<&str>,
        user: Option<&str>,
        offset: u64,
    ) -> Result<Page<UserConnection>, ProviderError> {
        let mut query = Vec::new();
        if let Some(p) = provider_id {
            query.push(("provider_id", p.to_owned()));
            query.push(("provider[id]", p.to_owned()));
        }
        if let Some(u) = user {
            query.push(("user_id", u.to_owned()));
            query.push(("user[id]", u.to_owned()));
        }
        query.push(("limit", MAX_LIMIT.to_string()));
        query.push(("offset", offset.to_string()));
        self.http.get("/v1/admin/user_connections", &query).await
    }
}

// ----- errors ----------------------------------------------------------------------------

/// An Arcade error body: `{name, message}` (the message also as `msg` or `error`).
#[derive(Debug, Deserialize)]
struct ErrorBody {
    #[serde(default)]
    name: Option<Scalar>,
    #[serde(default)]
    message: Option<Scalar>,
    #[serde(default)]
    msg: Option<Scalar>,
    #[serde(default)]
    error: Option<Scalar>,
}

/// `(name, message)` of an Arcade error body, or its text.
pub(super) fn envelope(bytes: &[u8]) -> (Option<String>, String) {
    let text = |s: &Option<Scalar>| match s {
        Some(Scalar::Text(t)) => Some(t.clone()),
        _ => None,
    };
    match serde_json::from_slice::<ErrorBody>(bytes) {
        Ok(body) => {
            let message = [&body.message, &body.msg, &body.error].into_iter().find_map(text);
            (text(&body.name), message.unwrap_or_default())
        }
        Err(_) => {
            let text = String::from_utf8_lossy(bytes);
            (None, text.chars().take(300).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_envelopes_read_name_and_message() {
        assert_eq!(
            envelope(br#"{"name":"tool_authorization_required","message":"Authorization required"}"#),
            (Some("tool_authorization_required".into()), "Authorization required".into())
        );
        assert_eq!(envelope(br#"{"msg":"m","error":{"x":1}}"#), (None, "m".into()));
        assert_eq!(envelope(br#"{"error":"e"}"#), (None, "e".into()));
        assert_eq!(envelope(b"<html>oops"), (None, "<html>oops".into()));
    }

    #[test]
    fn definitions_tolerate_missing_and_extra_fields() {
        let def: ToolDefinition = serde_json::from_value(serde_json::json!({
            "name": "Add", "toolkit": {"name": "Math", "version": "1"}, "extra": true,
            "input": {"parameters": [{"name": "a", "value_schema": {"val_type": "integer", "enum": null}}, {"no": "name"}]},
            "requirements": {"authorization": {"provider_id": " github "}, "secrets": null}
        }))
        .unwrap();
        assert_eq!(def.qualified().as_deref(), Some("Math.Add"));
        assert_eq!(
            def.input.as_ref().unwrap().parameters.len(),
            1,
            "a parameter without a name is skipped"
        );
        assert_eq!(def.auth_provider(), Some("github"));
    }
}
