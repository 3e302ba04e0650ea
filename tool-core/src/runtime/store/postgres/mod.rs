//! The PostgreSQL store: waiting calls in a database shared by every instance.
//!
//! Owns [`PostgresStore`] (a [`PendingStore`] over a `deadpool` pool of `tokio-postgres`
//! connections) and [`PostgresOptions`]. Several processes on several hosts share one database:
//! claiming is one `UPDATE … WHERE state = 'waiting' … RETURNING`, so of any number of
//! instances approving the same call at once exactly one runs it. Each instance holds a lease it
//! renews (`instance`); a call claimed by an instance whose lease lapsed is interrupted. Every
//! row carries integrity tags (`row`, the key shared by all instances); the schema is versioned
//! and migrated on connect (`migrate`).

mod audit;
mod bus;
mod credentials;
mod instance;
mod migrate;
mod pins;
mod receipts;
mod results;
mod row;
mod tasks;

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use deadpool_postgres::{Manager, Object, Pool, PoolError, Runtime};
use tokio_postgres::NoTls;

use super::checks;
use super::integrity::Key;
use super::{PendingStore, StoreError, StorePart, interrupted};
use crate::runtime::pending::PendingCall;
use crate::runtime::state::{CallState, Claim, StoredCall};
pub use credentials::PostgresCredentials;
pub use migrate::Migrated;
pub use pins::PostgresPins;
use row::{COLUMNS, Row, State};

/// How a [`PostgresStore`] connects and behaves.
///
/// ```
/// use std::time::Duration;
/// use tool_core::runtime::PostgresOptions;
///
/// let options = PostgresOptions::default().schema("toolsmith").unwrap().lease(Duration::from_secs(10));
/// assert!(PostgresOptions::default().schema("no; DROP").is_err());
/// ```
#[derive(Clone)]
pub struct PostgresOptions {
    schema: Option<String>,
    key: Option<Vec<u8>>,
    lease: Duration,
    max_connections: usize,
    migrate: bool,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        PostgresOptions {
            schema: None,
            key: None,
            lease: Duration::from_secs(30),
            max_connections: 8,
            migrate: true,
        }
    }
}

impl fmt::Debug for PostgresOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresOptions")
            .field("schema", &self.schema)
            .field("key", &self.key.as_ref().map(|_| "<given>"))
            .field("lease", &self.lease)
            .field("max_connections", &self.max_connections)
            .field("migrate", &self.migrate)
            .finish()
    }
}

impl PostgresOptions {
    /// The PostgreSQL schema holding the tables, created when missing (default: the
    /// connection's `search_path`, normally `public`). Letters, digits and `_`, not starting
    /// with a digit, at most 63 characters.
    pub fn schema(mut self, name: &str) -> Result<Self, StoreError> {
        let valid = !name.is_empty()
            && name.len() <= 63
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(StoreError::storage_of(
                StorePart::Calls,
                format!("`{name}` cannot be a schema name: use letters, digits and `_` (not starting with a digit), at most 63"),
            ));
        }
        self.schema = Some(name.to_owned());
        Ok(self)
    }

    /// The integrity key (default: the environment variable `TOOLSMITH_STORE_KEY`). Every
    /// instance on the database must use the same key.
    pub fn key(mut self, key: &[u8]) -> Self {
        self.key = Some(key.to_vec());
        self
    }

    /// How long a claim outlives its instance's last heartbeat before the call shows as
    /// interrupted (default 30 s; renewed every third of it).
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(150));
        self
    }

    /// The pool's size (default 8).
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// Whether connecting applies missing migrations (default) or only checks that the schema
    /// is this build's (see [`PostgresStore::migrate`]).
    pub fn migrate(mut self, yes: bool) -> Self {
        self.migrate = yes;
        self
    }
}

/// Waiting calls in a PostgreSQL database shared by every instance (`--store postgres://…`).
///
/// Connecting migrates the schema (refusing a database whose schema is newer than this build),
/// registers this process as an instance with a lease it renews in the background, and reads
/// the integrity key (`TOOLSMITH_STORE_KEY`, the same on every instance, or
/// [`PostgresOptions::key`]). TLS is not built in: reach the database over a trusted network
/// or a local socket proxy.
pub struct PostgresStore {
    pool: Pool,
    key: Key,
    instance: String,
    shown: String,
    /// What the bus's listening connection connects with, and its channel.
    listen: (tokio_postgres::Config, String),
    bus: std::sync::OnceLock<std::sync::Arc<bus::PgBus>>,
    _heartbeat: instance::Heartbeat,
}

