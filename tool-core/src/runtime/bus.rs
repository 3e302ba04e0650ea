//! The bus between the instances sharing one store: messages to one instance or to all, and
//! whether an instance is still alive.
//!
//! Owns [`Bus`], [`BusMessage`] and [`MemoryBus`] (one process: every message reaches the
//! process itself). The PostgreSQL store has a bus over `LISTEN/NOTIFY`
//! (`store::postgres::bus`); a store hands out its bus with [`PendingStore::bus`]. What goes
//! over the bus (a parked call's answer, a changed tool list) is the edges' business; the bus
//! carries JSON and knows nothing of MCP.
//!
//! [`PendingStore::bus`]: super::PendingStore::bus

use std::sync::{Arc, OnceLock};

use serde_json::Value;
use tokio::sync::broadcast;

use super::store::StoreError;

/// A message on the bus.
#[derive(Debug, Clone, PartialEq)]
pub struct BusMessage {
    /// The instance that sent it.
    pub from: String,
    /// The instance it is for (`None`: every instance, the sender included).
    pub to: Option<String>,
    /// What it is about (e.g. `mcp.tools_changed`).
    pub topic: String,
    /// Its content.
    pub body: Value,
}

/// How many messages a slow subscriber may lag behind before it misses some.
pub const BUS_BACKLOG: usize = 1024;

/// Messages between the instances sharing a store, and their liveness.
///
/// Delivery is at most once and only to instances listening when the message is sent: a
/// protocol over the bus acknowledges what it must not lose, and bounds every wait.
///
/// ```
/// use tool_core::runtime::backend::{Bus, MemoryBus};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let bus = MemoryBus::new();
/// let mut messages = bus.subscribe();
/// bus.publish(None, "hello", &serde_json::json!({"n": 1})).await.unwrap();
/// let got = messages.recv().await.unwrap();
/// assert_eq!((got.topic.as_str(), got.from.as_str()), ("hello", bus.instance_id()));
/// assert!(bus.alive(bus.instance_id()).await.unwrap());
/// # });
/// ```
#[async_trait::async_trait]
pub trait Bus: Send + Sync + 'static {
    /// This instance's id (what `to` names).
    fn instance_id(&self) -> &str;
    /// Sends `body` to the instance `to` (or to every instance). A message too large for the
    /// bus, or a bus that cannot reach its store, is an error.
    async fn publish(&self, to: Option<&str>, topic: &str, body: &Value) -> Result<(), StoreError>;
    /// The messages for this instance (and for all) from now on.
    fn subscribe(&self) -> broadcast::Receiver<Arc<BusMessage>>;
    /// Whether the instance `id` still renews its lease (an unknown id is not alive).
    async fn alive(&self, id: &str) -> Result<bool, StoreError>;
    /// A tag over `fields` with the key every instance shares (hex), so a value a client
    /// carries between instances cannot be forged or redirected.
    fn seal(&self, fields: &[&str]) -> String;
    /// Whether `tag` is [`seal`](Bus::seal)'s tag of `fields` (in constant time).
    fn verify(&self, fields: &[&str], tag: &str) -> bool;
    /// Waits (bounded) until the bus receives messages: a server calls it before it serves.
    async fn listening(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// The bus of one process: what it publishes, it receives; no other instance exists.
pub struct MemoryBus {
    /// Its id (`local-` and 16 hex digits) and key, drawn when first needed (a server that
    /// seals nothing and never names its instance draws neither: start-up spends no hashing
    /// on them).
    identity: OnceLock<(String, [u8; 32])>,
    /// The channel, made at the first subscription: its backlog ([`BUS_BACKLOG`] slots, 32 KiB)
    /// is most of an idle server's heap, and a server that shares no store never subscribes to
    /// its own bus. A message published before anyone subscribed reaches nobody, as it would
    /// through a channel without receivers.
    sender: OnceLock<broadcast::Sender<Arc<BusMessage>>>,
}

impl std::fmt::Debug for MemoryBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryBus").field("id", &self.id()).finish_non_exhaustive()
    }
}

impl Default for MemoryBus {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryBus {
    /// A bus for this process alone, with a random key (drawn at its first use).
    #[inline]
    pub fn new() -> Self {
        MemoryBus {
            identity: OnceLock::new(),
            sender: OnceLock::new(),
        }
    }

    /// The bus's id and key, drawn now if nothing needed them before.
    fn identity(&self) -> &(String, [u8; 32]) {
        self.identity.get_or_init(|| {
            let key = random_key();
            let id: String = key[..8].iter().map(|b| format!("{b:02x}")).collect();
            (format!("local-{id}"), key)
        })
    }

    fn id(&self) -> &str {
        &self.identity().0
    }
}

#[async_trait::async_trait]
impl Bus for MemoryBus {
    fn instance_id(&self) -> &str {
        self.id()
    }

    async fn publish(&self, to: Option<&str>, topic: &str, body: &Value) -> Result<(), StoreError> {
        if to.is_some_and(|to| to != self.id()) {
            return Ok(());
        }
        // Nobody ever subscribed: nobody listens.
        let Some(sender) = self.sender.get() else {
            return Ok(());
        };
        let message = BusMessage {
            from: self.id().to_owned(),
            to: to.map(str::to_owned),
            topic: topic.to_owned(),
            body: body.clone(),
        };
        // Nobody listening is not an error: the message reaches whoever listens.
        let _ = sender.send(Arc::new(message));
        Ok(())
    }

