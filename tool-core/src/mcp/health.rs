//! `GET /healthz` of `serve --http`: whether this instance can reach its store, for load
//! balancers and orchestrators.
//!
//! Owns [`routes`]. The answer is `200` with `{"status": "ok", "store": "ok", …}` when one
//! cheap lookup in the store answers within [`PROBE_TIMEOUT`], `503` with
//! `{"status": "unavailable", "store": "<why>", …}` otherwise. It names the instance (its id on
//! the store's bus) and this build's version, never the store's location. It is not behind the
//! MCP endpoint's authorization: it says nothing but whether the store answers.

use std::time::Duration;

use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde_json::json;

use crate::runtime::Runtime;

/// How long the store has to answer the probe.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// The health route, over `runtime`'s store.
pub(super) fn routes(runtime: Runtime) -> axum::Router {
    let probe = move || {
        let runtime = runtime.clone();
        async move { health(&runtime).await }
    };
    axum::Router::new().route("/healthz", axum::routing::get(probe))
}

async fn health(runtime: &Runtime) -> axum::response::Response {
    let instance = runtime.bus().map(|b| b.instance_id().to_owned());
    let store = match tokio::time::timeout(PROBE_TIMEOUT, runtime.check_store()).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("the store did not answer within {} s", PROBE_TIMEOUT.as_secs())),
    };
    let version = env!("CARGO_PKG_VERSION");
    let (status, body) = match store {
        Ok(()) => (
            StatusCode::OK,
            json!({"status": "ok", "store": "ok", "instance": instance, "version": version}),
        ),
        Err(why) => (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"status": "unavailable", "store": why, "instance": instance, "version": version}),
        ),
    };
    let headers = [
        (axum::http::header::CONTENT_TYPE, "application/json"),
        (axum::http::header::CACHE_CONTROL, "no-store"),
    ];
    (status, headers, body.to_string()).into_response()
}