impl fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresStore")
            .field("database", &self.shown)
            .field("instance", &self.instance)
            .finish_non_exhaustive()
    }
}

/// A driver error as text: its kind, its cause, and for a database error its SQLSTATE and
/// message (never its detail, which may quote a row).
pub(super) fn describe(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{} {}: {}", db.severity(), db.code().code(), db.message());
    }
    match std::error::Error::source(e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}

/// Turns a driver error into [`StoreError::Storage`] saying what was being done.
pub(super) fn storage(part: StorePart, what: &'static str) -> impl Fn(tokio_postgres::Error) -> StoreError {
    move |e| StoreError::storage_caused_by(part, format!("{what}: {}", describe(&e)), e)
}

/// A pool error as [`StoreError::Storage`].
pub(super) fn pool_error(part: StorePart, e: PoolError) -> StoreError {
    match e {
        PoolError::Backend(e) => StoreError::storage_caused_by(part, format!("cannot reach PostgreSQL: {}", describe(&e)), e),
        PoolError::Timeout(_) => StoreError::storage_of(part, "timed out waiting for a PostgreSQL connection (is the database reachable?)"),
        other => StoreError::storage_of(part, format!("cannot reach PostgreSQL: {other}")),
    }
}

fn now_ms() -> i64 {
    let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
}

/// The pool of connections to `url`, in `options`' schema.
fn pool(url: &str, options: &PostgresOptions) -> Result<Pool, StoreError> {
    let config = config(url, options)?;
    let builder = Pool::builder(Manager::new(config, NoTls))
        .max_size(options.max_connections)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(Duration::from_secs(30)))
        .create_timeout(Some(Duration::from_secs(15)));
    builder.build().map_err(|e| {
        let shown = super::hide_password(url);
        StoreError::storage_of(StorePart::Store, format!("cannot set up the pool for {shown}: {e}"))
    })
}

/// How to connect to `url`, in `options`' schema.
fn config(url: &str, options: &PostgresOptions) -> Result<tokio_postgres::Config, StoreError> {
    let shown = super::hide_password(url);
    let invalid = |e: tokio_postgres::Error| {
        StoreError::storage_caused_by(StorePart::Store, format!("{shown} is not a PostgreSQL URL: {}", describe(&e)), e)
    };
    let mut config: tokio_postgres::Config = url.parse().map_err(invalid)?;
    config.connect_timeout(Duration::from_secs(10));
    if config.get_application_name().is_none() {
        config.application_name("toolsmith");
    }
    if let Some(schema) = &options.schema {
        config.options(format!("-c search_path={schema}"));
    }
    Ok(config)
}

/// The key: given, else from the environment, else a clear error.
fn key(options: &PostgresOptions) -> Result<Key, StoreError> {
    let key = match &options.key {
        Some(bytes) => Key::from_bytes(bytes),
        None => Key::from_env().unwrap_or_else(|| {
            Err(format!(
                "the PostgreSQL store needs the integrity key every instance shares: set {} to the same 32 or more random \
                 characters on every instance",
                super::integrity::KEY_ENV
            ))
        }),
    };
    key.map_err(|e| StoreError::storage_of(StorePart::Store, e))
}

impl PostgresStore {
    /// One call's row, checked: the call and where it is in its life.
    async fn checked(&self, tool_call_id: &str) -> Result<Option<(PendingCall, CallState)>, StoreError> {
        let client = self.client(StorePart::Calls).await?;
        let Some(row) = self.read(&client, Some(tool_call_id)).await?.pop() else {
            return Ok(None);
        };
        row.check(&self.key).map(Some).map_err(|reason| damaged(tool_call_id, reason))
    }

    /// Connects to `url` (`postgres://user@host:5432/db`) with the default options.
    pub async fn connect(url: &str) -> Result<PostgresStore, StoreError> {
        Self::connect_with(url, PostgresOptions::default()).await
    }

