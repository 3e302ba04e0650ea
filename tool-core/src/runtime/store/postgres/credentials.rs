//! Credentials in PostgreSQL: [`PostgresCredentials`], a [`CredentialStore`] in the
//! `toolsmith_credentials` table of the store's database (migration 8), so every instance
//! sharing the database uses the same logins. One row per name, the secret as opaque bytes, and
//! an integrity tag over the name and the secret (the key the instances share): a row edited in
//! the database is refused. Owns only the table's statements; what the bytes mean is the
//! provider's.

use deadpool_postgres::Pool;

use super::describe;
use crate::credentials::{CredentialError, CredentialStore};
use crate::runtime::store::integrity::Key;
use crate::tool::BoxFuture;

/// Credentials kept in the store's PostgreSQL database (from
/// [`PostgresStore::credentials`](crate::runtime::PostgresStore::credentials)).
pub struct PostgresCredentials {
    pool: Pool,
    key: Key,
}

impl std::fmt::Debug for PostgresCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresCredentials").finish_non_exhaustive()
    }
}

fn store_error(what: &str) -> impl Fn(tokio_postgres::Error) -> CredentialError + '_ {
    move |e| CredentialError::Store(format!("{what}: {}", describe(&e)))
}

/// The first tagged field: keeps these tags apart from the store's other rows'.
const DOMAIN: &[u8] = b"postgres credentials v1";

fn fields<'a>(name: &'a str, secret: &'a [u8]) -> [Option<&'a [u8]>; 3] {
    [Some(DOMAIN), Some(name.as_bytes()), Some(secret)]
}

impl PostgresCredentials {
    pub(crate) fn new(pool: Pool, key: Key) -> PostgresCredentials {
        PostgresCredentials { pool, key }
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, CredentialError> {
        self.pool
            .get()
            .await
            .map_err(|e| CredentialError::Store(format!("cannot reach the database: {e}")))
    }
}

impl CredentialStore for PostgresCredentials {
    fn get(&self, name: String) -> BoxFuture<'_, Result<Option<Vec<u8>>, CredentialError>> {
        Box::pin(async move {
            let client = self.client().await?;
            let row = client
                .query_opt("SELECT secret, tag FROM toolsmith_credentials WHERE name = $1", &[&name])
                .await
                .map_err(store_error("reading credentials"))?;
            let Some(row) = row else { return Ok(None) };
            let secret: Vec<u8> = row.try_get(0).map_err(store_error("reading credentials"))?;
            let tag: Vec<u8> = row.try_get(1).map_err(store_error("reading credentials"))?;
            match self.key.verify(&fields(&name, &secret), &tag) {
                true => Ok(Some(secret)),
                false => Err(CredentialError::Tampered(name)),
            }
        })
    }

    fn put(&self, name: String, secret: Vec<u8>) -> BoxFuture<'_, Result<(), CredentialError>> {
        Box::pin(async move {
            let tag = self.key.tag(&fields(&name, &secret));
            self.client()
                .await?
                .execute(
                    "INSERT INTO toolsmith_credentials (name, secret, tag) VALUES ($1, $2, $3)
                     ON CONFLICT (name) DO UPDATE SET secret = EXCLUDED.secret, tag = EXCLUDED.tag",
                    &[&name, &secret, &tag],
                )
                .await
                .map(drop)
                .map_err(store_error("storing credentials"))
        })
    }

    fn remove(&self, name: String) -> BoxFuture<'_, Result<bool, CredentialError>> {
        Box::pin(async move {
            self.client()
                .await?
                .execute("DELETE FROM toolsmith_credentials WHERE name = $1", &[&name])
                .await
                .map(|n| n > 0)
                .map_err(store_error("removing credentials"))
        })
    }
}
