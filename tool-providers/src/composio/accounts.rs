//! Auth configs and connected accounts: starting and following authorizations, the fields a
//! connection asks for, connection status and listings, revocation, and the owner check of
//! pinned accounts (each account's owner looked up once and remembered).
//!
//! Owns what the provider asks Composio about accounts. Must not build tools or decide who a
//! call runs as (`tools`), nor map statuses (`status`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::json;
use tool_core::provider::{
    AuthStatus, Authorization, AuthorizeOptions, Connection, ConnectionField, ConnectionRef, ConnectionState, FieldType,
    ListConnectionsOptions, ListConnectionsResult, Pagination, ProviderError,
};

use super::api::{
    Account, AuthConfig, ConnectionRequest, ConnectionStateRequest, CreateAccountRequest, Field, IdRef, Link, LinkRequest, NewConnection,
    RefreshRequest, ToolkitDetail,
};
use super::{ComposioToolProvider, SHARED_USER_ID};
use crate::http::encode_segment;

/// Accounts remembered in [`ComposioToolProvider::accounts_seen`] before it starts over.
const ACCOUNTS_SEEN_MAX: usize = 4096;

/// The auth schemes whose Composio-managed apps connect through a Connect link.
const REDIRECT_SCHEMES: [&str; 3] = ["OAUTH2", "OAUTH1", "DCR_OAUTH"];

/// Who a connected account belongs to.
#[derive(Debug, Clone)]
pub(super) struct AccountFacts {
    user_id: String,
    toolkit: String,
}

impl ComposioToolProvider {
    /// The one enabled auth config of a toolkit.
    pub(super) async fn enabled_auth_config(&self, toolkit: &str) -> Result<AuthConfig, ProviderError> {
        let toolkit = toolkit.to_ascii_lowercase();
        let configs: Vec<AuthConfig> = self.all("/auth_configs", &[("toolkit_slug", toolkit.clone())]).await?;
        let mut enabled: Vec<AuthConfig> = configs
            .into_iter()
            .filter(|c| c.status.as_deref() == Some("ENABLED"))
            .filter(|c| {
                c.toolkit
                    .as_ref()
                    .and_then(|t| t.slug.as_deref())
                    .is_none_or(|s| s.eq_ignore_ascii_case(&toolkit))
            })
            .collect();
        match enabled.len() {
            1 => Ok(enabled.remove(0)),
            0 => Err(ProviderError::Config(format!(
                "Composio has no enabled auth config for the toolkit `{toolkit}`; create or enable one in the Composio dashboard (Auth Configs)"
            ))),
            n => {
                let ids: Vec<&str> = enabled.iter().filter_map(|c| c.id.as_deref()).collect();
                Err(ProviderError::Config(format!(
                    "Composio has {n} enabled auth configs for the toolkit `{toolkit}` ({}); exactly one must be enabled, so disable the others",
                    ids.join(", ")
                )))
            }
        }
    }

    fn account_path(&self, id: &str) -> String {
        self.path(&format!("/connected_accounts/{}", encode_segment(id)))
    }

    /// A connected account, `None` when it is gone.
    pub(super) async fn account(&self, id: &str) -> Result<Option<Account>, ProviderError> {
        self.http.get_or_absent(&self.account_path(id)).await
    }

    /// The owner and toolkit of a connected account (`None`: no such account).
    async fn account_facts(&self, id: &str) -> Result<Option<AccountFacts>, ProviderError> {
        let known = self.accounts_seen.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned();
        if known.is_some() {
            return Ok(known);
        }
        let Some(account) = self.account(id).await? else {
            return Ok(None);
        };
        let facts = AccountFacts {
            toolkit: account.toolkit_slug(),
            user_id: account.user_id.unwrap_or_default(),
        };
        let mut all = self.accounts_seen.lock().unwrap_or_else(|e| e.into_inner());
        if all.len() >= ACCOUNTS_SEEN_MAX {
            all.clear();
        }
        all.insert(id.to_owned(), facts.clone());
        Ok(Some(facts))
    }

