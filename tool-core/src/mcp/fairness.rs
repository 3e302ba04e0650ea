//! Fairness between the callers of the HTTP server: how many `tools/call`s one caller may run at
//! once, and how fast it may start them, so that one caller's flood of slow calls cannot make
//! every other caller wait.
//!
//! Owns [`CallerLimits`] and [`CallRate`] (the settings, public as `mcp::http::CallerLimits`),
//! [`Fairness`] (one server's counters: a keyed GCRA rate limiter from `governor`, and the count
//! of each caller's running calls), the key a request is counted under ([`key_of`]: the caller's
//! owner, else the peer's address), the [`CallPermit`] a call holds while it runs, released on
//! drop, and [`Admission`], how the guard's decision reaches the call handler ([`admitted`]).
//! Memory stays bounded: a caller with no running call has no count, and the rate limiter
//! forgets callers whose allowance is full again (swept every [`SWEEP_EVERY`] checks).
//!
//! It does not decide which requests are counted or how a refusal reads over HTTP (`guard`:
//! `429` with `Retry-After`); it does say what a refusal says ([`OverLimit`]).

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::http::Extensions;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use rmcp::ErrorData;
use rmcp::model::ErrorCode;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use crate::Caller;

/// How many `tools/call`s one caller may make: at once, and how fast. Both are off by default
/// (`None`): how many calls are fair depends on what the tools cost.
///
/// A caller is its [`Caller::owner`] (an OAuth subject; every holder of the static bearer token
/// is one caller); without authorization, the peer's IP address (an IPv6 peer by its `/64`, what
/// one host is given), so behind a proxy every anonymous caller is the proxy. Only `tools/call`
/// counts: listing, `initialize`, `ping` and task queries do not.
///
/// ```
/// use std::num::NonZeroU32;
/// use tool_core::mcp::http::{CallRate, CallerLimits, HttpLimits};
/// let limits = HttpLimits {
///     per_caller: CallerLimits {
///         concurrent_calls: NonZeroU32::new(4),
///         rate: CallRate::per_second(10.0, NonZeroU32::new(20).unwrap()),
///     },
///     ..HttpLimits::default()
/// };
/// assert!(limits.check().is_ok());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CallerLimits {
    /// Calls of one caller running at once; one more is refused until one ends. A call runs
    /// until it is answered: its streamed progress, and questions asked within the request
    /// (approval, elicitation), included. A 2026-07-28 call waiting for its client's answer
    /// holds nothing: the request that brings the answer counts anew. A call that runs as a
    /// background task counts until it is answered with its task.
    pub concurrent_calls: Option<NonZeroU32>,
    /// How fast one caller may start calls.
    pub rate: Option<CallRate>,
}

/// A caller's call rate: one call's allowance comes back every `interval`, and up to `burst`
/// calls may be made at once after a quiet spell (GCRA, the token bucket's exact form).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallRate {
    /// The time one call's allowance takes to come back (1 / calls per second); more than zero.
    pub interval: Duration,
    /// Calls that may be made at once.
    pub burst: NonZeroU32,
}

impl CallRate {
    /// `calls` per second with `burst`; `None` unless `calls` is finite and more than zero.
    pub fn per_second(calls: f64, burst: NonZeroU32) -> Option<CallRate> {
        let interval = Duration::try_from_secs_f64(1.0 / calls).ok()?;
        (calls.is_finite() && calls > 0.0 && !interval.is_zero()).then_some(CallRate { interval, burst })
    }

    fn per_second_value(&self) -> f64 {
        1.0 / self.interval.as_secs_f64()
    }
}

/// The rate limiter forgets callers whose allowance is full again once in this many checks.
pub(super) const SWEEP_EVERY: u64 = 1024;

/// How long a caller at its concurrency limit is told to wait: a hint (when one of its calls
/// ends is not known).
const CONCURRENCY_RETRY: Duration = Duration::from_secs(1);

/// The JSON-RPC error code of a refusal (implementation-defined server error).
const OVER_LIMIT_CODE: i32 = -32000;