    /// Connects to `url`: migrates (or checks) the schema, registers this instance and starts
    /// renewing its lease.
    pub async fn connect_with(url: &str, options: PostgresOptions) -> Result<PostgresStore, StoreError> {
        let key = key(&options)?;
        let pool = pool(url, &options)?;
        let mut client = pool.get().await.map_err(|e| pool_error(StorePart::Store, e))?;
        if options.migrate {
            migrate::migrate(&mut client, options.schema.as_deref()).await?;
        } else {
            migrate::check(&client).await?;
        }
        let place = client
            .query_one("SELECT current_database()::text, COALESCE(current_schema()::text, '')", &[])
            .await
            .map_err(storage(StorePart::Store, "cannot read the database's name"))?;
        let channel = bus::channel_name(place.get(0), place.get(1));
        drop(client);
        let instance = instance::register(&pool, options.lease).await?;
        let heartbeat = instance::heartbeat(pool.clone(), instance.clone(), options.lease);
        Ok(PostgresStore {
            pool,
            key,
            instance,
            shown: super::hide_password(url),
            listen: (config(url, &options)?, channel),
            bus: std::sync::OnceLock::new(),
            _heartbeat: heartbeat,
        })
    }

    /// Applies the migrations the database at `url` lacks (`toolsmith store migrate`); a
    /// re-run changes nothing. A schema newer than this build is refused.
    pub async fn migrate(url: &str, options: &PostgresOptions) -> Result<Migrated, StoreError> {
        let pool = pool(url, options)?;
        let mut client = pool.get().await.map_err(|e| pool_error(StorePart::Store, e))?;
        migrate::migrate(&mut client, options.schema.as_deref()).await
    }

    /// The pins of remote tools kept in this database (`toolsmith_pins`), over the same
    /// connections and integrity key: every instance sharing the database enforces the same
    /// pins, and `toolsmith --store postgres://… pins` reviews them.
    pub fn pins(&self) -> PostgresPins {
        PostgresPins::new(self.pool.clone(), self.key.clone())
    }

    /// The credentials of imported servers kept in this database (`toolsmith_credentials`:
    /// `toolsmith --store postgres://… mcp login`), over the same connections and integrity key.
    pub fn credentials(&self) -> crate::credentials::PostgresCredentials {
        credentials::PostgresCredentials::new(self.pool.clone(), self.key.clone())
    }

    /// This instance's id (recorded as the owner of the calls it claims).
    pub fn instance_id(&self) -> &str {
        &self.instance
    }

    async fn client(&self, part: StorePart) -> Result<Object, StoreError> {
        self.pool.get().await.map_err(|e| pool_error(part, e))
    }

    /// The rows (one, or all), with whether their owner's lease is current, oldest first.
    async fn read(&self, client: &Object, id: Option<&str>) -> Result<Vec<Row>, StoreError> {
        let alive = "COALESCE(i.heartbeat_at + i.lease_ms * interval '1 millisecond' > now(), false)";
        let from = "toolsmith_pending p LEFT JOIN toolsmith_instances i ON i.id = p.owner_instance";
        let rows = match id {
            Some(id) => {
                let sql = format!("SELECT {COLUMNS}, {alive} FROM {from} WHERE tool_call_id = $1");
                client.query(&sql, &[&id]).await
            }
            None => {
                let sql = format!("SELECT {COLUMNS}, {alive} FROM {from} ORDER BY created_at_ms, tool_call_id");
                client.query(&sql, &[]).await
            }
        };
        let rows = rows.map_err(storage(StorePart::Calls, "cannot read calls"))?;
        Ok(rows.iter().map(|r| Row::read(r, true)).collect())
    }

    /// Moves a row to `to` if it is still exactly in the state `from` (every state column, and
    /// the tag over them): the one statement every change of state is, so of concurrent changes
    /// exactly one wins. Returns the row as it is now, when it changed.
    async fn set_state(&self, client: &Object, id: &str, (from, from_tag): (&State, &[u8]), to: &State) -> Result<Option<Row>, StoreError> {
        let sql = format!(
            "UPDATE toolsmith_pending SET state = $2, owner_instance = $3, owner_pid = $4, claimed_at_ms = $5, state_tag = $6 \
             WHERE tool_call_id = $1 AND state IS NOT DISTINCT FROM $7 AND owner_instance IS NOT DISTINCT FROM $8 \
             AND owner_pid IS NOT DISTINCT FROM $9 AND claimed_at_ms IS NOT DISTINCT FROM $10 AND state_tag = $11 \
             RETURNING {COLUMNS}"
        );
        let tag = to.tag(id, &self.key);
        let values: [&(dyn tokio_postgres::types::ToSql + Sync); 11] = [
            &id,
            &to.state,
            &to.owner_instance,
            &to.owner_pid,
            &to.claimed_at_ms,
            &tag,
            &from.state,
            &from.owner_instance,
            &from.owner_pid,
            &from.claimed_at_ms,
            &from_tag,
        ];
        let row = client
            .query_opt(&sql, &values)
            .await
            .map_err(storage(StorePart::Calls, "cannot change a call's state"))?;
        Ok(row.map(|r| Row::read(&r, false)))
    }

