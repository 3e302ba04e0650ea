//! Accepting HTTP connections, within limits.
//!
//! Owns [`serve_router`]: the accept loop behind [`super::http::serve`]. Each connection is
//! served by hyper's HTTP/1 server with its header read timeout (a request head must be
//! complete within it; hyper counts from the moment it waits for one, so on a kept-alive
//! connection from the end of the previous response) and closed when it has been idle (no
//! request in flight, nothing of a next one received) past the idle timeout. At most
//! `max_connections` are served at once: a connection past the cap is answered `503` with a
//! JSON-RPC error and `Retry-After`, or (when even those answers are too many) closed at once.
//! A failing `accept` (out of file descriptors) is logged and retried after a pause, never
//! in a busy loop. What requests may carry is the guard's (`http`).
//!
//! A connection's requests to `/mcp` go straight to the MCP [`Endpoint`] (the guard, then
//! rmcp's service), not through the router: its future then lives in hyper's per-connection
//! slot, where routing would box the guard's future and the service's (two allocations of
//! several KB per call, which the allocator serialises across worker threads). Every other
//! path (health, OAuth metadata) is the router's.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, Response, StatusCode, header};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use super::activity::{Activity, Tracked, Watched};

/// How long connections get to finish once the streams have ended.
const DRAIN: Duration = Duration::from_secs(10);
/// Connections past the cap that are answered 503 at once; any more are closed unanswered.
const REFUSALS: usize = 64;
/// How long a connection past the cap gets to send the request it is refused.
const REFUSAL_TIME: Duration = Duration::from_secs(2);
/// The pause after a failing `accept` (e.g. out of file descriptors).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// The MCP endpoint a connection serves directly: every request whose path is `/mcp`.
pub(super) trait Endpoint: Clone + Send + Sync + 'static {
    /// The response to `request`.
    fn serve(&self, request: Request<Body>) -> impl Future<Output = Response<Body>> + Send;
}

/// What a connection serves: `/mcp` by `mcp`, anything else by `router`.
#[derive(Clone)]
pub(super) struct Routes<E> {
    pub(super) router: axum::Router,
    pub(super) mcp: E,
}

/// The path [`Routes::mcp`] serves.
pub(super) const MCP_PATH: &str = "/mcp";

/// The connection limits [`serve_router`] enforces.
#[derive(Debug, Clone, Copy)]
pub(super) struct ConnLimits {
    pub(super) header_read_timeout: Duration,
    pub(super) idle_timeout: Duration,
    pub(super) max_connections: usize,
}

/// How the server stops: the requests that are calls (POSTs) still in flight get `grace` to
/// finish; then `streams` is cancelled (every SSE stream ends, calls still running with it).
pub(super) struct Drain {
    pub(super) calls: Arc<Activity>,
    pub(super) grace: Duration,
    pub(super) streams: CancellationToken,
}

/// Serves `routes` on `listener` until `shutdown` is cancelled; then stops accepting (new
/// connections are refused), closes idle connections, lets the calls in flight finish within
/// the grace period, ends what still runs and lets connections finish (at most [`DRAIN`]).
pub(super) async fn serve_router<E: Endpoint>(
    listener: TcpListener,
    routes: Routes<E>,
    limits: ConnLimits,
    shutdown: CancellationToken,
    drain: Drain,
    tls: Option<TlsAcceptor>,
) {
    let max = limits.max_connections.clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
    let slots = Arc::new(Semaphore::new(max));
    let refusals = Arc::new(Semaphore::new(REFUSALS));
    let at_cap = AtomicBool::new(false);
    let closing = Closing {
        shutdown: shutdown.clone(),
        streams: drain.streams.clone(),
    };
    loop {
        let (tcp, peer) = tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) if is_connection_error(&e) => continue,
                Err(e) => {
                    tracing::warn!(error = %e, "accepting an HTTP connection failed; retrying shortly");
                    tokio::select! {
                        _ = shutdown.cancelled() => break,
                        _ = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                    }
                }
            },
        };
        // Without TCP_NODELAY, small SSE frames wait on delayed ACKs.
        let _ = tcp.set_nodelay(true);
        match slots.clone().try_acquire_owned() {
            Ok(permit) => {
                at_cap.store(false, Ordering::Relaxed);
                let (routes, closing) = (routes.clone(), closing.clone());
                match &tls {
                    None => {
                        tokio::spawn(serve_connection(tcp, peer, routes, limits, closing, permit));
                    }
                    Some(tls) => {
                        tokio::spawn(serve_tls(tls.clone(), (tcp, peer), routes, limits, closing, permit));
                    }
                }
            }
            Err(_) => {
                if !at_cap.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        max_connections = max,
                        "refusing HTTP connections: the server is at its connection limit"
                    );
                }
                // Over TLS a plain answer would be noise: the connection is closed.
                if tls.is_none() {
                    refuse(tcp, &refusals, max);
                }
            }
        }
    }
    drop(listener);
    finish_calls(&drain).await;
    drain.streams.cancel();
    // Every connection holds a slot until it ends.
    let _ = tokio::time::timeout(DRAIN + Duration::from_secs(1), slots.acquire_many(max as u32)).await;
}

