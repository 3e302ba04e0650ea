//! The bus of the instances on one PostgreSQL database: `NOTIFY` to send, one `LISTEN`ing
//! connection per instance to receive.
//!
//! Owns [`PgBus`]. Every instance of one schema listens on one channel named after the database
//! and schema (so tests and deployments in other schemas of the same database never hear each
//! other); a message names its sender and, when it is for one instance, its recipient, and the
//! others ignore it. A message larger than a `NOTIFY` payload may carry (8000 bytes) and meant
//! for one instance is written to `toolsmith_bus` and the notification names its row, which its
//! recipient reads and deletes (rows nobody took are swept with the store's retention). The
//! listening connection reconnects after a loss; what was sent meanwhile is missed, which the
//! protocols over the bus bound with acknowledgements and timeouts.

use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::Pool;
use futures::StreamExt as _;
use serde_json::{Value, json};
use tokio::sync::{broadcast, watch};
use tokio_postgres::{AsyncMessage, NoTls};

use super::{pool_error, storage};
use crate::runtime::bus::{BUS_BACKLOG, Bus, BusMessage, seal_with, verify_with};
use crate::runtime::store::{StoreError, StorePart};

/// The largest payload sent inline (PostgreSQL's limit is 8000 bytes).
const INLINE_MAX: usize = 7900;
/// The largest message the bus carries at all (through `toolsmith_bus`).
const MESSAGE_MAX: usize = 16 << 20;

/// The bus of one instance.
pub(crate) struct PgBus {
    pool: Pool,
    key: Vec<u8>,
    instance: String,
    channel: String,
    sender: broadcast::Sender<Arc<BusMessage>>,
    listening: watch::Receiver<bool>,
    listener: tokio::task::JoinHandle<()>,
}

impl Drop for PgBus {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

/// The channel of the instances on `database`.`schema`: a SQL identifier of at most 63 bytes.
pub(super) fn channel_name(database: &str, schema: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("{database}\0{schema}"));
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("toolsmith_bus_{hex}")
}

impl PgBus {
    /// Starts listening for `instance` on `channel` (a connection of its own, from `config`).
    pub(super) fn start(pool: Pool, config: tokio_postgres::Config, key: Vec<u8>, instance: String, channel: String) -> PgBus {
        let sender = broadcast::channel(BUS_BACKLOG).0;
        let (ready, listening) = watch::channel(false);
        let listen = Listener {
            config,
            pool: pool.clone(),
            instance: instance.clone(),
            channel: channel.clone(),
            sender: sender.clone(),
            ready,
        };
        PgBus {
            pool,
            key,
            instance,
            channel,
            sender,
            listening,
            listener: tokio::spawn(listen.run()),
        }
    }
}

#[async_trait::async_trait]
impl Bus for PgBus {
    fn instance_id(&self) -> &str {
        &self.instance
    }

    async fn publish(&self, to: Option<&str>, topic: &str, body: &Value) -> Result<(), StoreError> {
        let text = json!({"f": self.instance, "t": to, "p": topic, "b": body}).to_string();
        let client = self.pool.get().await.map_err(|e| pool_error(StorePart::Bus, e))?;
        let payload = if text.len() <= INLINE_MAX {
            text
        } else {
            let Some(to) = to.filter(|_| text.len() <= MESSAGE_MAX) else {
                return Err(StoreError::storage_of(
                    StorePart::Bus,
                    format!(
                        "a bus message of {} bytes is too large (at most {INLINE_MAX} to every instance, {MESSAGE_MAX} to one)",
                        text.len()
                    ),
                ));
            };
            let insert = "INSERT INTO toolsmith_bus (target, payload) VALUES ($1, $2) RETURNING id";
            let row = client.query_one(insert, &[&to, &text]).await;
            let id: i64 = row.map_err(storage(StorePart::Bus, "cannot send a bus message"))?.get(0);
            json!({"f": self.instance, "t": to, "r": id}).to_string()
        };
        let notify = client.execute("SELECT pg_notify($1, $2)", &[&self.channel, &payload]).await;
        notify.map_err(storage(StorePart::Bus, "cannot send a bus message")).map(drop)
    }

    fn subscribe(&self) -> broadcast::Receiver<Arc<BusMessage>> {
        self.sender.subscribe()
    }

    async fn alive(&self, id: &str) -> Result<bool, StoreError> {
        let client = self.pool.get().await.map_err(|e| pool_error(StorePart::Bus, e))?;
        let sql = "SELECT heartbeat_at + lease_ms * interval '1 millisecond' > now() FROM toolsmith_instances WHERE id = $1";
        let row = client.query_opt(sql, &[&id]).await;
        Ok(row
            .map_err(storage(StorePart::Bus, "cannot read the instances"))?
            .is_some_and(|r| r.get(0)))
    }