    /// Takes a call for this instance: a waiting one (one `UPDATE`), or (`again`) an
    /// interrupted one too (one `UPDATE` conditioned on the interrupted claim).
    async fn take(&self, id: &str, again: bool) -> Result<Option<PendingCall>, StoreError> {
        let client = self.client(StorePart::Calls).await?;
        let waiting = State::waiting();
        let waiting_tag = waiting.tag(id, &self.key);
        let at = i64::try_from(Claim::now_ms()).unwrap_or(i64::MAX);
        let mine = State::running(&self.instance, std::process::id(), at);
        for _ in 0..3 {
            // The claim: `UPDATE … WHERE state = 'waiting' (and its tag) … RETURNING`.
            if let Some(row) = self.set_state(&client, id, (&waiting, &waiting_tag), &mine).await? {
                return match row.call(&self.key) {
                    Ok(call) => Ok(Some(call)),
                    Err(reason) => {
                        // Nothing runs: the row goes back as it was.
                        let mine_tag = mine.tag(id, &self.key);
                        self.set_state(&client, id, (&mine, &mine_tag), &waiting).await?;
                        Err(damaged(id, reason))
                    }
                };
            }
            // Not waiting (or its state tag is not a waiting call's): find out why.
            let Some(row) = self.read(&client, Some(id)).await?.pop() else {
                return Ok(None);
            };
            let (call, state) = row.check(&self.key).map_err(|reason| damaged(id, reason))?;
            match state {
                // Put back to waiting since the claim: try again.
                CallState::Waiting => continue,
                CallState::Running(_) => return Err(StoreError::Busy(id.to_owned())),
                CallState::Interrupted(_) if !again => return Err(interrupted(call, state)),
                CallState::Interrupted(claim) => {
                    let from_tag = row.state_tag.unwrap_or_default();
                    if self.set_state(&client, id, (&row.state, &from_tag), &mine).await?.is_none() {
                        return Err(StoreError::Busy(id.to_owned()));
                    }
                    tracing::warn!(tool_call_id = id, tool = %call.tool_name, %claim, "taking an interrupted call again, as decided");
                    return Ok(Some(call));
                }
            }
        }
        Err(StoreError::Busy(id.to_owned()))
    }
}

fn damaged(id: &str, reason: String) -> StoreError {
    StoreError::Damaged { id: id.to_owned(), reason }
}

