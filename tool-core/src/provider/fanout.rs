//! The fan-out: an agent's stored provider selection (slugs plus pinned connections per
//! toolkit) resolved into tools, one `resolve_tools_vnext` call per connection, with the
//! reference's naming: a toolkit with several connections gets its tools renamed
//! `<slug>__<LABEL>` and a routing hint in their descriptions; one connection keeps the slug.
//!
//! Generic over providers: a selected slug whose meta names no toolkit is grouped by the
//! provider's own naming convention ([`ToolProvider::toolkit_of_slug`],
//! [`ToolProvider::slug_belongs_to`]); no platform's slug rules live here.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{
    ConnectionKind, ProviderError, ProviderRegistry, ResolveToolsOptions, ResolvedTools, Scope, ToolMeta, ToolProvider, connection_owner,
};
use crate::registry::Registry;

use crate::tool::Tool;

/// One connection pinned to a toolkit (Mastra's `ToolProviderConnection`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PinnedConnection {
    /// Whose identity it binds.
    #[serde(default)]
    pub kind: ConnectionKind,
    /// Its toolkit.
    pub toolkit: String,
    /// The provider-opaque connection id.
    pub connection_id: String,
    /// Label and model-facing disambiguator: required once a toolkit has two or more
    /// connections (non-empty, at most 32 of `[A-Za-z0-9 _-]`, unique without case).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Identity bucketing (`None` = per-author).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
}

/// One provider's stored selection on an agent (Mastra's `ToolProviderConfig`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderSelection {
    /// Selected slugs and their overrides.
    #[serde(default)]
    pub tools: BTreeMap<String, ToolMeta>,
    /// Pinned connections by toolkit.
    #[serde(default)]
    pub connections: BTreeMap<String, Vec<PinnedConnection>>,
}

/// Who a fan-out runs for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FanOutOptions {
    /// The request context (its resource id is the caller's bucket).
    pub request_context: Map<String, Value>,
    /// The agent author's user id (the bucket of per-author connections).
    pub author_id: Option<String>,
    /// The bucket callers without a resource id share; `None` (the default) refuses such
    /// callers instead of sharing a tenant's connections by accident.
    pub shared_fallback: Option<String>,
}

/// A part of a selection that was left out, and why (one failure never drops its siblings).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Skipped {
    /// The provider id.
    pub provider: String,
    /// The toolkit.
    pub toolkit: Option<String>,
    /// The connection, when one was involved.
    pub connection_id: Option<String>,
    /// Why.
    pub reason: String,
}

/// What a fan-out produced.
#[derive(Default)]
pub struct FanOut {
    /// The tools by their final id.
    pub tools: ResolvedTools,
    /// What was left out.
    pub skipped: Vec<Skipped>,
}

impl std::fmt::Debug for FanOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FanOut")
            .field("tools", &self.tools.keys())
            .field("skipped", &self.skipped)
            .finish()
    }
}

/// The suffix segment for a connection label: upper case, runs of characters outside
/// `[A-Z0-9]` collapsed to one `_` (none leading or trailing), `CONN` when nothing is left,
/// and `_2`, `_3`, … appended until it is not in `used` (which it then joins).
fn connection_suffix(label: Option<&str>, used: &mut BTreeSet<String>) -> String {
    let mut base = String::new();
    let mut gap = true;
    for c in label.unwrap_or_default().chars().flat_map(char::to_uppercase) {
        if c.is_ascii_uppercase() || c.is_ascii_digit() {
            base.push(c);
            gap = false;
        } else if !gap {
            base.push('_');
            gap = true;
        }
    }
    while base.ends_with('_') {
        base.pop();
    }
    if base.is_empty() {
        base = "CONN".into();
    }
    let mut candidate = base.clone();
    let mut n = 2;
    while used.contains(&candidate) {
        candidate = format!("{base}_{n}");
        n += 1;
    }
    used.insert(candidate.clone());
    candidate
}

