//! The connection-management tools for chat: `COMPOSIO_MANAGE_CONNECTIONS` (authorization
//! links for the caller's toolkits) and `COMPOSIO_WAIT_FOR_CONNECTIONS` (waits, bounded and
//! cancellable, until the caller finished). They run for the same user bucket as the remote
//! tools resolved beside them, and need `composio` in the allowed toolkits.
//!
//! Owns these two tools: their inputs (typed), schemas and answers. Must not run remote tools
//! (`tools`); accounts and links come from `accounts`.

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use tool_core::provider::ProviderError;
use tool_core::{CancellationToken, DynamicTool, ErrorKind, Tool, ToolError};

use super::api::Account;
use super::status::ToolkitStatus;
use super::tools::{Binding, UserRule};
use super::{ComposioToolProvider, MANAGE_CONNECTIONS, WAIT_FOR_CONNECTIONS};

/// The most toolkits one call asks about.
const MAX_TOOLKITS_PER_CALL: usize = 20;

/// Whether `slug` names one of the connection-management tools this provider writes itself.
pub(super) fn is_meta_tool(slug: &str) -> bool {
    slug == MANAGE_CONNECTIONS || slug == WAIT_FOR_CONNECTIONS
}

/// `COMPOSIO_MANAGE_CONNECTIONS`'s input.
#[derive(Debug, Deserialize)]
struct ManageInput {
    toolkits: Vec<String>,
    #[serde(default)]
    reinitiate_all: Option<bool>,
}

/// Whether `COMPOSIO_WAIT_FOR_CONNECTIONS` waits for any toolkit or for all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum WaitMode {
    Any,
    #[default]
    All,
}

/// `COMPOSIO_WAIT_FOR_CONNECTIONS`'s input.
#[derive(Debug, Deserialize)]
struct WaitInput {
    toolkits: Vec<String>,
    #[serde(default)]
    mode: Option<WaitMode>,
    #[serde(default)]
    timeout_seconds: Option<f64>,
}

/// A tool's input, read as its type (the registry has validated it against the schema).
fn read_input<T: serde::de::DeserializeOwned>(tool: &str, input: Value) -> Result<T, ToolError> {
    serde_json::from_value(input).map_err(|e| ToolError::with_kind(ErrorKind::InvalidInput, format!("`{tool}`: {e}")))
}

