//! Serde helpers the providers' wire types share: reading the platforms' JSON tolerantly.
//!
//! Owns only deserialisation rules (a listing or map whose odd item is skipped, a scalar that
//! may be a string or a number); the wire types themselves live with each provider.

use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, IgnoredAny};
use serde_json::Value;

/// A listing's `items`: a missing or `null` list is empty, and an item that does not read as
/// `T` is skipped (one odd item never costs the whole page). Anything but an array or `null`
/// is an error.
pub(crate) fn items<'de, D: Deserializer<'de>, T: DeserializeOwned>(deserializer: D) -> Result<Vec<T>, D::Error> {
    let raw: Option<Vec<Value>> = Option::deserialize(deserializer)?;
    Ok(raw
        .unwrap_or_default()
        .into_iter()
        .filter_map(|item| match T::deserialize(item) {
            Ok(item) => Some(item),
            Err(e) => {
                tracing::debug!(target: "tool_providers::wire", error = %e, "a listed item of an unexpected shape was skipped");
                None
            }
        })
        .collect())
}

/// A JSON scalar a platform sends as text or as a number (an error code, a default value);
/// anything else is kept as [`Scalar::Other`] rather than failing the answer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub(crate) enum Scalar {
    /// Text.
    Text(String),
    /// A number.
    Number(serde_json::Number),
    /// A flag.
    Flag(bool),
    /// Anything else (ignored).
    Other(IgnoredAny),
}

impl Scalar {
    /// The scalar as text: text as is, numbers and flags written out; none for anything else.
    pub(crate) fn as_text(&self) -> Option<String> {
        match self {
            Scalar::Text(s) => Some(s.clone()),
            Scalar::Number(n) => Some(n.to_string()),
            Scalar::Flag(b) => Some(b.to_string()),
            Scalar::Other(_) => None,
        }
    }
}

/// A map whose values are `T`, in key order (`None` when missing or `null`); an entry that
/// does not read as `T` is skipped. Anything but an object or `null` is an error.
pub(crate) fn entries<'de, D: Deserializer<'de>, T: DeserializeOwned>(deserializer: D) -> Result<Option<Vec<(String, T)>>, D::Error> {
    let raw: Option<serde_json::Map<String, Value>> = Option::deserialize(deserializer)?;
    Ok(raw.map(|map| {
        map.into_iter()
            .filter_map(|(key, value)| T::deserialize(value).ok().map(|v| (key, v)))
            .collect()
    }))
}
