//! Arcade's connections: which auth provider a toolkit's tools need (read from their
//! definitions, cached), user connections (listed per auth provider and user, status,
//! owner-checked and plain revocation) and authorization flows (started per tool, followed
//! with a long poll).
//!
//! Owns what the provider asks Arcade about connections. Must not run or build tools
//! (`tools`), nor map statuses (`status`).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use tool_core::provider::{
    AuthStatus, Authorization, AuthorizeOptions, Connection, ConnectionRef, ConnectionState, ConnectionStatus, ListConnectionsOptions,
    ListConnectionsResult, Pagination, ProviderError,
};

use super::api::{self, AuthorizeRequest, UserConnection, last_page};
use super::status::auth_status;
use super::tools::ArcadeName;
use super::{ALREADY_AUTHORIZED_ID, ArcadeToolProvider};
use crate::http::{NO_BODY, encode_segment};

/// The auth provider a toolkit's tools require.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum AuthProvider {
    /// Arcade lists no tool of the toolkit.
    UnknownToolkit,
    /// Its tools need no authorization.
    NoneNeeded,
    /// Arcade's auth provider id (`github`, `google`, …).
    Id(String),
}

impl ArcadeToolProvider {
    fn lock_auth_providers(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, AuthProvider>> {
        self.auth_providers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The auth provider a toolkit's tools require, read from their definitions
    /// (`requirements.authorization.provider_id`) and cached (an unknown toolkit is not
    /// cached: it may appear later).
    async fn auth_provider_of(&self, toolkit: &str) -> Result<AuthProvider, ProviderError> {
        let key = toolkit.trim().to_ascii_lowercase();
        if let Some(hit) = self.lock_auth_providers().get(&key) {
            return Ok(hit.clone());
        }
        let mut known = false;
        let mut found: Option<String> = None;
        for def in self.all_tools(Some(toolkit.trim())).await? {
            if !def.toolkit_name().is_some_and(|n| n.eq_ignore_ascii_case(toolkit.trim())) {
                continue;
            }
            known = true;
            match (&found, def.auth_provider()) {
                (None, Some(id)) => found = Some(id.to_owned()),
                (Some(first), Some(id)) if first != id => {
                    tracing::warn!(target: "tool_providers::arcade", toolkit, first = %first, other = id,
                        "a toolkit's tools name several auth providers; its connections are those of the first");
                }
                _ => {}
            }
        }
        let answer = match (known, found) {
            (false, _) => return Ok(AuthProvider::UnknownToolkit),
            (true, None) => AuthProvider::NoneNeeded,
            (true, Some(id)) => AuthProvider::Id(id),
        };
        self.lock_auth_providers().insert(key, answer.clone());
        Ok(answer)
    }

    /// Every user connection for an auth provider (optionally one user's), following offset
    /// pagination up to the page cap. Items of another user or provider are dropped, so a
    /// filter the API ignored never widens a listing.
    async fn user_connections(&self, provider_id: &str, user: Option<&str>) -> Result<Vec<UserConnection>, ProviderError> {
        let mut items = Vec::new();
        let mut offset: u64 = 0;
        for _ in 0..self.max_pages {
            let page = self.user_connections_page(Some(provider_id), user, offset).await?;
            let got = page.items.len() as u64;
            offset += got;
            items.extend(
                page.items
                    .into_iter()
                    .filter(|c| c.provider_id.as_deref() == Some(provider_id) && user.is_none_or(|u| c.user_id.as_deref() == Some(u))),
            );
            if last_page(got, offset, page.total_count) {
                return Ok(items);
            }
        }
        Err(self.http.transport(format!(
            "the user-connection listing did not end after {} pages; stopped (raise `max_pages` if there are really that many)",
            self.max_pages
        )))
    }

    /// Revokes `connection_id` only if it is one of `user_id`'s connections (any auth
    /// provider): the owner-checked form of
    /// [`revoke_connection`](tool_core::provider::ToolProvider::revoke_connection) for code
    /// acting on one tenant's behalf. A connection of another user is refused with
    /// [`ProviderError::Config`] and left untouched; one that is already gone counts as
    /// revoked.
    pub async fn revoke_user_connection(&self, user_id: &str, connection_id: &str) -> Result<(), ProviderError> {
        let (user, id) = (user_id.trim(), connection_id.trim());
        if user.is_empty() || id.is_empty() {
            return Err(ProviderError::Config(
                "revoking an Arcade connection needs both the user id and the connection id".into(),
            ));
        }
        let mut offset: u64 = 0;
        for _ in 0..self.max_pages {
            let page = self.user_connections_page(None, Some(user), offset).await?;
            if let Some(found) = page.items.iter().find(|c| c.id.as_deref() == Some(id)) {
                if found.user_id.as_deref().unwrap_or_default() != user {
                    break;
                }
                return self.delete_connection(id).await;
            }
            let got = page.items.len() as u64;
            offset += got;
            if last_page(got, offset, page.total_count) {
                break;
            }
        }
        Err(ProviderError::Config(format!(
            "the Arcade connection `{id}` is not one of user `{user}`'s connections; nothing was revoked (list the user's connections for the ids they own)"
        )))
    }

    /// `DELETE /v1/admin/user_connections/{id}`; already gone counts as revoked.
    pub(super) async fn delete_connection(&self, id: &str) -> Result<(), ProviderError> {
        let path = format!("/v1/admin/user_connections/{}", encode_segment(id));
        self.http.delete_or_absent(&path).await
    }

    /// [`ToolProvider::authorize`](tool_core::provider::ToolProvider::authorize): Arcade
    /// authorizes per tool, for the user id given as `connection_id`.
    pub(super) async fn start_authorization(&self, options: AuthorizeOptions) -> Result<Authorization, ProviderError> {
        let (name, user) = self.authorization_target(&options)?;
        let tool = options.tool_name.as_deref().map(str::trim).unwrap_or_default();
        let qualified = name.qualified();
        let body = AuthorizeRequest {
            tool_name: &qualified,
            user_id: user,
            tool_version: name.version.as_deref(),
        };
        let out: api::Authorization = self.http.post("/v1/tools/authorize", &body).await?;
        if let Some(other) = out.user_id.as_deref().filter(|u| !u.is_empty() && *u != user) {
            tracing::warn!(target: "tool_providers::arcade", asked = user, answered = other, "authorization for another user refused");
            return Err(self
                .http
                .transport("Arcade answered an authorization for a different user; refused".into()));
        }
        let id = out.id.filter(|s| !s.is_empty());
        match out.status.as_deref() {
            Some("completed") => Ok(Authorization {
                url: String::new(),
                auth_id: id.unwrap_or_else(|| ALREADY_AUTHORIZED_ID.to_owned()),
            }),
            Some("failed") => Err(ProviderError::Config(format!(
                "Arcade reported the authorization of `{tool}` as failed; check the auth provider's setup in Arcade, then try again"
            ))),
            _ => match (out.url.filter(|u| !u.trim().is_empty()), id) {
                (Some(url), Some(auth_id)) => Ok(Authorization { url, auth_id }),
                _ => Err(self
                    .http
                    .transport("Arcade started an authorization without a URL or an id to follow it".into())),
            },
        }
    }

    /// The tool and the user an authorization is for, checked: a tool of the toolkit, allowed,
    /// and a user id.
    fn authorization_target<'a>(&self, options: &'a AuthorizeOptions) -> Result<(ArcadeName, &'a str), ProviderError> {
        let toolkit = options.toolkit.trim();
        let Some(tool) = options.tool_name.as_deref().map(str::trim).filter(|t| !t.is_empty()) else {
            return Err(ProviderError::Config(format!(
                "Arcade authorizes per tool: pass `tool_name` (a tool of toolkit `{toolkit}`, such as one from list_tools_vnext)"
            )));
        };
        let Some(name) = ArcadeName::parse(tool) else {
            return Err(ProviderError::Config(format!(
                "`{tool}` is not an Arcade tool name: use `Toolkit.Tool` (optionally `@version`)"
            )));
        };
        if !toolkit.is_empty() && !name.toolkit.eq_ignore_ascii_case(toolkit) {
            return Err(ProviderError::Config(format!(
                "`{tool}` is not a tool of toolkit `{toolkit}`: pass one of that toolkit's tools"
            )));
        }
        if !self.tool_allowed(&name.toolkit, &name.tool) {
            return Err(ProviderError::Config(format!(
                "`{tool}` is not allowed by this provider's allow-lists"
            )));
        }
        let user = options.connection_id.trim();
        if user.is_empty() {
            return Err(ProviderError::Config(
                "Arcade authorizes a user: pass the Arcade user id (the bucket) as `connection_id`".into(),
            ));
        }
        Ok((name, user))
    }

    /// [`ToolProvider::get_auth_status`](tool_core::provider::ToolProvider::get_auth_status):
    /// `GET /v1/auth/status?id=…`, long-polled when a wait is set; gone (404) is failed, an
    /// unknown status an error.
    pub(super) async fn flow_status(&self, id: &str) -> Result<AuthStatus, ProviderError> {
        if id.is_empty() {
            return Err(ProviderError::Config("pass the `auth_id` that `authorize` returned".into()));
        }
        if id == ALREADY_AUTHORIZED_ID {
            return Ok(AuthStatus::Completed);
        }
        let mut query = vec![("id", id.to_owned())];
        let mut http = self.http.clone();
        if self.auth_wait_secs > 0 {
            query.push(("wait", self.auth_wait_secs.to_string()));
            http.timeout += Duration::from_secs(self.auth_wait_secs);
        }
        let reply = http.request(reqwest::Method::GET, "/v1/auth/status", &query, NO_BODY).await?;
        if reply.status == 404 {
            return Ok(AuthStatus::Failed);
        }
        let body: api::Authorization = http.decode(reply)?;
        auth_status(body.status.as_deref()).ok_or_else(|| {
            let shown = body
                .status
                .as_deref()
                .map_or("(none)".to_owned(), |s| format!("`{}`", s.chars().take(40).collect::<String>()));
            http.transport(format!("Arcade answered an unknown authorization status {shown}"))
        })
    }

    /// [`ToolProvider::get_connection_status`](tool_core::provider::ToolProvider::get_connection_status):
    /// one user-connection listing per auth provider; an id may be a connection's or a user's.
    pub(super) async fn connection_states(&self, items: Vec<ConnectionRef>) -> Result<BTreeMap<String, ConnectionState>, ProviderError> {
        let mut out = BTreeMap::new();
        let mut listings: BTreeMap<String, Vec<UserConnection>> = BTreeMap::new();
        for item in items {
            let connected = if !self.allow.toolkit(&item.toolkit) {
                false
            } else {
                match self.auth_provider_of(&item.toolkit).await? {
                    AuthProvider::UnknownToolkit => false,
                    AuthProvider::NoneNeeded => true,
                    AuthProvider::Id(provider) => {
                        if !listings.contains_key(&provider) {
                            let listed = self.user_connections(&provider, None).await?;
                            listings.insert(provider.clone(), listed);
                        }
                        let id = Some(item.connection_id.as_str());
                        listings.get(&provider).is_some_and(|listed| {
                            listed
                                .iter()
                                .any(|c| (c.id.as_deref() == id || c.user_id.as_deref() == id) && c.status() == ConnectionStatus::Active)
                        })
                    }
                }
            };
            let entry = out.entry(item.connection_id).or_insert(ConnectionState { connected });
            entry.connected |= connected;
        }
        Ok(out)
    }

    /// [`ToolProvider::list_connections`](tool_core::provider::ToolProvider::list_connections):
    /// the toolkit's auth provider's connections of the asked users (else the configured user
    /// only; never every user's), one page.
    pub(super) async fn connections(&self, options: ListConnectionsOptions) -> Result<ListConnectionsResult, ProviderError> {
        let (page, per_page) = (options.page(), options.per_page());
        let owners: BTreeSet<String> = options
            .owners()
            .unwrap_or_else(|| self.user_id.iter().cloned().collect())
            .into_iter()
            .map(|o| o.trim().to_owned())
            .filter(|o| !o.is_empty())
            .collect();
        let mut all = Vec::new();
        if self.allow.toolkit(&options.toolkit)
            && !owners.is_empty()
            && let AuthProvider::Id(provider) = self.auth_provider_of(&options.toolkit).await?
        {
            for owner in &owners {
                let listed = self.user_connections(&provider, Some(owner)).await?;
                all.extend(listed.iter().filter_map(UserConnection::to_connection));
            }
        }
        let total = all.len();
        let start = ((page as usize - 1) * per_page as usize).min(total);
        let items: Vec<Connection> = all.into_iter().skip(start).take(per_page as usize).collect();
        Ok(ListConnectionsResult {
            pagination: Pagination {
                total: Some(total as u64),
                page: Some(page),
                per_page: Some(per_page),
                has_more: start + items.len() < total,
            },
            items,
        })
    }
}
