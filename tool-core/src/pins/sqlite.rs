//! Pins in SQLite: [`SqlitePins`], a [`PinStore`] in its own file next to the pending-call store
//! (`pending.sqlite3` → `pending.pins.sqlite3`), one row per pinned tool with the pinned and the
//! last seen definition as JSON. Owns only the table and its statements; what a pin means is
//! `pins`'.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

use super::{Pin, PinError, PinKey, PinStore, Pinned};
use crate::tool::BoxFuture;

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS tool_pins (
    provider TEXT NOT NULL,
    connection TEXT NOT NULL,
    tool TEXT NOT NULL,
    pinned TEXT NOT NULL,
    seen TEXT,
    PRIMARY KEY (provider, connection, tool)
)";

/// Pins kept in a SQLite file.
#[derive(Debug)]
pub struct SqlitePins {
    conn: Mutex<Connection>,
}

fn store_error(e: impl std::fmt::Display) -> PinError {
    PinError::Store(e.to_string())
}

impl SqlitePins {
    /// Opens (creating it if missing, owner-only) the pin file at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, PinError> {
        let path = path.as_ref();
        crate::runtime::create_private_file(path).map_err(PinError::Store)?;
        let conn = Connection::open(path).map_err(store_error)?;
        conn.busy_timeout(Duration::from_secs(5)).map_err(store_error)?;
        conn.execute_batch(SCHEMA).map_err(store_error)?;
        Ok(SqlitePins { conn: Mutex::new(conn) })
    }

    /// The pin file that goes with the pending-call store at `store`.
    pub fn path_next_to(store: &Path) -> PathBuf {
        let stem = store.file_stem().and_then(|s| s.to_str()).unwrap_or("pending");
        store.with_file_name(format!("{stem}.pins.sqlite3"))
    }

    fn run<T: Send + 'static>(&self, f: impl FnOnce(&Connection) -> Result<T, PinError>) -> BoxFuture<'_, Result<T, PinError>> {
        let out = f(&self.conn.lock().unwrap_or_else(|p| p.into_inner()));
        Box::pin(std::future::ready(out))
    }
}

fn to_json(p: &Pinned) -> Result<String, PinError> {
    serde_json::to_string(p).map_err(store_error)
}

fn read(key: PinKey, pinned: &str, seen: Option<&str>) -> Result<Pin, PinError> {
    let parse =
        |s: &str| serde_json::from_str::<Pinned>(s).map_err(|e| PinError::Store(format!("the pin of `{}` is damaged: {e}", key.tool)));
    Ok(Pin {
        pinned: parse(pinned)?,
        seen: seen.map(parse).transpose()?,
        key,
    })
}

fn get(conn: &Connection, key: &PinKey) -> Result<Option<Pin>, PinError> {
    let row: Option<(String, Option<String>)> = conn
        .query_row(
            "SELECT pinned, seen FROM tool_pins WHERE provider = ?1 AND connection = ?2 AND tool = ?3",
            params![key.provider, key.connection, key.tool],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(store_error)?;
    row.map(|(pinned, seen)| read(key.clone(), &pinned, seen.as_deref())).transpose()
}

impl PinStore for SqlitePins {
    fn get(&self, key: PinKey) -> BoxFuture<'_, Result<Option<Pin>, PinError>> {
        self.run(move |c| get(c, &key))
    }

    fn pin_if_absent(&self, key: PinKey, pinned: Pinned) -> BoxFuture<'_, Result<Pin, PinError>> {
        self.run(move |c| {
            c.execute(
                "INSERT OR IGNORE INTO tool_pins (provider, connection, tool, pinned) VALUES (?1, ?2, ?3, ?4)",
                params![key.provider, key.connection, key.tool, to_json(&pinned)?],
            )
            .map_err(store_error)?;
            get(c, &key)?.ok_or_else(|| PinError::Store(format!("the pin of `{}` was not kept", key.tool)))
        })
    }

    fn record_seen(&self, key: PinKey, seen: Pinned) -> BoxFuture<'_, Result<(), PinError>> {
        self.run(move |c| {
            c.execute(
                "UPDATE tool_pins SET seen = ?4 WHERE provider = ?1 AND connection = ?2 AND tool = ?3",
                params![key.provider, key.connection, key.tool, to_json(&seen)?],
            )
            .map(drop)
            .map_err(store_error)
        })
    }

    fn replace(&self, key: PinKey, pinned: Pinned) -> BoxFuture<'_, Result<(), PinError>> {
        self.run(move |c| {
            c.execute(
                "INSERT OR REPLACE INTO tool_pins (provider, connection, tool, pinned, seen) VALUES (?1, ?2, ?3, ?4, NULL)",
                params![key.provider, key.connection, key.tool, to_json(&pinned)?],
            )
            .map(drop)
            .map_err(store_error)
        })
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<Pin>, PinError>> {
        self.run(|c| {
            let mut stmt = c
                .prepare("SELECT provider, connection, tool, pinned, seen FROM tool_pins ORDER BY provider, connection, tool")
                .map_err(store_error)?;
            let rows = stmt
                .query_map([], |r| {
                    let key = PinKey {
                        provider: r.get(0)?,
                        connection: r.get(1)?,
                        tool: r.get(2)?,
                    };
                    Ok((key, r.get::<_, String>(3)?, r.get::<_, Option<String>>(4)?))
                })
                .map_err(store_error)?;
            rows.map(|row| {
                let (key, pinned, seen) = row.map_err(store_error)?;
                read(key, &pinned, seen.as_deref())
            })
            .collect()
        })
    }
}
