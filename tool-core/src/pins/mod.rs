//! Where remote tools' definitions are pinned: a remote tool is called only while its
//! definition is the one pinned.
//!
//! Owns [`PinStore`] (the small async trait a store implements) and its stores ([`MemoryPins`]
//! here, [`SqlitePins`] in `sqlite`, [`PostgresPins`] beside the PostgreSQL store's other
//! tables: [`PostgresStore::pins`](crate::runtime::PostgresStore::pins)), [`Pin`], the check of
//! one definition against its pin ([`check`]), the wrapper that runs that check before every
//! call of an imported tool ([`pinned`], in `pinned`) and the review API ([`pin_all`],
//! [`accept`]). The review commands are the CLI's (`toolsmith pins`); providers wrap the tools
//! they import: both edges reach the pins here, below them.
//! The first resolution of a tool pins its definition's fingerprint ([`crate::fingerprint`])
//! per provider and connection; a later definition that differs is recorded as *seen* and not
//! called, with a model-readable error naming what changed, until someone accepts it
//! (`toolsmith pins accept`). A remote server that changes a trusted tool's description or
//! schema (a "rug pull") thereby never reaches the model's calls unreviewed.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::fingerprint::{Change, Definition, Fingerprint};
use crate::spec::ToolSpec;
use crate::tool::{BoxFuture, Tool};

/// Which tool of which provider, over which connection.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PinKey {
    /// The provider (`mcp:<server>`, `composio`, `arcade`).
    pub provider: String,
    /// The connection (the MCP server's name, the user whose account the calls use).
    pub connection: String,
    /// The tool's id.
    pub tool: String,
}

/// A definition and when it was pinned or seen (seconds since the Unix epoch).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pinned {
    /// Its fingerprint.
    pub fingerprint: Fingerprint,
    /// The definition.
    pub definition: Definition,
    /// When.
    pub at: u64,
}

impl Pinned {
    /// `definition`, now.
    pub fn now(definition: Definition) -> Self {
        let at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Pinned {
            fingerprint: definition.fingerprint(),
            definition,
            at,
        }
    }
}

/// One pinned tool: the definition trusted, and the last different one seen (not trusted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pin {
    /// Which tool.
    pub key: PinKey,
    /// The definition its calls must have.
    pub pinned: Pinned,
    /// A different definition the provider resolved since, waiting for review.
    pub seen: Option<Pinned>,
}

impl Pin {
    /// What the seen definition changed, if one differs.
    pub fn changes(&self) -> Vec<Change> {
        self.seen
            .as_ref()
            .filter(|s| s.fingerprint != self.pinned.fingerprint)
            .map(|s| self.pinned.definition.changes(&s.definition))
            .unwrap_or_default()
    }
}

/// Why a pin could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PinError {
    /// The store failed.
    #[error("the pin store failed: {0}")]
    Store(String),
    /// No such pin.
    #[error("no tool `{tool}` of `{provider}` is pinned")]
    NotPinned {
        /// The provider.
        provider: String,
        /// The tool.
        tool: String,
    },
    /// Nothing different was seen.
    #[error("tool `{0}` has no changed definition to accept")]
    NothingToAccept(String),
}

/// Where pins are kept. Small on purpose: a store (SQLite, PostgreSQL, memory) keeps rows.
pub trait PinStore: Send + Sync + 'static {
    /// The pin of `key`, if any.
    fn get(&self, key: PinKey) -> BoxFuture<'_, Result<Option<Pin>, PinError>>;
    /// Pins `pinned` for `key` unless a pin exists; returns the pin in force.
    fn pin_if_absent(&self, key: PinKey, pinned: Pinned) -> BoxFuture<'_, Result<Pin, PinError>>;
    /// Records `seen` as the last different definition of `key` (pinned already).
    fn record_seen(&self, key: PinKey, seen: Pinned) -> BoxFuture<'_, Result<(), PinError>>;
    /// Makes `pinned` the pin of `key` (clearing what was seen).
    fn replace(&self, key: PinKey, pinned: Pinned) -> BoxFuture<'_, Result<(), PinError>>;
    /// Every pin, by key.
    fn list(&self) -> BoxFuture<'_, Result<Vec<Pin>, PinError>>;
}

/// Pins in this process's memory.
#[derive(Debug, Default)]
pub struct MemoryPins(Mutex<BTreeMap<PinKey, Pin>>);

impl MemoryPins {
    fn with<T>(&self, f: impl FnOnce(&mut BTreeMap<PinKey, Pin>) -> T) -> BoxFuture<'_, T>
    where
        T: Send + 'static,
    {
        let out = f(&mut self.0.lock().unwrap_or_else(|p| p.into_inner()));
        Box::pin(std::future::ready(out))
    }
}

