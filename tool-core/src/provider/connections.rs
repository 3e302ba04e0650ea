//! The VNext surface's data: resolution for one connection, authorization flows, connection
//! fields, connection status and listings (Mastra's `ResolveToolsOpts`, `AuthorizeOpts`,
//! `ConnectionField`, `AuthFlowStatus`, `ListConnectionsOpts`, `ExistingConnection`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Pagination, Scope};

/// Per-tool overrides stored with a selected slug.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolMeta {
    /// The toolkit the slug belongs to (groups selected tools by toolkit for the fan-out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolkit: Option<String>,
    /// A description the model reads instead of the provider's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// OAuth scopes a caller's access token must grant to call the tool, added to any the
    /// provider's tool has (see [`Policy::scopes`](crate::spec::Policy::scopes)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
}

/// Whose identity a pinned connection binds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConnectionKind {
    /// The agent author's connection.
    #[default]
    Author,
    /// The end user's connection (the provider resolves the invoker itself).
    Invoker,
    /// A shared platform account.
    Platform,
}

/// What [`ToolProvider::resolve_tools_vnext`](super::ToolProvider::resolve_tools_vnext) is
/// asked: one set of slugs over one connection.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResolveToolsOptions {
    /// The slugs to materialise.
    pub tool_slugs: Vec<String>,
    /// Per-tool overrides by slug.
    pub tool_meta: BTreeMap<String, ToolMeta>,
    /// The provider-opaque connection (OAuth bucket) id.
    pub connection_id: String,
    /// The provider user bucket for author-bound connections; `None` = read the request
    /// context.
    pub author_id: Option<String>,
    /// The binding kind.
    pub kind: Option<ConnectionKind>,
    /// The toolkit the slugs belong to.
    pub toolkit: Option<String>,
    /// The connection's scope.
    pub scope: Option<Scope>,
    /// The request context.
    pub request_context: Map<String, Value>,
}

/// What [`ToolProvider::authorize`](super::ToolProvider::authorize) is asked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuthorizeOptions {
    /// The toolkit to connect.
    pub toolkit: String,
    /// An existing connection id (re-authorization) or the user bucket a new connection
    /// lands in.
    pub connection_id: String,
    /// A tool, for providers that authorize per tool.
    pub tool_name: Option<String>,
    /// Values for the toolkit's [`ConnectionField`]s.
    pub config: Map<String, Value>,
}

/// A started authorization flow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Authorization {
    /// Where the user goes to authorize.
    pub url: String,
    /// The flow's handle, for [`ToolProvider::get_auth_status`](super::ToolProvider::get_auth_status).
    pub auth_id: String,
}

/// The type of a [`ConnectionField`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldType {
    /// Text.
    String,
    /// A number.
    Number,
    /// A flag.
    Boolean,
}

/// A value the user supplies before a toolkit can be authorized (a subdomain, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionField {
    /// The key in [`AuthorizeOptions::config`].
    pub name: String,
    /// Its label.
    pub display_name: String,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its type.
    #[serde(rename = "type")]
    pub field_type: FieldType,
    /// Whether authorization needs it.
    pub required: bool,
    /// The suggested value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// Where an authorization flow stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthStatus {
    /// The user has not finished.
    Pending,
    /// Connected.
    Completed,
    /// Declined, expired or failed.
    Failed,
}

/// One connection to check with
/// [`ToolProvider::get_connection_status`](super::ToolProvider::get_connection_status).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionRef {
    /// The connection id.
    pub connection_id: String,
    /// Its toolkit.
    pub toolkit: String,
}

/// Whether a connection still works.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectionState {
    /// Still connected.
    pub connected: bool,
}

/// The default page size of connection listings.
pub(crate) const DEFAULT_CONNECTIONS_PER_PAGE: u32 = 50;
/// The largest page size of connection listings.
pub(crate) const MAX_CONNECTIONS_PER_PAGE: u32 = 200;

/// What [`ToolProvider::list_connections`](super::ToolProvider::list_connections) is asked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListConnectionsOptions {
    /// The toolkit.
    pub toolkit: String,
    /// Several user buckets (wins over `user_id`); an empty list lists nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_ids: Option<Vec<String>>,
    /// One user bucket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// The page (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// Items per page (default 50, at most 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_page: Option<u32>,
}

impl ListConnectionsOptions {
    /// The page, 1-based (0 counts as 1).
    pub fn page(&self) -> u32 {
        self.page.unwrap_or(1).max(1)
    }

    /// The page size: default 50, clamped to 1..=200.
    pub fn per_page(&self) -> u32 {
        match self.per_page {
            None | Some(0) => DEFAULT_CONNECTIONS_PER_PAGE,
            Some(n) => n.min(MAX_CONNECTIONS_PER_PAGE),
        }
    }

    /// The user buckets asked for: `user_ids` as given, else `[user_id]`, else `None` (the
    /// provider decides, and must not widen the listing to every user).
    pub fn owners(&self) -> Option<Vec<String>> {
        match (&self.user_ids, &self.user_id) {
            (Some(ids), _) => Some(ids.clone()),
            (None, Some(id)) if !id.trim().is_empty() => Some(vec![id.clone()]),
            _ => None,
        }
    }
}

/// A connection's state in a listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConnectionStatus {
    /// Usable: safe to pin.
    Active,
    /// Disabled.
    Inactive,
    /// Failed or expired.
    Failed,
    /// Authorization not finished.
    Pending,
}

/// An existing connection on the provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Connection {
    /// The provider's id for it.
    pub connection_id: String,
    /// Its state.
    pub status: ConnectionStatus,
    /// When it was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// The user bucket it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author_id: Option<String>,
}

/// A page of connections.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListConnectionsResult {
    /// The connections.
    pub items: Vec<Connection>,
    /// Where the page is (`page` always set).
    pub pagination: Pagination,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_sizes_clamp_and_owners_normalise() {
        let mut o = ListConnectionsOptions {
            toolkit: "gmail".into(),
            ..Default::default()
        };
        assert_eq!((o.page(), o.per_page(), o.owners()), (1, 50, None));
        o.per_page = Some(1000);
        o.page = Some(0);
        assert_eq!((o.page(), o.per_page()), (1, 200));
        o.user_id = Some("u1".into());
        assert_eq!(o.owners(), Some(vec!["u1".to_owned()]));
        o.user_ids = Some(vec![]);
        assert_eq!(o.owners(), Some(vec![]), "an empty list stays empty: list nothing");
    }

    #[test]
    fn wire_names_follow_the_reference() {
        let f = ConnectionField {
            name: "subdomain".into(),
            display_name: "Your Subdomain".into(),
            description: None,
            field_type: FieldType::String,
            required: true,
            default: None,
        };
        assert_eq!(
            serde_json::to_value(&f).unwrap(),
            serde_json::json!({"name": "subdomain", "displayName": "Your Subdomain", "type": "string", "required": true})
        );
        assert_eq!(serde_json::to_value(AuthStatus::Completed).unwrap(), "completed");
        assert_eq!(serde_json::to_value(ConnectionKind::Invoker).unwrap(), "invoker");
    }
}