    fn subscribe(&self) -> broadcast::Receiver<Arc<BusMessage>> {
        self.sender.get_or_init(|| broadcast::channel(BUS_BACKLOG).0).subscribe()
    }

    async fn alive(&self, id: &str) -> Result<bool, StoreError> {
        Ok(id == self.id())
    }

    fn seal(&self, fields: &[&str]) -> String {
        seal_with(&self.identity().1, fields)
    }

    fn verify(&self, fields: &[&str], tag: &str) -> bool {
        verify_with(&self.identity().1, fields, tag)
    }
}

/// 32 random bytes: the standard library's per-process random hasher keys (from the OS),
/// drawn several times and hashed together with the time and process id.
fn random_key() -> [u8; 32] {
    use sha2::{Digest, Sha256};
    use std::hash::{BuildHasher, Hasher};
    let mut digest = Sha256::new();
    for i in 0u8..8 {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u8(i);
        digest.update(hasher.finish().to_le_bytes());
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    digest.update(now.as_nanos().to_le_bytes());
    digest.update(std::process::id().to_le_bytes());
    digest.finalize().into()
}

/// The SHA-256 HMAC of framed `fields` under `key`, in hex.
pub(crate) fn seal_with(key: &[u8], fields: &[&str]) -> String {
    mac(key, fields).iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `tag` (hex) is `fields`' seal under `key`, compared in constant time.
pub(crate) fn verify_with(key: &[u8], fields: &[&str], tag: &str) -> bool {
    let expected = seal_with(key, fields);
    if expected.len() != tag.len() {
        return false;
    }
    expected.bytes().zip(tag.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

/// HMAC-SHA256 (RFC 2104) over each field framed by its length, so no two lists of fields
/// feed it the same bytes.
fn mac(key: &[u8], fields: &[&str]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    inner.update(b"toolsmith bus seal v1");
    for field in fields {
        inner.update((field.len() as u64).to_le_bytes());
        inner.update(field.as_bytes());
    }
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seals_depend_on_key_fields_and_framing() {
        let tag = seal_with(b"k", &["ab", "c"]);
        assert!(verify_with(b"k", &["ab", "c"], &tag));
        assert!(!verify_with(b"k", &["a", "bc"], &tag));
        assert!(!verify_with(b"k2", &["ab", "c"], &tag));
        assert!(!verify_with(b"k", &["ab", "c"], &tag[1..]));
        assert_eq!(tag.len(), 64);
    }

    #[test]
    fn a_memory_bus_draws_its_identity_once_when_first_needed() {
        let bus = MemoryBus::new();
        assert!(bus.identity.get().is_none(), "nothing is drawn before it is needed");
        let tag = bus.seal(&["run", "1"]);
        let id = bus.instance_id().to_owned();
        assert!(id.starts_with("local-") && id.len() == "local-".len() + 16, "{id}");
        assert_eq!(bus.instance_id(), id, "the id does not change once drawn");
        assert!(bus.verify(&["run", "1"], &tag), "the key does not change once drawn");
        let other = MemoryBus::new();
        assert!(!other.verify(&["run", "1"], &tag), "each bus has a key of its own");
        assert_ne!(other.instance_id(), id);
    }

    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    #[test]
    fn the_seal_is_hmac_sha256() {
        use hmac::{KeyInit, Mac};
        let mut reference = <hmac::Hmac<sha2::Sha256> as KeyInit>::new_from_slice(b"key").unwrap();
        reference.update(b"toolsmith bus seal v1");
        reference.update(&2u64.to_le_bytes());
        reference.update(b"ab");
        let expected: String = reference.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(seal_with(b"key", &["ab"]), expected);
        let long = [7u8; 100];
        let mut reference = <hmac::Hmac<sha2::Sha256> as KeyInit>::new_from_slice(&long).unwrap();
        reference.update(b"toolsmith bus seal v1");
        let expected: String = reference.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(seal_with(&long, &[]), expected);
    }

    #[tokio::test]
    async fn a_memory_bus_delivers_to_itself_only() {
        let bus = MemoryBus::new();
        let mut rx = bus.subscribe();
        bus.publish(Some("elsewhere"), "x", &Value::Null).await.unwrap();
        bus.publish(Some(bus.instance_id()), "mine", &Value::Null).await.unwrap();
        assert_eq!(rx.recv().await.unwrap().topic, "mine");
        assert!(!bus.alive("elsewhere").await.unwrap());
    }

    /// The channel is made at the first subscription: a message published before it reaches
    /// nobody (as through a channel without receivers), every one after reaches each
    /// subscriber, a late subscriber included, from its subscription on.
    #[tokio::test]
    async fn a_memory_bus_makes_its_channel_when_first_subscribed() {
        let bus = MemoryBus::new();
        assert!(bus.sender.get().is_none(), "a new bus holds no channel");
        bus.publish(None, "unheard", &Value::Null).await.unwrap();
        assert!(bus.sender.get().is_none(), "publishing to nobody makes no channel");
        let mut first = bus.subscribe();
        bus.publish(None, "one", &Value::Null).await.unwrap();
        let mut second = bus.subscribe();
        bus.publish(Some(bus.instance_id()), "two", &Value::Null).await.unwrap();
        assert_eq!(first.recv().await.unwrap().topic, "one");
        assert_eq!(first.recv().await.unwrap().topic, "two");
        assert_eq!(second.recv().await.unwrap().topic, "two");
        assert!(first.try_recv().is_err() && second.try_recv().is_err());
    }
}