/// One server's per-caller counters (`None` from [`Fairness::new`] when no limit is set).
pub(super) struct Fairness {
    rate: Option<Rated>,
    running: Option<Arc<Running>>,
}

struct Rated {
    limiter: DefaultKeyedRateLimiter<String>,
    rate: CallRate,
    checks: AtomicU64,
}

/// Each caller's running calls; a caller with none has no entry.
struct Running {
    max: NonZeroU32,
    counts: Mutex<HashMap<String, u32>>,
}

impl Running {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, u32>> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A running call's place in its caller's count; dropping it frees the place.
#[derive(Debug)]
pub(super) struct CallPermit {
    running: Arc<Running>,
    key: String,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running").field("max", &self.max).finish_non_exhaustive()
    }
}

impl Drop for CallPermit {
    fn drop(&mut self) {
        let mut counts = self.running.lock();
        if let Some(count) = counts.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.key);
            }
        }
    }
}

/// Which limit a call was over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Limit {
    /// The caller's call rate.
    Rate(CallRate),
    /// The caller's running calls.
    Concurrency(NonZeroU32),
}

/// A call refused for its caller's limit, and when to try again.
#[derive(Debug, Clone)]
pub(super) struct OverLimit {
    pub(super) limit: Limit,
    pub(super) retry_after: Duration,
}

impl OverLimit {
    /// The retry time in whole milliseconds (at least 1).
    pub(super) fn retry_after_ms(&self) -> u64 {
        u64::try_from(self.retry_after.as_millis()).unwrap_or(u64::MAX).max(1)
    }

    /// The retry time in whole seconds, rounded up (`Retry-After`; at least 1).
    pub(super) fn retry_after_secs(&self) -> u64 {
        self.retry_after_ms().div_ceil(1000)
    }

    /// What the caller is told (model-readable).
    pub(super) fn message(&self) -> String {
        let ms = self.retry_after_ms();
        match self.limit {
            Limit::Rate(rate) => format!(
                "Too many calls: this caller may start {} tool calls per second (bursts of {}); retry in {ms} ms.",
                trim(rate.per_second_value()),
                rate.burst
            ),
            Limit::Concurrency(max) => format!(
                "Too many calls at once: this caller already has {max} tool call(s) running, its limit; retry in {ms} ms, or once one of them has answered."
            ),
        }
    }

    /// The error's `data`: `{"retryAfterMs": …, "limit": "rate" | "concurrency"}`.
    pub(super) fn data(&self) -> Value {
        let limit = match self.limit {
            Limit::Rate(_) => "rate",
            Limit::Concurrency(_) => "concurrency",
        };
        json!({"retryAfterMs": self.retry_after_ms(), "limit": limit})
    }

    /// The refusal as a JSON-RPC error (for a call the transport already accepted).
    pub(super) fn error(&self) -> ErrorData {
        ErrorData::new(ErrorCode(OVER_LIMIT_CODE), self.message(), Some(self.data()))
    }

    /// The JSON-RPC error code of a refusal.
    pub(super) fn code(&self) -> i64 {
        i64::from(OVER_LIMIT_CODE)
    }
}