/// Why the labels of a toolkit's connections cannot tell them apart, if they cannot.
fn label_problem(connections: &[PinnedConnection]) -> Option<String> {
    if connections.len() < 2 {
        return None;
    }
    let mut seen = BTreeSet::new();
    for c in connections {
        let label = c.label.as_deref().map(str::trim).unwrap_or_default();
        if label.is_empty() {
            return Some(format!(
                "connection `{}` needs a label: the toolkit has {} connections",
                c.connection_id,
                connections.len()
            ));
        }
        if label.chars().count() > 32 || !label.chars().all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, ' ' | '_' | '-')) {
            return Some(format!(
                "connection `{}` has the label {label:?}: labels are at most 32 of A-Z, a-z, 0-9, space, `_` and `-`",
                c.connection_id
            ));
        }
        if !seen.insert(label.to_ascii_lowercase()) {
            return Some(format!("two connections share the label {label:?} (labels compare without case)"));
        }
    }
    None
}

/// Whether a selected slug belongs to `toolkit`: its meta names the toolkit, or (no meta
/// toolkit) the provider's naming convention says so.
fn belongs(provider: &dyn ToolProvider, slug: &str, meta: &ToolMeta, toolkit: &str) -> bool {
    match &meta.toolkit {
        Some(t) => t == toolkit,
        None => !toolkit.is_empty() && provider.slug_belongs_to(slug, toolkit),
    }
}

/// The toolkit of a selected slug that no pinned toolkit claims: its meta's, else the one the
/// provider's naming convention reads from the slug.
fn toolkit_of(provider: &dyn ToolProvider, slug: &str, meta: &ToolMeta) -> Option<String> {
    match &meta.toolkit {
        Some(t) => Some(t.clone()),
        None => provider.toolkit_of_slug(slug).filter(|t| !t.is_empty()),
    }
}

impl ProviderRegistry {
    /// Resolves stored selections (provider id → [`ProviderSelection`]) into tools, calling
    /// each provider's `resolve_tools_vnext` once per pinned connection:
    ///
    /// - a toolkit with one connection keeps its slugs; with several, every tool becomes
    ///   `<slug>__<SUFFIX>` (the label in upper case, `_` between words, `CONN` without one; `_2`, `_3` on a repeat) and its description ends
    ///   with `Routes through connection: <label>` — several connections need distinct
    ///   labels and a provider whose capabilities allow them;
    /// - the bucket handed over as `author_id`: none for `invoker`/`platform` connections,
    ///   `shared` for shared ones, the caller's resource id for caller-supplied ones (no
    ///   resource id and no `shared_fallback`: the connection is skipped, never shared), else
    ///   the author;
    /// - a selected slug belongs to the toolkit its [`ToolMeta`] names, else to the one the
    ///   provider's naming convention reads from it ([`ToolProvider::slug_belongs_to`],
    ///   [`ToolProvider::toolkit_of_slug`]);
    /// - a provider whose default scope is caller-supplied also resolves the selected
    ///   toolkits that have no pinned connection, in the caller's bucket (so a provider's
    ///   connection-management tools can open a caller's first connection).
    ///
    /// Failures are collected in [`FanOut::skipped`]; they never drop sibling connections.
    pub async fn resolve_selection(&self, selection: &BTreeMap<String, ProviderSelection>, options: &FanOutOptions) -> FanOut {
        let mut out = FanOut::default();
        for (provider_id, config) in selection {
            let Some(provider) = self.get(provider_id).cloned() else {
                out.skip(provider_id, None, None, format!("no tool provider has the id `{provider_id}`"));
                continue;
            };
            if provider.default_scope() == Scope::CallerSupplied {
                resolve_unpinned(&provider, provider_id, config, options, &mut out).await;
            }
            for (toolkit, connections) in &config.connections {
                resolve_pinned(&provider, provider_id, config, toolkit, connections, options, &mut out).await;
            }
        }
        out
    }

    /// [`resolve_selection`](Self::resolve_selection), with the tools inserted into
    /// `registry` (a tool whose id is taken is skipped, nothing replaced).
    pub async fn resolve_selection_into(
        &self,
        registry: &Registry,
        selection: &BTreeMap<String, ProviderSelection>,
        options: &FanOutOptions,
    ) -> (Vec<String>, Vec<Skipped>) {
        let FanOut { tools, mut skipped } = self.resolve_selection(selection, options).await;
        let mut inserted = Vec::new();
        for (id, tool) in tools {
            match registry.insert(tool) {
                Ok(()) => inserted.push(id),
                Err(e) => skipped.push(Skipped {
                    provider: "registry".into(),
                    toolkit: None,
                    connection_id: None,
                    reason: format!("`{id}`: {e}"),
                }),
            }
        }
        (inserted, skipped)
    }
}