/// The toolkits asked for: trimmed, lower-cased, blank and repeated ones dropped; 1 to
/// [`MAX_TOOLKITS_PER_CALL`] of them.
fn requested_toolkits(asked: Vec<String>) -> Result<Vec<String>, ToolError> {
    let mut out: Vec<String> = Vec::new();
    for s in asked.into_iter().map(|s| s.trim().to_ascii_lowercase()).filter(|s| !s.is_empty()) {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    if out.is_empty() {
        return Err(ToolError::with_kind(
            ErrorKind::InvalidInput,
            "`toolkits` must name at least one toolkit slug, such as [\"gmail\"]",
        ));
    }
    if out.len() > MAX_TOOLKITS_PER_CALL {
        return Err(ToolError::with_kind(
            ErrorKind::InvalidInput,
            format!(
                "`toolkits` names {} toolkits; ask for at most {MAX_TOOLKITS_PER_CALL} at a time",
                out.len()
            ),
        ));
    }
    Ok(out)
}

/// One of the two tools, bound to a provider and a user rule.
struct Meta {
    provider: Arc<ComposioToolProvider>,
    slug: String,
    binding: Binding,
}

impl Meta {
    fn fail(&self, e: ProviderError) -> ToolError {
        ToolError::new(format!("`{}` could not reach Composio: {e}", self.slug)).with_kind_of(ErrorKind::Execution)
    }

    async fn manage(&self, input: Value, user: String) -> Result<Value, ToolError> {
        let p = &self.provider;
        let input: ManageInput = read_input(&self.slug, input)?;
        let toolkits = requested_toolkits(input.toolkits)?;
        let allowed: Vec<String> = toolkits.iter().filter(|t| p.allow.toolkit(t)).cloned().collect();
        let accounts = if allowed.is_empty() {
            Vec::new()
        } else {
            p.accounts(std::slice::from_ref(&user), &allowed).await.map_err(|e| self.fail(e))?
        };
        let mut results = Map::new();
        let mut links = Vec::new();
        for toolkit in &toolkits {
            let active = accounts.iter().find(|a| a.toolkit_slug() == *toolkit && a.is_active());
            let result = match active {
                _ if !p.allow.toolkit(toolkit) => {
                    json!({"status": "not_allowed", "message": format!("The toolkit `{toolkit}` is not available to this agent.")})
                }
                Some(a) if input.reinitiate_all != Some(true) => json!({"status": "active", "connected_account_id": a.id,
                    "message": format!("`{toolkit}` is already connected; no action is needed.")}),
                _ => self.start_link(toolkit, &user, &mut links).await,
            };
            results.insert(toolkit.clone(), result);
        }
        let message = if links.is_empty() {
            "No new authorization is needed (see each toolkit's status).".to_owned()
        } else {
            let wait = if p.meta_allowed(WAIT_FOR_CONNECTIONS) {
                format!(" Then call `{WAIT_FOR_CONNECTIONS}` to wait until they finish.")
            } else {
                " Once they have finished, continue with the task.".to_owned()
            };
            format!(
                "Give the user these links to authorize access (each opens the app's sign-in page): {}.{wait}",
                links.join("; ")
            )
        };
        Ok(json!({"results": results, "message": message}))
    }

    /// A Connect link for one toolkit (its line joins `links`), as the toolkit's result.
    async fn start_link(&self, toolkit: &str, user: &str, links: &mut Vec<String>) -> Value {
        let p = &self.provider;
        let started = async {
            let config = p.enabled_auth_config(toolkit).await?;
            p.link(config.id.as_deref().unwrap_or_default(), user).await
        }
        .await;
        match started {
            Ok(link) => {
                let url = link.redirect_url.unwrap_or_default();
                links.push(format!("{toolkit}: {url}"));
                json!({"status": "initiated", "redirect_url": url, "connected_account_id": link.connected_account_id,
                       "expires_at": link.expires_at,
                       "message": format!("Ask the user to open {url} to connect `{toolkit}`.")})
            }
            Err(e) => json!({"status": "error", "message": format!("Could not start connecting `{toolkit}`: {e}")}),
        }
    }

    async fn wait(&self, input: Value, user: String, cancellation: CancellationToken) -> Result<Value, ToolError> {
        let p = &self.provider;
        let input: WaitInput = read_input(&self.slug, input)?;
        let toolkits = requested_toolkits(input.toolkits)?;
        let asked = input
            .timeout_seconds
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| Duration::from_secs_f64(s.min(86_400.0)));
        let limit = asked.map_or(p.wait_max, |a| a.min(p.wait_max));
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let accounts = p.accounts(std::slice::from_ref(&user), &toolkits).await.map_err(|e| self.fail(e))?;
            let statuses = toolkit_statuses(&toolkits, &accounts);
            let active = statuses.iter().filter(|(_, s)| *s == ToolkitStatus::Active).count();
            let done = match input.mode.unwrap_or_default() {
                WaitMode::Any => active > 0,
                WaitMode::All => active == toolkits.len(),
            };
            let shown: Map<String, Value> = statuses.iter().map(|(t, s)| (t.clone(), json!(s.as_str()))).collect();
            if done {
                return Ok(json!({"toolkits": shown, "connected": true, "timed_out": false,
                                  "message": "The user finished connecting; continue with the task."}));
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Ok(json!({"toolkits": shown, "connected": false, "timed_out": true,
                    "message": format!("The user has not finished connecting after {}s. Ask them to complete the authorization link, then continue (or call `{WAIT_FOR_CONNECTIONS}` again).", limit.as_secs())}));
            }
            let nap = p.poll_interval.min(deadline - now);
            tokio::select! {
                _ = cancellation.cancelled() => return Err(ToolError::aborted(format!("`{WAIT_FOR_CONNECTIONS}` was cancelled"))),
                _ = tokio::time::sleep(nap) => {}
            }
        }
    }
}