/// A rate without needless decimals (`10`, `0.5`).
fn trim(n: f64) -> String {
    let text = format!("{n:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

impl Fairness {
    /// The counters of `limits`; `None` when neither limit is set.
    pub(super) fn new(limits: &CallerLimits) -> Option<Arc<Fairness>> {
        let rate = limits.rate.and_then(|rate| {
            let quota = Quota::with_period(rate.interval)?.allow_burst(rate.burst);
            Some(Rated {
                limiter: DefaultKeyedRateLimiter::keyed(quota),
                rate,
                checks: AtomicU64::new(0),
            })
        });
        let running = limits.concurrent_calls.map(|max| {
            Arc::new(Running {
                max,
                counts: Mutex::default(),
            })
        });
        (rate.is_some() || running.is_some()).then(|| Arc::new(Fairness { rate, running }))
    }

    /// Counts a call of the caller `key`: its permit (`None` without a concurrency limit), or
    /// why it is refused. A refused call uses none of the caller's allowance.
    pub(super) fn admit(&self, key: &str) -> Result<Option<CallPermit>, OverLimit> {
        let permit = match &self.running {
            Some(running) => Some(Self::enter(running, key)?),
            None => None,
        };
        if let Some(rated) = &self.rate {
            // A refusal here drops the permit just taken.
            rated.check(key)?;
        }
        Ok(permit)
    }

    fn enter(running: &Arc<Running>, key: &str) -> Result<CallPermit, OverLimit> {
        let mut counts = running.lock();
        let count = counts.entry(key.to_owned()).or_insert(0);
        if *count >= running.max.get() {
            return Err(OverLimit {
                limit: Limit::Concurrency(running.max),
                retry_after: CONCURRENCY_RETRY,
            });
        }
        *count += 1;
        Ok(CallPermit {
            running: running.clone(),
            key: key.to_owned(),
        })
    }

    /// How many callers the counters hold (running calls, rate states).
    #[cfg(test)]
    fn tracked(&self) -> (usize, usize) {
        let running = self.running.as_ref().map_or(0, |r| r.lock().len());
        let rated = self.rate.as_ref().map_or(0, |r| r.limiter.len());
        (running, rated)
    }
}

impl Rated {
    fn check(&self, key: &str) -> Result<(), OverLimit> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.limiter.retain_recent();
            self.limiter.shrink_to_fit();
        }
        self.limiter.check_key(&key.to_owned()).map_err(|not_until| OverLimit {
            limit: Limit::Rate(self.rate),
            retry_after: not_until.wait_time_from(DefaultClock::default().now()),
        })
    }
}

/// The key a request's calls are counted under: the caller's owner (an OAuth subject, or the
/// static token's holder), else the peer's IP address (an IPv6 address by its `/64`), else one
/// key for every anonymous caller (a router mounted without connection info).
pub(super) fn key_of(extensions: &Extensions) -> String {
    if let Some(caller) = extensions.get::<Caller>() {
        return caller.owner();
    }
    if extensions.get::<super::caching::Authorized>().is_some() {
        return Caller::static_token().owner();
    }
    match extensions.get::<ConnectInfo<SocketAddr>>() {
        Some(ConnectInfo(peer)) => peer_key(peer.ip()),
        None => "anonymous".to_owned(),
    }
}

