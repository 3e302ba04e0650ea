//! Operating a runtime's store: expiry of old records (retention), the store's health, and the
//! bus its instances share.
//!
//! Owns [`Expiry`] (the periodic sweep), [`parse_retention`] (`7d`, `12h`, `30m`, `90s`) and the
//! runtime's [`Runtime::expire`], [`Runtime::keep_expiring`], [`Runtime::check_store`] and
//! [`Runtime::bus`]. What a store removes is [`PendingStore::expire`]'s.

use std::sync::Arc;
use std::time::Duration;

use super::bus::Bus;
use super::pending::PendingCall;
use super::store::{PendingStore, StoreError};
use super::Runtime;

/// The periodic expiry of a runtime's store; dropping it stops the sweeps.
#[derive(Debug)]
pub struct Expiry(tokio::task::JoinHandle<()>);

impl Drop for Expiry {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A retention like `7d`, `12h`, `30m`, `90s` or `500ms` (a bare number is seconds).
///
/// ```
/// use std::time::Duration;
/// use tool_core::runtime::parse_retention;
///
/// assert_eq!(parse_retention("7d"), Ok(Duration::from_secs(7 * 86_400)));
/// assert_eq!(parse_retention("90"), Ok(Duration::from_secs(90)));
/// assert!(parse_retention("0s").is_err());
/// assert!(parse_retention("soon").is_err());
/// ```
pub fn parse_retention(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let bad = || format!("`{text}` is not a retention: write a number and a unit, like 7d, 12h, 30m, 90s or 500ms");
    let n: u64 = number.parse().map_err(|_| bad())?;
    let unit_ms: u64 = match unit {
        "ms" => 1,
        "" | "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(bad()),
    };
    match n.checked_mul(unit_ms) {
        Some(0) => Err(format!("`{text}`: a retention must be more than zero")),
        Some(ms) if ms <= 3_650 * 86_400_000 => Ok(Duration::from_millis(ms)),
        _ => Err(format!("`{text}`: a retention is at most 3650 days")),
    }
}

impl Runtime {
    /// Expires what the store holds past `retention` once: waiting and interrupted calls
    /// created before then are removed (never run; each is logged and returned, and a later
    /// approval or resume of one is refused as unknown), as are the store's other leftovers.
    pub async fn expire(&self, retention: Duration) -> Result<Vec<PendingCall>, StoreError> {
        let expired = self.inner.store.expire(retention).await?;
        for call in &expired {
            tracing::info!(
                tool_call_id = %call.tool_call_id,
                tool = %call.tool_name,
                waited_for = call.kind.waits_for(),
                "expired a waiting call past the store's retention; it was not run"
            );
        }
        Ok(expired)
    }

    /// Expires past `retention` now and then every `min(retention / 10, 1 h)` (at least every
    /// second), until the returned [`Expiry`] is dropped. Needs a Tokio runtime.
    pub fn keep_expiring(&self, retention: Duration) -> Expiry {
        let every = (retention / 10).clamp(Duration::from_secs(1), Duration::from_secs(3_600));
        let runtime = self.clone();
        Expiry(tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                if let Err(error) = runtime.expire(retention).await {
                    tracing::warn!(%error, "the store's expiry failed; trying again at the next sweep");
                }
            }
        }))
    }

    /// Whether the store answers (one cheap lookup), for a health check.
    pub async fn check_store(&self) -> Result<(), StoreError> {
        self.inner.store.get("toolsmith-health-probe").await.map(drop)
    }

    /// The bus between the instances sharing this runtime's store (`None`: the store is this
    /// process's alone).
    pub fn bus(&self) -> Option<Arc<dyn Bus>> {
        self.inner.store.bus()
    }
}
