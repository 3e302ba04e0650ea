//! The switches that make a provider fake misbehave, shared by the Arcade and Composio fakes,
//! and the answers they give (each fake writes its own error envelope).

#![allow(dead_code)]

use std::sync::Mutex;
use std::time::Duration;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// How a fake misbehaves.
#[derive(Debug, Clone, Default)]
pub struct Misbehave {
    /// Answer the next request with 429 (`Retry-After: 1`), then behave.
    pub rate_limit_once: bool,
    /// Answer every request with 429.
    pub rate_limit_always: bool,
    /// Answer every request with 500.
    pub fail_500: bool,
    /// Wait this long before answering.
    pub slow: Option<Duration>,
    /// Answer success bodies that are not JSON.
    pub malformed: bool,
    /// Listings never end (every page full, always another page).
    pub endless: bool,
    /// Answer a 9 MiB body.
    pub oversized: bool,
    /// Connection listings ignore their user filter (Arcade's `user[id]`), as a buggy or
    /// hostile platform might: the provider must still never show another user's connections.
    pub ignore_user_filter: bool,
}

/// An error answer in the fake's own envelope.
pub enum Failure {
    /// 429 (the fake's body; `Retry-After: 1` is added).
    RateLimited,
    /// 500.
    Internal,
}

impl Misbehave {
    /// The switches for this request (a one-shot 429 is used up).
    pub fn take(switches: &Mutex<Misbehave>) -> Misbehave {
        let mut m = switches.lock().unwrap();
        let now = m.clone();
        m.rate_limit_once = false;
        now
    }

    /// Waits when slow; then the misbehaving answer, if any (`error` writes the envelope;
    /// `malformed_start` begins the truncated JSON body).
    pub async fn answer(&self, error: impl Fn(Failure) -> Response, malformed_start: &'static str) -> Option<Response> {
        if let Some(d) = self.slow {
            tokio::time::sleep(d).await;
        }
        if self.rate_limit_once || self.rate_limit_always {
            let mut r = error(Failure::RateLimited);
            *r.status_mut() = StatusCode::TOO_MANY_REQUESTS;
            r.headers_mut().insert("retry-after", "1".parse().unwrap());
            return Some(r);
        }
        if self.fail_500 {
            let mut r = error(Failure::Internal);
            *r.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
            return Some(r);
        }
        if self.oversized {
            let big = "x".repeat(9 * 1024 * 1024);
            let body = format!("{{\"items\":[],\"pad\":\"{big}\"}}");
            return Some((StatusCode::OK, [("content-type", "application/json")], body).into_response());
        }
        if self.malformed {
            return Some((StatusCode::OK, [("content-type", "application/json")], malformed_start).into_response());
        }
        None
    }
}