impl FanOut {
    fn skip(&mut self, provider: &str, toolkit: Option<&str>, connection_id: Option<&str>, reason: String) {
        tracing::warn!(target: "tool_core::provider", provider, toolkit, connection_id, %reason, "provider tools skipped");
        self.skipped.push(Skipped {
            provider: provider.to_owned(),
            toolkit: toolkit.map(str::to_owned),
            connection_id: connection_id.map(str::to_owned),
            reason,
        });
    }

    fn add(&mut self, provider: &str, toolkit: &str, id: String, tool: Arc<dyn Tool>) {
        match self.tools.entry(id) {
            std::collections::btree_map::Entry::Vacant(slot) => {
                slot.insert(tool);
            }
            std::collections::btree_map::Entry::Occupied(taken) => {
                let reason = format!("two resolved tools are named `{}`; the first is kept", taken.key());
                self.skip(provider, Some(toolkit), None, reason);
            }
        }
    }
}

async fn resolve_unpinned(
    provider: &Arc<dyn ToolProvider>,
    provider_id: &str,
    config: &ProviderSelection,
    options: &FanOutOptions,
    out: &mut FanOut,
) {
    let mut by_toolkit: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (slug, meta) in &config.tools {
        let pinned = config
            .connections
            .iter()
            .any(|(toolkit, pins)| !pins.is_empty() && belongs(&**provider, slug, meta, toolkit));
        if pinned {
            continue;
        }
        if let Some(toolkit) = toolkit_of(&**provider, slug, meta) {
            by_toolkit.entry(toolkit).or_default().push(slug.clone());
        }
    }
    if by_toolkit.is_empty() {
        return;
    }
    let owner = match connection_owner(
        Scope::CallerSupplied,
        None,
        &options.request_context,
        options.shared_fallback.as_deref(),
    ) {
        Ok(owner) => owner,
        Err(e) => {
            for toolkit in by_toolkit.keys() {
                out.skip(provider_id, Some(toolkit.as_str()), None, e.to_string());
            }
            return;
        }
    };
    for (toolkit, slugs) in by_toolkit {
        let asked = ResolveToolsOptions {
            tool_slugs: slugs,
            tool_meta: config.tools.clone(),
            connection_id: owner.clone(),
            author_id: Some(owner.clone()),
            kind: Some(ConnectionKind::Author),
            toolkit: Some(toolkit.clone()),
            scope: Some(Scope::CallerSupplied),
            request_context: options.request_context.clone(),
        };
        match provider.resolve_tools_vnext(asked).await {
            Ok(tools) => {
                for (slug, tool) in tools {
                    let tool = scoped(tool, config.tools.get(&slug));
                    let tool = if tool.spec().id == slug { tool } else { renamed(tool, &slug, None) };
                    out.add(provider_id, &toolkit, slug, tool);
                }
            }
            Err(e) => out.skip(provider_id, Some(toolkit.as_str()), None, e.to_string()),
        }
    }
}

/// Why a toolkit's pinned connections cannot be resolved at all, if they cannot: several
/// where the provider allows one, or labels that do not tell them apart.
fn pins_problem(provider: &dyn ToolProvider, provider_id: &str, connections: &[PinnedConnection]) -> Option<String> {
    if connections.len() > 1 && !provider.capabilities().multiple_connections_per_toolkit {
        return Some(format!(
            "the {provider_id} provider allows one connection per toolkit; {} are pinned",
            connections.len()
        ));
    }
    label_problem(connections)
}

/// The user bucket handed over for one pinned connection: none for `invoker`/`platform`
/// connections, `shared` or the caller's for those scopes (an error when the caller has no
/// resource id and no shared fallback is set), else the author's.
fn pinned_bucket(connection: &PinnedConnection, options: &FanOutOptions) -> Result<Option<String>, ProviderError> {
    match (connection.kind, connection.scope) {
        (ConnectionKind::Invoker | ConnectionKind::Platform, _) => Ok(None),
        (ConnectionKind::Author, Some(scope @ (Scope::Shared | Scope::CallerSupplied))) => {
            connection_owner(scope, None, &options.request_context, options.shared_fallback.as_deref()).map(Some)
        }
        (ConnectionKind::Author, _) => Ok(options.author_id.clone()),
    }
}

