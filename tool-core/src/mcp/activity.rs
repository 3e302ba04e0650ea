//! What one HTTP connection is doing, for its idle timeout.
//!
//! Owns [`Activity`] (requests in flight, and whether a byte arrived since the connection last
//! went idle), [`Watched`] (the connection's I/O, noting each read) and [`Tracked`] (a response
//! body that counts as in flight until it is sent or dropped). A connection is idle while no
//! request is in flight and nothing of a next one has arrived; [`Activity::idle_for`] says how
//! long. It does not close anything (`listen`).

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes, HttpBody};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A connection's requests in flight and when it last went idle.
#[derive(Debug)]
pub(super) struct Activity {
    in_flight: AtomicUsize,
    /// A byte arrived since the connection went idle (a next request is on its way).
    heard: AtomicBool,
    idle_since: Mutex<Instant>,
}

impl Activity {
    pub(super) fn new() -> Arc<Self> {
        Arc::new(Activity {
            in_flight: AtomicUsize::new(0),
            heard: AtomicBool::new(false),
            idle_since: Mutex::new(Instant::now()),
        })
    }

    /// How long the connection has been idle (zero while a request is in flight or arriving).
    pub(super) fn idle_for(&self) -> Duration {
        if self.in_flight.load(Ordering::SeqCst) > 0 || self.heard.load(Ordering::SeqCst) {
            return Duration::ZERO;
        }
        self.lock().elapsed()
    }

    /// How many requests are in flight.
    pub(super) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// A request's head was read: it is in flight until the returned guard is dropped.
    pub(super) fn begin(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(self.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Instant> {
        self.idle_since.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One request in flight; dropping it ends it.
#[derive(Debug)]
pub(super) struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let a = &self.0;
        let mut since = a.lock();
        if a.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            *since = Instant::now();
            a.heard.store(false, Ordering::SeqCst);
        }
    }
}

/// A connection's I/O, noting in its [`Activity`] that bytes arrived.
pub(super) struct Watched<T> {
    io: T,
    activity: Arc<Activity>,
}

impl<T> Watched<T> {
    pub(super) fn new(io: T, activity: Arc<Activity>) -> Self {
        Watched { io, activity }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Watched<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.io).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.heard.store(true, Ordering::SeqCst);
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Watched<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

/// A response body whose request stays in flight until the body is sent or dropped (an SSE
/// stream is in flight as long as it is open).
pub(super) struct Tracked {
    body: Body,
    _in_flight: InFlight,
}

impl Tracked {
    pub(super) fn body(body: Body, in_flight: InFlight) -> Body {
        Body::new(Tracked {
            body,
            _in_flight: in_flight,
        })
    }
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_only_without_requests_or_bytes() {
        let a = Activity::new();
        std::thread::sleep(Duration::from_millis(5));
        assert!(a.idle_for() >= Duration::from_millis(5), "a new connection is idle");
        let first = a.begin();
        let second = a.begin();
        assert_eq!(a.idle_for(), Duration::ZERO);
        drop(first);
        assert_eq!(a.idle_for(), Duration::ZERO, "one request is still in flight");
        drop(second);
        let idle = a.idle_for();
        assert!(idle < Duration::from_secs(1), "idle from the end of the last request: {idle:?}");
        a.heard.store(true, Ordering::SeqCst);
        assert_eq!(a.idle_for(), Duration::ZERO, "a next request is arriving");
    }
}
