//! Caching hints on list results (MCP 2026-07-28, SEP-2549): how long a client may treat a
//! `tools/list` page as fresh (`ttlMs`) and who may share a cached copy (`cacheScope`).
//!
//! Owns [`ListCaching`] and the hints a `tools/list` page gets. The TTL is the configured one,
//! or derived from whether the served tool set can change (tools registered at run time,
//! provider or imported tools: `0`, immediately stale, so clients rely on `list_changed`; a
//! fixed set of linked tools: [`FIXED_TOOLS_TTL`]). The scope is `private` whenever the server
//! authorizes requests (a cached copy must not reach a caller without the token) or the
//! listing depends on the caller, else `public`. Requests of older revisions get no hints
//! (their results do not define the fields). Results of the extras (prompts, resources) are
//! `rmcp`'s: it fills missing hints with the conservative `0`/`private`.

use std::time::Duration;

use rmcp::model::{CacheScope, ListToolsResult};

/// How long a fixed set of linked tools is fresh by default: the set changes only with a new
/// deployment, so a client's cached list outlives one by at most this.
pub const FIXED_TOOLS_TTL: Duration = Duration::from_secs(600);

/// The caching hints of `tools/list` on 2026-07-28.
///
/// ```
/// use std::time::Duration;
/// use tool_core::mcp::{ListCaching, FIXED_TOOLS_TTL};
/// assert_eq!(ListCaching::default().ttl(), Duration::ZERO);
/// assert_eq!(ListCaching { tools_can_change: false, ..ListCaching::default() }.ttl(), FIXED_TOOLS_TTL);
/// assert_eq!(ListCaching { ttl: Some(Duration::from_secs(5)), ..ListCaching::default() }.ttl(), Duration::from_secs(5));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListCaching {
    /// The `ttlMs` to send; `None` derives it from [`Self::tools_can_change`].
    pub ttl: Option<Duration>,
    /// Whether the served tool set can change while the server runs: tools registered at run
    /// time, provider or imported tools (default `true`, since a registry takes tools at any
    /// time; set `false` for a fixed set of linked tools).
    pub tools_can_change: bool,
}

impl Default for ListCaching {
    fn default() -> Self {
        ListCaching {
            ttl: None,
            tools_can_change: true,
        }
    }
}

impl ListCaching {
    /// The TTL sent: the configured one, else derived from whether the tool set can change.
    pub fn ttl(&self) -> Duration {
        match self.ttl {
            Some(ttl) => ttl,
            None if self.tools_can_change => Duration::ZERO,
            None => FIXED_TOOLS_TTL,
        }
    }

    /// Sets the hints of a 2026-07-28 `tools/list` page; `private` when the page may differ
    /// between callers or is served to authorized callers only.
    pub(super) fn apply(&self, page: &mut ListToolsResult, private: bool) {
        page.ttl_ms = Some(u64::try_from(self.ttl().as_millis()).unwrap_or(u64::MAX));
        page.cache_scope = Some(if private { CacheScope::Private } else { CacheScope::Public });
    }
}

/// Marks an HTTP request admitted by an authorization gate (a token was required), so that
/// its list results are cached privately.
#[derive(Debug, Clone, Copy)]
pub(super) struct Authorized;

/// The request was admitted by an authorization gate.
pub(super) fn authorized(ctx: &rmcp::service::RequestContext<rmcp::service::RoleServer>) -> bool {
    ctx.extensions
        .get::<axum::http::request::Parts>()
        .is_some_and(|parts| parts.extensions.get::<Authorized>().is_some())
}
