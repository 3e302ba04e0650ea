//! Integrity tags: every stored row carries an HMAC-SHA256 over its meaningful columns, keyed by
//! a secret kept outside the database, and is checked before anything uses it. A row edited in
//! the database (its tool, arguments, request context, state or owner) no longer matches its tag
//! and is refused. Both the SQLite and the PostgreSQL store tag their rows with this code.
//!
//! The key is the value of `TOOLSMITH_STORE_KEY` when that is set (its bytes; use 32 or more
//! random characters), or given by the program; the SQLite store otherwise keeps one in a file
//! next to its database (`sqlite`'s `key_file`). Whoever can read the key can forge tags: keep it
//! where the database's readers are not. Instances sharing a PostgreSQL database share the key.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The environment variable that gives the store key.
pub const KEY_ENV: &str = "TOOLSMITH_STORE_KEY";

/// The secret that tags rows.
#[derive(Clone)]
pub(crate) struct Key(Vec<u8>);

impl Key {
    /// A key from bytes given by the embedding program.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Result<Key, String> {
        if bytes.is_empty() {
            return Err("the store key is empty".into());
        }
        Ok(Key(bytes.to_vec()))
    }

    /// The key in [`KEY_ENV`], when that is set and not empty.
    pub(crate) fn from_env() -> Option<Result<Key, String>> {
        let value = std::env::var_os(KEY_ENV).filter(|v| !v.is_empty())?;
        Some(Key::from_bytes(value.as_encoded_bytes()))
    }

    /// The key's bytes (the bus seals with them, under its own domain).
    #[cfg(feature = "postgres")]
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// The tag of a row's fields.
    pub(crate) fn tag(&self, fields: &[Option<&[u8]>]) -> Vec<u8> {
        self.mac(fields).finalize().into_bytes().to_vec()
    }

    /// Whether `tag` is the tag of these fields (compared in constant time).
    pub(crate) fn verify(&self, fields: &[Option<&[u8]>], tag: &[u8]) -> bool {
        self.mac(fields).verify_slice(tag).is_ok()
    }

    /// The MAC over the fields, each framed (present or not, its length, its bytes) so no two
    /// different rows feed it the same bytes.
    fn mac(&self, fields: &[Option<&[u8]>]) -> Hmac<Sha256> {
        // HMAC takes a key of any length: this never fails for a non-empty key.
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0).unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
        mac.update(b"toolsmith pending row v2");
        for field in fields {
            match field {
                None => mac.update(&[0]),
                Some(bytes) => {
                    mac.update(&[1]);
                    mac.update(&(bytes.len() as u64).to_le_bytes());
                    mac.update(bytes);
                }
            }
        }
        mac
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_depend_on_every_field_and_its_framing() {
        let key = Key::from_bytes(b"k1").unwrap();
        let fields: [Option<&[u8]>; 3] = [Some(b"ab"), None, Some(b"c")];
        let tag = key.tag(&fields);
        assert!(key.verify(&fields, &tag));
        for other in [
            [Some(b"a".as_slice()), Some(b"b".as_slice()), Some(b"c".as_slice())],
            [Some(b"ab"), Some(b""), Some(b"c")],
            [Some(b"ab"), None, Some(b"d")],
        ] {
            assert!(!key.verify(&other, &tag), "{other:?}");
        }
        assert!(!Key::from_bytes(b"k2").unwrap().verify(&fields, &tag), "another key");
        assert!(Key::from_bytes(b"").is_err());
    }
}
