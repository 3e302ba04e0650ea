//! `GET /healthz` of `serve --http`: whether this instance can reach its store, for load
//! balancers and orchestrators.
//!
//! Owns [`routes`]. The answer is `200` with `{"status": "ok", "store": "ok", …}` when one
//! cheap lookup in the store answers within [`PROBE_TIMEOUT`], `503` with
//! `{"status": "unavailable", "store": "<why>", …}` otherwise. Beside it: `backend` (which kind
//! of store: `memory`, `sqlite`, `postgres`), `since` (when the store's state last changed as
//! this instance's probes saw it, RFC 3339), `kept_writes` (writes a past failure left waiting in
//! memory for the store to take them: not 0 right after an outage, until they went through).
//! It names the instance (its id on the store's bus) and this build's version, never the store's
//! location. It is not behind the MCP endpoint's authorization: it says nothing but whether the
//! store answers.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde_json::json;

use crate::runtime::Runtime;

/// How long the store has to answer the probe.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// The health route, over `runtime`'s store.
pub(super) fn routes(runtime: Runtime) -> axum::Router {
    let seen = Arc::new(Mutex::new(None));
    let probe = move || {
        let runtime = runtime.clone();
        let seen = seen.clone();
        async move { health(&runtime, &seen).await }
    };
    axum::Router::new().route("/healthz", axum::routing::get(probe))
}

/// The store's state as the last probe saw it (answering or not), and since when.
type Seen = Mutex<Option<(bool, SystemTime)>>;

/// Records the probe's finding in `seen`; returns since when the store has been in that state.
fn since(seen: &Seen, answering: bool) -> SystemTime {
    let mut seen = seen.lock().unwrap_or_else(|p| p.into_inner());
    match *seen {
        Some((state, since)) if state == answering => since,
        _ => {
            let now = SystemTime::now();
            *seen = Some((answering, now));
            now
        }
    }
}

async fn health(runtime: &Runtime, seen: &Seen) -> axum::response::Response {
    let instance = runtime.bus().map(|b| b.instance_id().to_owned());
    let store = match tokio::time::timeout(PROBE_TIMEOUT, runtime.check_store()).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("the store did not answer within {} s", PROBE_TIMEOUT.as_secs())),
    };
    let version = env!("CARGO_PKG_VERSION");
    let since = chrono::DateTime::<chrono::Utc>::from(since(seen, store.is_ok()));
    let since = since.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let backend = runtime.store_backend();
    let kept_writes = crate::runtime::kept_writes();
    let (status, body) = match store {
        Ok(()) => (
            StatusCode::OK,
            json!({"status": "ok", "store": "ok", "backend": backend, "since": since, "kept_writes": kept_writes,
                   "instance": instance, "version": version}),
        ),
        Err(why) => (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"status": "unavailable", "store": why, "backend": backend, "since": since, "kept_writes": kept_writes,
                   "instance": instance, "version": version}),
        ),
    };
    let headers = [
        (axum::http::header::CONTENT_TYPE, "application/json"),
        (axum::http::header::CACHE_CONTROL, "no-store"),
    ];
    (status, headers, body.to_string()).into_response()
}