    /// Why the pinned connected account `id` may not act for `user` on `toolkit` (empty: any
    /// toolkit), if it may not. Tenant isolation does not rest on the platform's own check: a
    /// pinned account of another user is refused before anything runs with it.
    pub(super) async fn pinned_account_refusal(&self, id: &str, user: &str, toolkit: &str) -> Result<Option<String>, ProviderError> {
        let toolkit = toolkit.trim().to_ascii_lowercase();
        Ok(match self.account_facts(id).await? {
            None => Some(format!("the connected account `{id}` does not exist")),
            Some(f) if f.user_id != user => Some(format!("the connected account `{id}` belongs to another user")),
            Some(f) if !toolkit.is_empty() && !f.toolkit.is_empty() && f.toolkit != toolkit => Some(format!(
                "the connected account `{id}` belongs to the toolkit `{}`, not `{toolkit}`",
                f.toolkit
            )),
            Some(_) => None,
        })
    }

    /// Every connected account of these users and toolkits (bounded).
    pub(super) async fn accounts(&self, users: &[String], toolkits: &[String]) -> Result<Vec<Account>, ProviderError> {
        let mut query = vec![("user_ids", users.join(","))];
        if !toolkits.is_empty() {
            query.push(("toolkit_slugs", toolkits.join(",")));
        }
        let all: Vec<Account> = self.all("/connected_accounts", &query).await?;
        // Never trust a listing to have applied the owner filter.
        Ok(all.into_iter().filter(|a| a.owned_by_any(users)).collect())
    }

    /// Starts a Composio Connect link for `user` on the toolkit's enabled auth config.
    pub(super) async fn link(&self, auth_config_id: &str, user: &str) -> Result<Link, ProviderError> {
        let body = LinkRequest {
            auth_config_id,
            user_id: user,
            callback_url: self.callback_url.as_deref(),
        };
        self.http.post(&self.path("/connected_accounts/link"), &body).await
    }

    /// The user buckets a listing without owners covers.
    fn default_owner(&self) -> Result<String, ProviderError> {
        let configured = self.user_id.as_deref().map(str::trim).filter(|s| !s.is_empty());
        match configured {
            Some(u) => Ok(u.to_owned()),
            None if self.allow_shared_user => Ok(SHARED_USER_ID.to_owned()),
            None => Err(ProviderError::Config(
                "listing Composio connections needs a user id: pass `user_id`/`user_ids`, or configure the provider's `user_id` (every user's connections are never listed)".into(),
            )),
        }
    }

    /// [`ToolProvider::authorize`](tool_core::provider::ToolProvider::authorize): re-authorizes
    /// an existing connected account (`ca_…`, keeping its id), else starts a connection for the
    /// user bucket `connection_id`.
    pub(super) async fn start_authorization(&self, options: AuthorizeOptions) -> Result<Authorization, ProviderError> {
        let toolkit = options.toolkit.trim().to_ascii_lowercase();
        if !self.allow.toolkit(&toolkit) {
            return Err(self.not_allowed(&toolkit));
        }
        let connection = options.connection_id.trim().to_owned();
        if connection.is_empty() {
            return Err(ProviderError::Config(
                "authorize needs `connection_id`: the user bucket the connection belongs to (or an existing connected account to re-authorize)".into(),
            ));
        }
        if connection.starts_with("ca_")
            && let Some(account) = self.account(&connection).await?
        {
            return self.reauthorize(&connection, &account, &toolkit).await;
        }
        let out = self.new_connection(&toolkit, &connection, &options).await?;
        let auth_id = out
            .id
            .clone()
            .ok_or_else(|| self.http.transport("Composio answered the new connection without an `id`".into()))?;
        Ok(Authorization {
            url: out.redirect().unwrap_or_default(),
            auth_id,
        })
    }

    /// Re-authorizing an existing connected account keeps its id.
    async fn reauthorize(&self, id: &str, account: &Account, toolkit: &str) -> Result<Authorization, ProviderError> {
        let owner_toolkit = account.toolkit_slug();
        if !owner_toolkit.is_empty() && owner_toolkit != toolkit {
            return Err(ProviderError::Config(format!(
                "the connected account `{id}` belongs to the toolkit `{owner_toolkit}`, not `{toolkit}`"
            )));
        }
        let body = RefreshRequest {
            redirect_url: self.callback_url.as_deref(),
        };
        let path = self.path(&format!("/connected_accounts/{}/refresh", encode_segment(id)));
        let out: NewConnection = self.http.post(&path, &body).await?;
        Ok(Authorization {
            url: out.redirect().unwrap_or_default(),
            auth_id: out.id.clone().unwrap_or_else(|| id.to_owned()),
        })
    }

