//! Pins in PostgreSQL: [`PostgresPins`], a [`PinStore`] in the `toolsmith_pins` table of the
//! store's database (migration 5), so every instance sharing the database enforces and reviews
//! the same pins. One row per pinned tool with the pinned and the last seen definition as JSON,
//! and an integrity tag over every column (the key the instances share, as the store's other
//! rows): a pin edited in the database is refused, never trusted. Owns only the table's
//! statements (beside the store's other tables); what a pin means is `pins`'.

use deadpool_postgres::Pool;
use tokio_postgres::Row;

use super::describe;
use crate::pins::{Pin, PinError, PinKey, PinStore, Pinned};
use crate::runtime::store::integrity::Key;
use crate::tool::BoxFuture;

/// Pins kept in the store's PostgreSQL database (from [`PostgresStore::pins`](crate::runtime::PostgresStore::pins)).
pub struct PostgresPins {
    pool: Pool,
    key: Key,
}

impl std::fmt::Debug for PostgresPins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresPins").finish_non_exhaustive()
    }
}

fn store_error(what: &str) -> impl Fn(tokio_postgres::Error) -> PinError + '_ {
    move |e| PinError::Store(format!("{what}: {}", describe(&e)))
}

fn to_json(p: &Pinned) -> Result<String, PinError> {
    serde_json::to_string(p).map_err(|e| PinError::Store(e.to_string()))
}

/// The columns a row's tag covers, in order.
fn fields<'a>(key: &'a PinKey, pinned: &'a str, seen: Option<&'a str>) -> [Option<&'a [u8]>; 6] {
    [
        Some(b"postgres pin v1".as_slice()),
        Some(key.provider.as_bytes()),
        Some(key.connection.as_bytes()),
        Some(key.tool.as_bytes()),
        Some(pinned.as_bytes()),
        seen.map(str::as_bytes),
    ]
}

impl PostgresPins {
    pub(crate) fn new(pool: Pool, key: Key) -> PostgresPins {
        PostgresPins { pool, key }
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, PinError> {
        self.pool
            .get()
            .await
            .map_err(|e| PinError::Store(format!("cannot reach the database: {e}")))
    }

    fn tag(&self, key: &PinKey, pinned: &str, seen: Option<&str>) -> Vec<u8> {
        self.key.tag(&fields(key, pinned, seen))
    }

    /// A row as a pin, once its tag checks (a damaged row names the tool, never its text).
    fn read(&self, row: &Row) -> Result<Pin, PinError> {
        let text = |i| row.try_get::<_, Option<String>>(i).ok().flatten();
        let key = PinKey {
            provider: text(0).unwrap_or_default(),
            connection: text(1).unwrap_or_default(),
            tool: text(2).unwrap_or_default(),
        };
        let (pinned, seen) = (text(3).unwrap_or_default(), text(4));
        let tag: Option<Vec<u8>> = row.try_get(5).ok().flatten();
        let damaged = |why: &str| PinError::Store(format!("the pin of `{}` is damaged: {why}", key.tool));
        if !tag.is_some_and(|tag| self.key.verify(&fields(&key, &pinned, seen.as_deref()), &tag)) {
            return Err(damaged(
                "its integrity tag does not match (edited outside toolsmith, or another store key)",
            ));
        }
        let parse = |s: &str| serde_json::from_str::<Pinned>(s).map_err(|_| damaged("unreadable JSON"));
        Ok(Pin {
            pinned: parse(&pinned)?,
            seen: seen.as_deref().map(parse).transpose()?,
            key,
        })
    }

    async fn get_pin(&self, key: &PinKey) -> Result<Option<Pin>, PinError> {
        let client = self.client().await?;
        let sql = "SELECT provider, connection, tool, pinned, seen, tag FROM toolsmith_pins \
                   WHERE provider = $1 AND connection = $2 AND tool = $3";
        let row = client
            .query_opt(sql, &[&key.provider, &key.connection, &key.tool])
            .await
            .map_err(store_error("cannot read a pin"))?;
        row.map(|r| self.read(&r)).transpose()
    }
}

impl PinStore for PostgresPins {
    fn get(&self, key: PinKey) -> BoxFuture<'_, Result<Option<Pin>, PinError>> {
        Box::pin(async move { self.get_pin(&key).await })
    }

    fn pin_if_absent(&self, key: PinKey, pinned: Pinned) -> BoxFuture<'_, Result<Pin, PinError>> {
        Box::pin(async move {
            let json = to_json(&pinned)?;
            let tag = self.tag(&key, &json, None);
            let sql = "INSERT INTO toolsmith_pins (provider, connection, tool, pinned, seen, tag) VALUES ($1, $2, $3, $4, NULL, $5) \
                       ON CONFLICT (provider, connection, tool) DO NOTHING";
            let client = self.client().await?;
            client
                .execute(sql, &[&key.provider, &key.connection, &key.tool, &json, &tag])
                .await
                .map_err(store_error("cannot pin a tool"))?;
            drop(client);
            self.get_pin(&key)
                .await?
                .ok_or_else(|| PinError::Store(format!("the pin of `{}` was not kept", key.tool)))
        })
    }

    fn record_seen(&self, key: PinKey, seen: Pinned) -> BoxFuture<'_, Result<(), PinError>> {
        Box::pin(async move {
            // The tag covers the pinned definition too: rewritten from the (checked) row.
            let Some(pin) = self.get_pin(&key).await? else { return Ok(()) };
            let (pinned, seen) = (to_json(&pin.pinned)?, to_json(&seen)?);
            let tag = self.tag(&key, &pinned, Some(&seen));
            let sql = "UPDATE toolsmith_pins SET seen = $4, tag = $5 WHERE provider = $1 AND connection = $2 AND tool = $3 AND pinned = $6";
            let client = self.client().await?;
            client
                .execute(sql, &[&key.provider, &key.connection, &key.tool, &seen, &tag, &pinned])
                .await
                .map(drop)
                .map_err(store_error("cannot record a changed definition"))
        })
    }

    fn replace(&self, key: PinKey, pinned: Pinned) -> BoxFuture<'_, Result<(), PinError>> {
        Box::pin(async move {
            let json = to_json(&pinned)?;
            let tag = self.tag(&key, &json, None);
            let sql = "INSERT INTO toolsmith_pins (provider, connection, tool, pinned, seen, tag) VALUES ($1, $2, $3, $4, NULL, $5) \
                       ON CONFLICT (provider, connection, tool) DO UPDATE SET pinned = EXCLUDED.pinned, seen = NULL, tag = EXCLUDED.tag";
            let client = self.client().await?;
            client
                .execute(sql, &[&key.provider, &key.connection, &key.tool, &json, &tag])
                .await
                .map(drop)
                .map_err(store_error("cannot accept a definition"))
        })
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<Pin>, PinError>> {
        Box::pin(async move {
            let client = self.client().await?;
            let sql = "SELECT provider, connection, tool, pinned, seen, tag FROM toolsmith_pins ORDER BY provider, connection, tool";
            let rows = client.query(sql, &[]).await.map_err(store_error("cannot list the pins"))?;
            rows.iter().map(|r| self.read(r)).collect()
        })
    }
}