/// Each asked toolkit's status, from the user's accounts.
fn toolkit_statuses(toolkits: &[String], accounts: &[Account]) -> Vec<(String, ToolkitStatus)> {
    toolkits
        .iter()
        .map(|t| {
            let mine: Vec<&Account> = accounts.iter().filter(|a| a.toolkit_slug() == *t).collect();
            (t.clone(), ToolkitStatus::of(&mine))
        })
        .collect()
}

/// The default description and the input schema of one of the two tools.
fn description_and_schema(slug: &str) -> (&'static str, Value) {
    let toolkits = json!({"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_TOOLKITS_PER_CALL,
                          "description": "Toolkit slugs, lowercase (for example \"gmail\", \"github\")"});
    if slug == MANAGE_CONNECTIONS {
        (
            "Create authorization links so the user can connect their accounts (Gmail, GitHub, …) to this agent. Use it when a tool reports that a connection is required. Relay each returned link to the user.",
            json!({"type": "object", "properties": {
                "toolkits": toolkits,
                "reinitiate_all": {"type": "boolean", "description": "Create new links even for toolkits that are already connected"}},
                "required": ["toolkits"], "additionalProperties": false}),
        )
    } else {
        (
            "Wait until the user has finished connecting the given toolkits (after COMPOSIO_MANAGE_CONNECTIONS gave them links). Returns each toolkit's status and whether the wait timed out.",
            json!({"type": "object", "properties": {
                "toolkits": toolkits,
                "mode": {"type": "string", "enum": ["any", "all"], "default": "all", "description": "Wait for any or for all of the toolkits"},
                "timeout_seconds": {"type": "number", "minimum": 0, "description": "How long to wait at most (bounded by the provider)"}},
                "required": ["toolkits"], "additionalProperties": false}),
        )
    }
}

/// One of the two tools, running for the user `binding` names (never for a platform
/// connection, which has no user).
pub(super) fn meta_tool(
    provider: &Arc<ComposioToolProvider>,
    slug: &str,
    binding: Binding,
    description: Option<String>,
) -> Result<Arc<dyn Tool>, ProviderError> {
    let (default_description, schema) = description_and_schema(slug);
    let meta = Arc::new(Meta {
        provider: provider.clone(),
        slug: slug.to_owned(),
        binding,
    });
    let tool = DynamicTool::builder(slug, description.unwrap_or_else(|| default_description.to_owned()))
        .input_schema(schema)
        .handler(move |input, cx| {
            let meta = meta.clone();
            let user = meta
                .binding
                .user_for(&meta.provider, cx.call(), cx.raw_request_context(), &meta.slug)
                .and_then(|u| {
                    u.ok_or_else(|| {
                        ToolError::new(format!("`{}` needs a user: it cannot run for a platform connection", meta.slug))
                            .with_kind_of(ErrorKind::Execution)
                    })
                });
            let cancellation = cx.cancellation().clone();
            async move {
                let user = user?;
                if meta.slug == MANAGE_CONNECTIONS {
                    meta.manage(input, user).await
                } else {
                    meta.wait(input, user, cancellation).await
                }
            }
        })
        .map_err(|e| ProviderError::Config(e.0))?;
    Ok(tool.into_tool())
}

/// The input schema of one of the two tools.
pub(super) fn meta_schema(slug: &str) -> Option<Value> {
    let provider = Arc::new(ComposioToolProvider::new(String::new()));
    let binding = Binding {
        user: UserRule::None,
        connected_account_id: None,
    };
    meta_tool(&provider, slug, binding, None)
        .ok()
        .map(|t| t.spec().schemas.input.clone())
}
