//! This process as an instance of the shared store: a row in `toolsmith_instances` with a lease
//! it renews while it lives. A call claimed by an instance whose lease has lapsed (it died, or
//! lost the database) is *interrupted*: listed, never run again without `claim_again`.

use std::time::Duration;

use deadpool_postgres::Pool;

use super::storage;
use crate::runtime::store::{StoreError, StorePart};

/// The heartbeat task of an instance; dropping it stops the heartbeat.
pub(super) struct Heartbeat(tokio::task::JoinHandle<()>);

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The host name, for listings (`HOSTNAME`, else `/etc/hostname`, else `unknown`).
fn host() -> String {
    let from_env = std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty());
    let from_file = || std::fs::read_to_string("/etc/hostname").ok().map(|h| h.trim().to_owned());
    from_env
        .or_else(from_file)
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Registers this process as an instance holding a `lease`, forgets instances whose lease
/// lapsed long ago and that hold no call, and returns the new instance's id.
pub(super) async fn register(pool: &Pool, lease: Duration) -> Result<String, StoreError> {
    const WHAT: &str = "cannot register this instance in the store";
    let client = pool.get().await.map_err(|e| super::pool_error(StorePart::Bus, e))?;
    let insert = "INSERT INTO toolsmith_instances (id, host, pid, lease_ms) \
                  VALUES (gen_random_uuid()::text, $1, $2, $3) RETURNING id";
    let pid = i64::from(std::process::id());
    let row = client
        .query_one(insert, &[&host(), &pid, &millis(lease)])
        .await
        .map_err(storage(StorePart::Bus, WHAT))?;
    let forget = "DELETE FROM toolsmith_instances i \
                  WHERE i.heartbeat_at + (i.lease_ms * 10) * interval '1 millisecond' < now() \
                  AND NOT EXISTS (SELECT 1 FROM toolsmith_pending p WHERE p.owner_instance = i.id)";
    if let Err(e) = client.execute(forget, &[]).await {
        tracing::warn!(error = %super::describe(&e), "could not forget instances that ended long ago");
    }
    Ok(row.get(0))
}

/// Renews the instance's lease every third of it, until dropped. A renewal that fails is
/// logged and retried at the next beat; a lease that lapses meanwhile makes this instance's
/// running calls show as interrupted to the others (never run twice without a decision).
pub(super) fn heartbeat(pool: Pool, id: String, lease: Duration) -> Heartbeat {
    let every = (lease / 3).max(Duration::from_millis(50));
    Heartbeat(tokio::spawn(async move {
        const RENEW: &str = "renew this instance's lease in the store";
        let mut failing = false;
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let renewed = match pool.get().await {
                Ok(client) => {
                    let renew = "UPDATE toolsmith_instances SET heartbeat_at = now() WHERE id = $1";
                    client.execute(renew, &[&id]).await.map_err(|e| super::describe(&e))
                }
                Err(e) => Err(super::pool_error(StorePart::Bus, e).to_string()),
            };
            match renewed {
                Ok(_) => crate::runtime::settle::recovered(RENEW, &mut failing),
                Err(error) => crate::runtime::settle::outage(RENEW, &error, &mut failing),
            }
        }
    }))
}