async fn resolve_pinned(
    provider: &Arc<dyn ToolProvider>,
    provider_id: &str,
    config: &ProviderSelection,
    toolkit: &str,
    connections: &[PinnedConnection],
    options: &FanOutOptions,
    out: &mut FanOut,
) {
    if connections.is_empty() {
        return;
    }
    if let Some(problem) = pins_problem(&**provider, provider_id, connections) {
        out.skip(provider_id, Some(toolkit), None, problem);
        return;
    }
    let slugs: Vec<String> = config
        .tools
        .iter()
        .filter(|(slug, meta)| belongs(&**provider, slug, meta, toolkit))
        .map(|(slug, _)| slug.clone())
        .collect();
    if slugs.is_empty() {
        return;
    }
    let single = connections.len() == 1;
    let mut used = BTreeSet::new();
    for connection in connections {
        let suffix = (!single).then(|| connection_suffix(connection.label.as_deref(), &mut used));
        let author_id = match pinned_bucket(connection, options) {
            Ok(bucket) => bucket,
            Err(e) => {
                out.skip(provider_id, Some(toolkit), Some(&connection.connection_id), e.to_string());
                continue;
            }
        };
        let asked = ResolveToolsOptions {
            tool_slugs: slugs.clone(),
            tool_meta: config.tools.clone(),
            connection_id: connection.connection_id.clone(),
            author_id,
            kind: Some(connection.kind),
            toolkit: Some(toolkit.to_owned()),
            scope: connection.scope,
            request_context: options.request_context.clone(),
        };
        let tools = match provider.resolve_tools_vnext(asked).await {
            Ok(tools) => tools,
            Err(e) => {
                out.skip(provider_id, Some(toolkit), Some(&connection.connection_id), e.to_string());
                continue;
            }
        };
        for (slug, tool) in tools {
            let tool = scoped(tool, config.tools.get(&slug));
            match &suffix {
                None => {
                    let tool = if tool.spec().id == slug { tool } else { renamed(tool, &slug, None) };
                    out.add(provider_id, toolkit, slug, tool);
                }
                Some(suffix) => {
                    let id = format!("{slug}__{suffix}");
                    let hint = format!(
                        "Routes through connection: {}",
                        connection.label.as_deref().unwrap_or(&connection.connection_id)
                    );
                    out.add(provider_id, toolkit, id.clone(), renamed(tool, &id, Some(&hint)));
                }
            }
        }
    }
}

/// A tool under another id (and, with a hint, a longer description); everything else is
/// the inner tool's.
fn renamed(inner: Arc<dyn Tool>, id: &str, hint: Option<&str>) -> Arc<dyn Tool> {
    crate::tool::with_spec(inner, |spec| {
        spec.id = id.to_owned();
        if let Some(hint) = hint {
            spec.description = if spec.description.trim().is_empty() {
                hint.to_owned()
            } else {
                format!("{}\n\n{hint}", spec.description)
            };
        }
    })
}

/// The tool with the scopes its selection names ([`ToolMeta::scopes`]) added to its own.
fn scoped(tool: Arc<dyn Tool>, meta: Option<&ToolMeta>) -> Arc<dyn Tool> {
    let Some(meta) = meta.filter(|m| m.scopes.iter().any(|s| !tool.spec().policy.scopes.contains(s))) else {
        return tool;
    };
    crate::tool::with_spec(tool, |spec| {
        for scope in &meta.scopes {
            if !spec.policy.scopes.contains(scope) {
                spec.policy.scopes.push(scope.clone());
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::connection_suffix;

    #[test]
    fn connection_suffixes_are_upper_case_and_unique() {
        let mut used = BTreeSet::new();
        assert_eq!(connection_suffix(Some("Work mail"), &mut used), "WORK_MAIL");
        assert_eq!(connection_suffix(Some("work-mail"), &mut used), "WORK_MAIL_2");
        assert_eq!(connection_suffix(Some(" -- "), &mut used), "CONN");
        assert_eq!(connection_suffix(None, &mut used), "CONN_2");
    }
}