    fn seal(&self, fields: &[&str]) -> String {
        seal_with(&self.key, fields)
    }

    fn verify(&self, fields: &[&str], tag: &str) -> bool {
        verify_with(&self.key, fields, tag)
    }

    async fn listening(&self) -> Result<(), StoreError> {
        let mut listening = self.listening.clone();
        let ready = tokio::time::timeout(Duration::from_secs(15), listening.wait_for(|l| *l)).await;
        match ready {
            Ok(Ok(_)) => Ok(()),
            _ => Err(StoreError::storage_of(
                StorePart::Bus,
                "the bus could not LISTEN on PostgreSQL within 15 s (is the database reachable?)",
            )),
        }
    }
}

/// What the listener does, as its outage lines name it.
const LISTEN: &str = "listen on the store's bus (PostgreSQL LISTEN; retried every second)";

/// The task that keeps a connection listening and hands messages to the subscribers.
struct Listener {
    config: tokio_postgres::Config,
    pool: Pool,
    instance: String,
    channel: String,
    sender: broadcast::Sender<Arc<BusMessage>>,
    ready: watch::Sender<bool>,
}

impl Listener {
    async fn run(self) {
        // Whether listening fails now: said once, then with backoff, and once when it works again.
        let mut failing = false;
        loop {
            if let Err(error) = self.listen_once(&mut failing).await {
                crate::runtime::settle::outage(LISTEN, &error, &mut failing);
            }
            self.ready.send_replace(false);
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }

    /// One connection's life: `LISTEN`, then every notification until it fails.
    async fn listen_once(&self, failing: &mut bool) -> Result<(), String> {
        let (client, mut connection) = self.config.connect(NoTls).await.map_err(|e| super::describe(&e))?;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let driver = tokio::spawn(async move {
            let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
            while let Some(message) = messages.next().await {
                match message {
                    Ok(AsyncMessage::Notification(n)) => {
                        if tx.send(n.payload().to_owned()).is_err() {
                            break;
                        }
                    }
                    Ok(_) => {}
                    Err(e) => return super::describe(&e),
                }
            }
            "the connection closed".to_owned()
        });
        let listened = client.batch_execute(&format!("LISTEN {}", self.channel)).await;
        if let Err(e) = listened {
            driver.abort();
            return Err(super::describe(&e));
        }
        self.ready.send_replace(true);
        crate::runtime::settle::recovered(LISTEN, failing);
        while let Some(payload) = rx.recv().await {
            if let Some(message) = self.read(&payload).await {
                let _ = self.sender.send(Arc::new(message));
            }
        }
        Err(driver.await.unwrap_or_else(|e| e.to_string()))
    }

    /// A notification as a message for this instance (`None`: not for it, or unreadable).
    async fn read(&self, payload: &str) -> Option<BusMessage> {
        let value: Value = serde_json::from_str(payload).ok()?;
        let to = value.get("t").and_then(Value::as_str).map(str::to_owned);
        if to.as_ref().is_some_and(|to| *to != self.instance) {
            return None;
        }
        let value = match value.get("r").and_then(Value::as_i64) {
            Some(id) => self.take_row(id).await?,
            None => value,
        };
        Some(BusMessage {
            from: value.get("f")?.as_str()?.to_owned(),
            to,
            topic: value.get("p")?.as_str()?.to_owned(),
            body: value.get("b").cloned().unwrap_or(Value::Null),
        })
    }

    /// The large message in row `id` of `toolsmith_bus`, deleted as it is read.
    async fn take_row(&self, id: i64) -> Option<Value> {
        let client = self.pool.get().await.ok()?;
        let sql = "DELETE FROM toolsmith_bus WHERE id = $1 AND target = $2 RETURNING payload";
        let row = match client.query_opt(sql, &[&id, &self.instance]).await {
            Ok(row) => row?,
            Err(e) => {
                tracing::warn!(error = %super::describe(&e), "cannot read a large bus message");
                return None;
            }
        };
        serde_json::from_str(row.get::<_, &str>(0)).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_are_identifiers_per_database_and_schema() {
        let a = channel_name("test", "s1");
        assert_eq!(a.len(), "toolsmith_bus_".len() + 16);
        assert!(a.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'));
        assert_ne!(a, channel_name("test", "s2"));
        assert_ne!(a, channel_name("test2", "s1"));
    }
}