    /// A new connected account for `user` on the toolkit's enabled auth config: a Connect link
    /// for Composio-managed OAuth apps (Composio retired `POST /connected_accounts` for them),
    /// else `POST /connected_accounts` with the user's connection fields in its state.
    async fn new_connection(&self, toolkit: &str, user: &str, options: &AuthorizeOptions) -> Result<NewConnection, ProviderError> {
        let config = self.enabled_auth_config(toolkit).await?;
        let config_id = config.id.as_deref().unwrap_or_default();
        let scheme = config.auth_scheme.as_deref().unwrap_or_default();
        let managed = config.is_composio_managed.unwrap_or(false);
        if options.config.is_empty() && managed && REDIRECT_SCHEMES.contains(&scheme) {
            let link = self.link(config_id, user).await?;
            return Ok(NewConnection::from(link));
        }
        let state = (!options.config.is_empty()).then(|| {
            let mut val = options.config.clone();
            val.insert("status".into(), json!("INITIALIZING"));
            ConnectionStateRequest { auth_scheme: scheme, val }
        });
        let body = CreateAccountRequest {
            auth_config: IdRef { id: config_id },
            connection: ConnectionRequest {
                user_id: user,
                state,
                callback_url: self.callback_url.as_deref(),
            },
        };
        self.http.post(&self.path("/connected_accounts"), &body).await
    }

    /// [`ToolProvider::list_connection_fields`](tool_core::provider::ToolProvider::list_connection_fields):
    /// what the enabled auth config's scheme asks for when a connection starts.
    pub(super) async fn connection_fields(&self, toolkit: &str) -> Result<Vec<ConnectionField>, ProviderError> {
        if !self.allow.toolkit(toolkit) {
            return Err(self.not_allowed(toolkit));
        }
        let config = self.enabled_auth_config(toolkit).await?;
        let scheme = config.auth_scheme.as_deref().unwrap_or_default();
        let path = self.path(&format!("/toolkits/{}", encode_segment(toolkit)));
        let detail: ToolkitDetail = self.http.get(&path, &[]).await?;
        let Some(mode) = detail
            .auth_config_details
            .into_iter()
            .find(|d| d.mode.as_deref().is_some_and(|m| m.eq_ignore_ascii_case(scheme)))
        else {
            return Ok(Vec::new());
        };
        let Some(initiation) = mode.fields.and_then(|f| f.connected_account_initiation) else {
            return Ok(Vec::new());
        };
        let required = initiation.required.into_iter().map(|f| connection_field(f, true));
        let optional = initiation.optional.into_iter().map(|f| connection_field(f, false));
        Ok(required.chain(optional).collect())
    }

    /// [`ToolProvider::get_auth_status`](tool_core::provider::ToolProvider::get_auth_status):
    /// the status of the connected account the flow made (gone: failed).
    pub(super) async fn auth_status(&self, id: &str) -> Result<AuthStatus, ProviderError> {
        if id.is_empty() {
            return Ok(AuthStatus::Failed);
        }
        Ok(match self.account(id).await? {
            Some(account) => account.auth_status(),
            None => AuthStatus::Failed,
        })
    }

    /// [`ToolProvider::get_connection_status`](tool_core::provider::ToolProvider::get_connection_status):
    /// one listing for every asked id; connected when active and of the asked toolkit.
    pub(super) async fn connection_states(&self, items: Vec<ConnectionRef>) -> Result<BTreeMap<String, ConnectionState>, ProviderError> {
        let mut out: BTreeMap<String, ConnectionState> = items
            .iter()
            .map(|i| (i.connection_id.clone(), ConnectionState { connected: false }))
            .collect();
        let ids: BTreeSet<&str> = items
            .iter()
            .map(|i| i.connection_id.as_str())
            .filter(|s| !s.trim().is_empty())
            .collect();
        if ids.is_empty() {
            return Ok(out);
        }
        let toolkits: BTreeSet<String> = items.iter().map(|i| i.toolkit.to_ascii_lowercase()).collect();
        let query = vec![
            ("connected_account_ids", ids.iter().copied().collect::<Vec<_>>().join(",")),
            ("toolkit_slugs", toolkits.iter().cloned().collect::<Vec<_>>().join(",")),
        ];
        let accounts: Vec<Account> = self.all("/connected_accounts", &query).await?;
        for item in &items {
            let found = accounts.iter().find(|a| a.id.as_deref() == Some(item.connection_id.as_str()));
            let connected = found.is_some_and(|a| a.is_active() && a.toolkit_slug() == item.toolkit.to_ascii_lowercase());
            out.insert(item.connection_id.clone(), ConnectionState { connected });
        }
        Ok(out)
    }