/// `ip:ADDRESS`; an IPv6 address by its first 64 bits (one host can use its whole `/64`).
fn peer_key(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => format!("ip:{v4}"),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => format!("ip:{v4}"),
            None => {
                let s = v6.segments();
                format!("ip:{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
    }
}

/// The guard's decision on a `tools/call`, in the request's extensions for the call handler:
/// the permit the call holds while it runs, or the refusal to answer it with. Taken once.
#[derive(Clone)]
pub(super) struct Admission(Arc<Mutex<Option<Result<CallPermit, OverLimit>>>>);

impl Admission {
    pub(super) fn granted(permit: CallPermit) -> Self {
        Admission(Arc::new(Mutex::new(Some(Ok(permit)))))
    }

    pub(super) fn refused(over: OverLimit) -> Self {
        Admission(Arc::new(Mutex::new(Some(Err(over)))))
    }

    fn take(&self) -> Option<Result<CallPermit, OverLimit>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// The permit of the call `ctx` carries, for the handler to hold until it answers (`None` when
/// the call is not limited), or its refusal as a JSON-RPC error. A request that never reaches
/// the handler frees its permit with the request.
pub(super) fn admitted(ctx: &RequestContext<RoleServer>) -> Result<Option<CallPermit>, ErrorData> {
    let parts = ctx.extensions.get::<axum::http::request::Parts>();
    let Some(admission) = parts.and_then(|p| p.extensions.get::<Admission>()) else {
        return Ok(None);
    };
    match admission.take() {
        Some(Ok(permit)) => Ok(Some(permit)),
        Some(Err(over)) => {
            const REASON: &str = "caller at its concurrency limit (in a session)";
            if let Some(folded) = crate::runtime::settle::quiet(REASON) {
                tracing::warn!(reason = REASON, refused_since_last_line = folded, "refused an MCP call");
            }
            Err(over.error())
        }
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(concurrent: u32, rate: Option<(f64, u32)>) -> Arc<Fairness> {
        let limits = CallerLimits {
            concurrent_calls: NonZeroU32::new(concurrent),
            rate: rate.and_then(|(r, b)| CallRate::per_second(r, NonZeroU32::new(b).unwrap())),
        };
        Fairness::new(&limits).expect("a limit is set")
    }

    #[test]
    fn permits_are_per_caller_and_freed_on_drop() {
        let f = limits(2, None);
        let a1 = f.admit("a").unwrap();
        let _a2 = f.admit("a").unwrap();
        let over = f.admit("a").unwrap_err();
        assert_eq!(over.limit, Limit::Concurrency(NonZeroU32::new(2).unwrap()));
        assert!(over.message().contains("2 tool call(s) running"), "{}", over.message());
        assert_eq!(over.data()["limit"], "concurrency");
        let _b = f.admit("b").expect("another caller is not affected");
        drop(a1);
        let _a3 = f.admit("a").expect("a freed permit can be taken again");
        assert_eq!(f.tracked().0, 2);
        drop((_a2, _a3, _b));
        assert_eq!(f.tracked().0, 0, "callers with no running call are forgotten");
    }

    #[test]
    fn a_rate_refusal_says_when_and_takes_no_permit() {
        let f = limits(1, Some((1.0, 1)));
        drop(f.admit("a").unwrap());
        let over = f.admit("a").unwrap_err();
        assert!(matches!(over.limit, Limit::Rate(_)));
        assert!((1..=1000).contains(&over.retry_after_ms()), "{}", over.retry_after_ms());
        assert_eq!(over.retry_after_secs(), 1);
        assert_eq!(over.data()["retryAfterMs"], over.retry_after_ms());
        assert!(
            over.message()
                .starts_with("Too many calls: this caller may start 1 tool calls per second")
        );
        assert_eq!(f.tracked().0, 0, "the refused call holds no permit");
        assert!(f.admit("b").is_ok(), "another caller has its own allowance");
    }

    #[test]
    fn idle_callers_are_forgotten_by_the_rate_limiter() {
        // An allowance that is full again after 1 ms.
        let f = limits(0, Some((1000.0, 1)));
        for i in 0..SWEEP_EVERY - 1 {
            assert!(f.admit(&format!("caller-{i}")).is_ok());
        }
        assert_eq!(f.tracked().1, SWEEP_EVERY as usize - 1);
        std::thread::sleep(Duration::from_millis(20));
        // This check sweeps: every earlier caller's allowance is full again.
        assert!(f.admit("last").is_ok());
        assert!(f.tracked().1 <= 1, "{:?}", f.tracked());
    }

    #[test]
    fn keys() {
        let mut ext = Extensions::new();
        ext.insert(ConnectInfo(SocketAddr::from(([10, 0, 0, 7], 5000))));
        assert_eq!(key_of(&ext), "ip:10.0.0.7");
        let v6: SocketAddr = "[2001:db8:1:2:3:4:5:6]:1".parse().unwrap();
        ext.insert(ConnectInfo(v6));
        assert_eq!(key_of(&ext), "ip:2001:db8:1:2::/64");
        let mapped: SocketAddr = "[::ffff:10.0.0.8]:1".parse().unwrap();
        ext.insert(ConnectInfo(mapped));
        assert_eq!(key_of(&ext), "ip:10.0.0.8");
        ext.insert(super::super::caching::Authorized);
        assert_eq!(key_of(&ext), "bearer-token");
        ext.insert(Caller::new("alice", ["mcp"]));
        assert_eq!(key_of(&ext), "subject:alice");
        assert_eq!(key_of(&Extensions::new()), "anonymous");
        assert!(CallRate::per_second(0.0, NonZeroU32::MIN).is_none());
        assert!(CallRate::per_second(f64::NAN, NonZeroU32::MIN).is_none());
        assert_eq!(trim(0.5), "0.5");
    }
}