#[async_trait::async_trait]
impl PendingStore for PostgresStore {
    fn backend(&self) -> &'static str {
        "postgres"
    }
    async fn save(&self, call: &PendingCall) -> Result<(), StoreError> {
        let id = &call.tool_call_id;
        let encode_failed =
            |e: serde_json::Error| StoreError::storage_of(StorePart::Calls, format!("cannot encode call `{id}` ({:?})", e.classify()));
        let mut row = Row {
            id: id.clone(),
            tool_name: Some(call.tool_name.clone()),
            kind: Some(call.kind.as_str().to_owned()),
            json: Some(serde_json::to_string(call).map_err(encode_failed)?),
            created_at_ms: Some(i64::try_from(call.created_at_ms).unwrap_or(i64::MAX)),
            state: State::waiting(),
            ..Row::default()
        };
        row.call_tag = Some(row.call_tag(&self.key));
        row.state_tag = Some(row.state.tag(id, &self.key));
        let sql = format!(
            "INSERT INTO toolsmith_pending ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
             ON CONFLICT (tool_call_id) DO UPDATE SET tool_name = EXCLUDED.tool_name, kind = EXCLUDED.kind, \
             call_json = EXCLUDED.call_json, created_at_ms = EXCLUDED.created_at_ms, call_tag = EXCLUDED.call_tag, \
             state = EXCLUDED.state, owner_instance = NULL, owner_pid = NULL, claimed_at_ms = NULL, state_tag = EXCLUDED.state_tag"
        );
        let s = &row.state;
        let values: [&(dyn tokio_postgres::types::ToSql + Sync); 11] = [
            &row.id,
            &row.tool_name,
            &row.kind,
            &row.json,
            &row.created_at_ms,
            &row.call_tag,
            &s.state,
            &s.owner_instance,
            &s.owner_pid,
            &s.claimed_at_ms,
            &row.state_tag,
        ];
        let client = self.client(StorePart::Calls).await?;
        client
            .execute(&sql, &values)
            .await
            .map_err(storage(StorePart::Calls, "cannot save a call"))
            .map(drop)
    }

    async fn claim(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError> {
        self.take(tool_call_id, false).await
    }

    async fn claim_again(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError> {
        self.take(tool_call_id, true).await
    }

    /// Puts a claimed call back to waiting; a row that fails its checks is left as it is.
    async fn release(&self, tool_call_id: &str) -> Result<(), StoreError> {
        let client = self.client(StorePart::Calls).await?;
        let Some(row) = self.read(&client, Some(tool_call_id)).await?.pop() else {
            return Ok(());
        };
        let (_, state) = row.check(&self.key).map_err(|reason| damaged(tool_call_id, reason))?;
        if state != CallState::Waiting {
            let from_tag = row.state_tag.clone().unwrap_or_default();
            self.set_state(&client, tool_call_id, (&row.state, &from_tag), &State::waiting())
                .await?;
        }
        Ok(())
    }

    /// Gives up this instance's `claim`: the row keeps its claim but no owning instance, which
    /// reads as interrupted (no live lease holds it).
    async fn abandon(&self, tool_call_id: &str, claim: &Claim) -> Result<bool, StoreError> {
        let client = self.client(StorePart::Calls).await?;
        let Some(row) = self.read(&client, Some(tool_call_id)).await?.pop() else {
            return Ok(false);
        };
        let (_, state) = row.check(&self.key).map_err(|reason| damaged(tool_call_id, reason))?;
        let mine = row.state.owner_instance.as_deref() == Some(self.instance.as_str());
        if !mine || state != CallState::Running(*claim) {
            return Ok(false);
        }
        let from_tag = row.state_tag.clone().unwrap_or_default();
        let abandoned = State {
            owner_instance: None,
            ..row.state.clone()
        };
        let changed = self.set_state(&client, tool_call_id, (&row.state, &from_tag), &abandoned).await?;
        Ok(changed.is_some())
    }

    async fn remove(&self, tool_call_id: &str) -> Result<(), StoreError> {
        let client = self.client(StorePart::Calls).await?;
        let removed = client
            .execute("DELETE FROM toolsmith_pending WHERE tool_call_id = $1", &[&tool_call_id])
            .await;
        removed.map_err(storage(StorePart::Calls, "cannot remove a call")).map(drop)
    }

    /// Removes the row while this instance runs it under exactly `claim`: one `DELETE`
    /// conditioned on the claim's columns, so a row saved or claimed since stays.
    async fn remove_claimed(&self, tool_call_id: &str, claim: &Claim) -> Result<bool, StoreError> {
        let (Some(pid), Some(at)) = (claim.owner_pid, claim.claimed_at_ms) else {
            return Ok(false);
        };
        if pid != std::process::id() {
            return Ok(false);
        }
        let (pid, at) = (i64::from(pid), i64::try_from(at).unwrap_or(i64::MAX));
        let client = self.client(StorePart::Calls).await?;
        let removed = client
            .execute(
                "DELETE FROM toolsmith_pending WHERE tool_call_id = $1 AND state = 'running' \
                 AND owner_instance = $2 AND owner_pid = $3 AND claimed_at_ms = $4",
                &[&tool_call_id, &self.instance, &pid, &at],
            )
            .await;
        Ok(removed.map_err(storage(StorePart::Calls, "cannot remove a call"))? > 0)
    }

    async fn state(&self, tool_call_id: &str) -> Result<Option<CallState>, StoreError> {
        Ok(self.checked(tool_call_id).await?.map(|(_, state)| state))
    }

    async fn get(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError> {
        Ok(self.checked(tool_call_id).await?.map(|(call, _)| call))
    }

    fn receipts(&self) -> Option<std::sync::Arc<dyn super::ReceiptStore>> {
        Some(std::sync::Arc::new(receipts::PgReceipts {
            pool: self.pool.clone(),
            key: self.key.clone(),
            instance: self.instance.clone(),
        }))
    }

    fn audit(&self) -> Option<std::sync::Arc<dyn super::AuditStore>> {
        Some(std::sync::Arc::new(audit::PgAudit {
            pool: self.pool.clone(),
            key: self.key.clone(),
        }))
    }

    fn results(&self, limits: super::ResultLimits) -> Option<std::sync::Arc<dyn super::ResultStore>> {
        Some(std::sync::Arc::new(results::PgResults {
            pool: self.pool.clone(),
            key: self.key.clone(),
            limits,
        }))
    }

    /// The bus over `LISTEN/NOTIFY`, started (a connection of its own) on first use.
    fn bus(&self) -> Option<std::sync::Arc<dyn crate::runtime::Bus>> {
        // The listener is a task: without a Tokio runtime there is no bus.
        tokio::runtime::Handle::try_current().ok()?;
        let bus = self.bus.get_or_init(|| {
            let (config, channel) = self.listen.clone();
            let key = self.key.bytes().to_vec();
            std::sync::Arc::new(bus::PgBus::start(self.pool.clone(), config, key, self.instance.clone(), channel))
        });
        Some(bus.clone())
    }

    /// Expires waiting and interrupted calls created before `retention` (one `DELETE … RETURNING`
    /// each, so a call claimed meanwhile is kept), and bus messages nobody took.
    async fn expire(&self, retention: Duration) -> Result<Vec<PendingCall>, StoreError> {
        let client = self.client(StorePart::Calls).await?;
        let cutoff = now_ms().saturating_sub(i64::try_from(retention.as_millis()).unwrap_or(i64::MAX));
        let old = "SELECT tool_call_id FROM toolsmith_pending WHERE created_at_ms < $1 ORDER BY created_at_ms";
        let ids = client
            .query(old, &[&cutoff])
            .await
            .map_err(storage(StorePart::Calls, "cannot read old calls"))?;
        let mut expired = Vec::new();
        for id in ids.iter().map(|r| r.get::<_, String>(0)) {
            let Some(row) = self.read(&client, Some(&id)).await?.pop() else {
                continue;
            };
            // Damaged rows are kept for inspection; running ones finish first.
            let Ok((call, state)) = row.check(&self.key) else { continue };
            if matches!(state, CallState::Running(_)) {
                continue;
            }
            let delete = "DELETE FROM toolsmith_pending WHERE tool_call_id = $1 AND state_tag = $2";
            let tag = row.state_tag.clone().unwrap_or_default();
            if client
                .execute(delete, &[&id, &tag])
                .await
                .map_err(storage(StorePart::Calls, "cannot expire a call"))?
                == 1
            {
                expired.push(call);
            }
        }
        let sweep = "DELETE FROM toolsmith_bus WHERE created_at < now() - $1 * interval '1 millisecond'";
        let bus_ms = i64::try_from(retention.as_millis()).unwrap_or(i64::MAX).min(3_600_000) as f64;
        client
            .execute(sweep, &[&bus_ms])
            .await
            .map_err(storage(StorePart::Calls, "cannot sweep bus messages"))?;
        Ok(expired)
    }

    async fn entries(&self) -> Result<Vec<StoredCall>, StoreError> {
        let client = self.client(StorePart::Calls).await?;
        let rows = self.read(&client, None).await?;
        let entries = rows.into_iter().map(|row| {
            let checked = row.check(&self.key);
            checks::listed(checked, row.id, row.tool_name)
        });
        Ok(entries.collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_storage_failure_keeps_the_drivers_error() {
        let err = config("postgres://user:secret@[::1/db", &PostgresOptions::default()).unwrap_err();
        let source = std::error::Error::source(&err).expect("the driver's error is kept");
        assert!(source.downcast_ref::<tokio_postgres::Error>().is_some(), "{source:?}");
        let text = err.to_string();
        assert!(text.contains("is not a PostgreSQL URL") && !text.contains("secret"), "{text}");
    }
}