    /// [`ToolProvider::list_connections`](tool_core::provider::ToolProvider::list_connections):
    /// one page of the owners' accounts of a toolkit (never every user's).
    pub(super) async fn connections(&self, options: ListConnectionsOptions) -> Result<ListConnectionsResult, ProviderError> {
        let (page, per_page) = (options.page(), options.per_page());
        let pagination = |total, has_more| Pagination {
            total,
            page: Some(page),
            per_page: Some(per_page),
            has_more,
        };
        let empty = ListConnectionsResult {
            items: Vec::new(),
            pagination: pagination(Some(0), false),
        };
        let toolkit = options.toolkit.trim().to_ascii_lowercase();
        if !toolkit.is_empty() && !self.allow.toolkit(&toolkit) {
            return Ok(empty);
        }
        let owners: Vec<String> = match options.owners() {
            Some(list) => list.into_iter().map(|u| u.trim().to_owned()).filter(|u| !u.is_empty()).collect(),
            None => vec![self.default_owner()?],
        };
        if owners.is_empty() {
            return Ok(empty);
        }
        let mut query = vec![("user_ids", owners.join(","))];
        if !toolkit.is_empty() {
            query.push(("toolkit_slugs", toolkit.clone()));
        }
        let got = self.nth_page::<Account>("/connected_accounts", &query, page, per_page).await?;
        let pagination = pagination(got.total(), got.next().is_some());
        let items = got
            .items
            .into_iter()
            .filter(|a| a.owned_by_any(&owners))
            .filter(|a| toolkit.is_empty() || a.toolkit_slug() == toolkit)
            .filter_map(|a| {
                Some(Connection {
                    status: a.connection_status(),
                    connection_id: a.id?,
                    created_at: a.created_at,
                    author_id: a.user_id,
                })
            })
            .collect();
        Ok(ListConnectionsResult { items, pagination })
    }

    /// [`ToolProvider::revoke_connection`](tool_core::provider::ToolProvider::revoke_connection):
    /// deletes a connected account (already gone counts as revoked).
    pub(super) async fn revoke(&self, id: &str) -> Result<(), ProviderError> {
        if id.is_empty() {
            return Err(ProviderError::Config("revoke_connection needs a connected account id".into()));
        }
        self.http.delete_or_absent(&self.account_path(id)).await
    }
}

/// A toolkit's connection field as ours (`required` when the field does not say).
fn connection_field(f: Field, required: bool) -> ConnectionField {
    ConnectionField {
        display_name: f.display_name.unwrap_or_else(|| f.name.clone()),
        description: f.description.filter(|d| !d.is_empty()),
        field_type: field_type(f.field_type.as_deref().unwrap_or("string")),
        required: f.required.unwrap_or(required),
        default: f.default.and_then(|d| d.as_text()),
        name: f.name,
    }
}

/// A free-form field type name coerced: integer-ish and float-ish names are numbers,
/// `bool`/`boolean` a flag, everything else text.
fn field_type(name: &str) -> FieldType {
    match name.trim().to_ascii_lowercase().as_str() {
        "number" | "integer" | "int" | "float" | "double" => FieldType::Number,
        "bool" | "boolean" => FieldType::Boolean,
        _ => FieldType::String,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_types_are_coerced() {
        assert_eq!(field_type("Integer"), FieldType::Number);
        assert_eq!(field_type("bool"), FieldType::Boolean);
        assert_eq!(field_type("url"), FieldType::String);
    }
}