/// Waits (at most the grace period) for the calls in flight to finish.
async fn finish_calls(drain: &Drain) {
    let running = drain.calls.in_flight();
    if running == 0 {
        return;
    }
    tracing::info!(
        running,
        grace_ms = drain.grace.as_millis() as u64,
        "shutting down: no new connections; waiting for the calls in flight"
    );
    let finished = async {
        while drain.calls.in_flight() > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    if tokio::time::timeout(drain.grace, finished).await.is_err() {
        tracing::warn!(
            running = drain.calls.in_flight(),
            "shutting down: the grace period is over; cancelling the calls still running"
        );
    }
}

/// What a connection watches to close: the shutdown (stop taking requests) and the end of
/// the streams (past the grace period).
#[derive(Clone)]
struct Closing {
    shutdown: CancellationToken,
    streams: CancellationToken,
}

/// What wraps each accepted connection in TLS (feature `tls`).
#[cfg(feature = "tls")]
pub(super) type TlsAcceptor = tokio_rustls::TlsAcceptor;
/// Without feature `tls` there is no TLS to serve.
#[cfg(not(feature = "tls"))]
#[derive(Clone)]
pub(super) enum TlsAcceptor {}

#[cfg(not(feature = "tls"))]
async fn serve_tls<E: Endpoint>(
    tls: TlsAcceptor,
    _: (TcpStream, SocketAddr),
    _: Routes<E>,
    _: ConnLimits,
    _: Closing,
    _: OwnedSemaphorePermit,
) {
    match tls {}
}

/// A TLS handshake (within the header read timeout), then the connection served over it.
#[cfg(feature = "tls")]
async fn serve_tls<E: Endpoint>(
    tls: TlsAcceptor,
    (tcp, peer): (TcpStream, SocketAddr),
    routes: Routes<E>,
    limits: ConnLimits,
    closing: Closing,
    slot: OwnedSemaphorePermit,
) {
    match tokio::time::timeout(limits.header_read_timeout, tls.accept(tcp)).await {
        Ok(Ok(stream)) => serve_connection(stream, peer, routes, limits, closing, slot).await,
        Ok(Err(e)) => tracing::debug!(error = %e, "a TLS handshake failed"),
        Err(_) => tracing::debug!("a TLS handshake did not finish in time"),
    }
}

/// Serves one connection from `peer` until it ends, idles past the limit or shutdown has
/// drained it. Each request carries the peer's address (axum's `ConnectInfo`), the key of an
/// anonymous caller's limits (`fairness`).
async fn serve_connection<I, E>(
    io: I,
    peer: SocketAddr,
    routes: Routes<E>,
    limits: ConnLimits,
    closing: Closing,
    _slot: OwnedSemaphorePermit,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    E: Endpoint,
{
    let activity = Activity::new();
    let io = TokioIo::new(Watched::new(io, activity.clone()));
    let requests = activity.clone();
    let routes = Arc::new(routes);
    let service = service_fn(move |request: Request<Incoming>| {
        let in_flight = requests.begin();
        let routes = routes.clone();
        async move {
            let mut request = request.map(Body::new);
            request.extensions_mut().insert(ConnectInfo(peer));
            let response = if request.uri().path() == MCP_PATH {
                routes.mcp.serve(request).await
            } else {
                routes.router.clone().oneshot(request).await?
            };
            Ok::<_, Infallible>(response.map(|body| Tracked::body(body, in_flight)))
        }
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    let conn = builder.serve_connection(io, service);
    tokio::pin!(conn);
    tokio::select! {
        ended = conn.as_mut() => {
            match ended {
                Err(e) if e.is_timeout() => tracing::warn!(
                    timeout_ms = limits.header_read_timeout.as_millis() as u64,
                    "closed an HTTP connection whose request head did not arrive in time"
                ),
                Err(e) => tracing::debug!(error = %e, "an HTTP connection ended with an error"),
                Ok(()) => {}
            }
            return;
        }
        () = idle_past(&activity, limits.idle_timeout) => {
            tracing::debug!("closed an idle HTTP connection");
            return;
        }
        () = closing.shutdown.cancelled() => {}
    }
    // No next request: an idle connection closes now, one with a request in flight once its
    // response is sent (a call within the grace period; a stream once the streams end).
    conn.as_mut().graceful_shutdown();
    tokio::select! {
        _ = conn.as_mut() => return,
        () = closing.streams.cancelled() => {}
    }
    let _ = tokio::time::timeout(DRAIN, conn).await;
}

/// Resolves once the connection has been idle for `limit`.
async fn idle_past(activity: &Activity, limit: Duration) {
    let tick = (limit / 4).clamp(Duration::from_millis(10), Duration::from_secs(1));
    loop {
        let idle = activity.idle_for();
        if idle >= limit {
            return;
        }
        tokio::time::sleep((limit - idle).min(tick).max(Duration::from_millis(1))).await;
    }
}

/// Answers a connection past the cap with a 503 (or closes it when too many are being
/// answered already).
fn refuse(tcp: TcpStream, refusals: &Arc<Semaphore>, max: usize) {
    let Ok(permit) = refusals.clone().try_acquire_owned() else {
        return;
    };
    tokio::spawn(async move {
        let _permit = permit;
        let service = service_fn(move |request: Request<Incoming>| async move {
            // Read (a bounded part of) the body, so closing does not reset the connection
            // under the answer.
            let _ = tokio::time::timeout(REFUSAL_TIME, axum::body::to_bytes(Body::new(request.into_body()), 64 << 10)).await;
            Ok::<_, Infallible>(busy(max))
        });
        let mut builder = http1::Builder::new();
        builder.timer(TokioTimer::new()).header_read_timeout(REFUSAL_TIME).keep_alive(false);
        let _ = tokio::time::timeout(REFUSAL_TIME * 2, builder.serve_connection(TokioIo::new(tcp), service)).await;
    });
}

/// The answer to a connection past the cap.
fn busy(max: usize) -> Response<Body> {
    let body = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32000,
            "message": format!("The server is serving its limit of {max} connections; retry in a moment."),
        },
    });
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    headers.insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
    headers.insert(header::CONNECTION, header::HeaderValue::from_static("close"));
    response
}

/// An `accept` error that concerns one connection only (nothing to pause for).
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    )
}