impl PinStore for MemoryPins {
    fn get(&self, key: PinKey) -> BoxFuture<'_, Result<Option<Pin>, PinError>> {
        self.with(|m| Ok(m.get(&key).cloned()))
    }
    fn pin_if_absent(&self, key: PinKey, pinned: Pinned) -> BoxFuture<'_, Result<Pin, PinError>> {
        self.with(|m| {
            let pin = m.entry(key.clone()).or_insert(Pin { key, pinned, seen: None });
            Ok(pin.clone())
        })
    }
    fn record_seen(&self, key: PinKey, seen: Pinned) -> BoxFuture<'_, Result<(), PinError>> {
        self.with(|m| {
            if let Some(pin) = m.get_mut(&key) {
                pin.seen = Some(seen);
            }
            Ok(())
        })
    }
    fn replace(&self, key: PinKey, pinned: Pinned) -> BoxFuture<'_, Result<(), PinError>> {
        self.with(|m| {
            m.insert(key.clone(), Pin { key, pinned, seen: None });
            Ok(())
        })
    }
    fn list(&self) -> BoxFuture<'_, Result<Vec<Pin>, PinError>> {
        self.with(|m| Ok(m.values().cloned().collect()))
    }
}

/// What a definition is, next to its pin: the pinned one (pinned now if it had none), or a
/// different one (recorded as seen), with what changed.
async fn compare(store: &dyn PinStore, key: PinKey, spec: &ToolSpec) -> Result<Result<(), (Pin, Vec<Change>)>, PinError> {
    let now = Pinned::now(Definition::of(spec));
    let pin = store.pin_if_absent(key.clone(), now.clone()).await?;
    if pin.pinned.fingerprint == now.fingerprint {
        return Ok(Ok(()));
    }
    let changes = pin.pinned.definition.changes(&now.definition);
    store.record_seen(key, now).await?;
    Ok(Err((pin, changes)))
}

fn key_of(provider: &str, connection: &str, spec: &ToolSpec) -> PinKey {
    PinKey {
        provider: provider.to_owned(),
        connection: connection.to_owned(),
        tool: spec.id.clone(),
    }
}

/// Checks `spec` against its pin (pinning it when it has none): `Ok` when it is the pinned
/// definition; else the changed definition is recorded as seen and the model-readable error
/// names what changed.
pub async fn check(store: &dyn PinStore, provider: &str, connection: &str, spec: &ToolSpec) -> Result<(), ToolError> {
    let id = &spec.id;
    let compared = compare(store, key_of(provider, connection, spec), spec).await;
    let (pin, changes) = match compared {
        Ok(Ok(())) => return Ok(()),
        Ok(Err(changed)) => changed,
        Err(e) => return Err(ToolError::new(format!("Tool `{id}` was not called: its pin cannot be checked ({e}).")).for_tool(id)),
    };
    let changed: Vec<&str> = changes.into_iter().map(Change::as_str).collect();
    Err(ToolError::with_details(
        format!(
            "Tool `{id}` of `{provider}` was not called: its definition changed since it was pinned ({}). The new definition must be reviewed and accepted first (`{cmd} pins diff {provider} {id}`, then `{cmd} pins accept {provider} {id}`).",
            changed.join(", "),
            cmd = crate::error::operator(),
        ),
        serde_json::json!({"pinned": pin.pinned.fingerprint, "now": spec.fingerprint(), "changed": changed}),
    )
    .for_tool(id))
}

/// Pins every tool of `tools` that has no pin yet (the first resolution); tools already pinned
/// keep their pin, and a changed one is recorded as seen (its calls fail until accepted).
pub async fn pin_all(store: &dyn PinStore, provider: &str, connection: &str, tools: &[Arc<dyn Tool>]) -> Result<(), PinError> {
    for tool in tools {
        let spec = tool.spec();
        if let Err((_, changes)) = compare(store, key_of(provider, connection, spec), spec).await? {
            let changed: Vec<&str> = changes.into_iter().map(Change::as_str).collect();
            tracing::warn!(provider, tool = %spec.id, changed = %changed.join(", "), "a remote tool's definition differs from its pin; its calls are refused until the change is accepted");
        }
    }
    Ok(())
}

/// Accepts the changed definition last seen for a tool: it becomes the pin, and calls go
/// through again. Refused when nothing different was seen.
pub async fn accept(store: &dyn PinStore, key: PinKey) -> Result<Pin, PinError> {
    let pin = store.get(key.clone()).await?.ok_or_else(|| PinError::NotPinned {
        provider: key.provider.clone(),
        tool: key.tool.clone(),
    })?;
    let Some(seen) = pin.seen.filter(|s| s.fingerprint != pin.pinned.fingerprint) else {
        return Err(PinError::NothingToAccept(key.tool));
    };
    let accepted = Pinned::now(seen.definition);
    store.replace(key.clone(), accepted.clone()).await?;
    Ok(Pin {
        key,
        pinned: accepted,
        seen: None,
    })
}

mod pinned;
#[cfg(feature = "sqlite")]
mod sqlite;

pub use pinned::pinned;
// The PostgreSQL pins share the PostgreSQL store's pool and key, so they are defined beside it.
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use crate::runtime::store::PostgresPins;
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use sqlite::SqlitePins;
