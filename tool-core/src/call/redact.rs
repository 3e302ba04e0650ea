//! Secrets and quotes: what an error message may repeat of what a caller sent.
//!
//! Owns the secret-key rule ([`is_secret_key`]), [`redact`] and the quoting of values and text
//! in messages (redacted, compact, bounded). Plain functions over JSON; imports nothing of the
//! crate.

use serde_json::Value;

const QUOTE_LIMIT: usize = 200;
pub(super) const REDACTED: &str = "[REDACTED]";
const SECRET_MARKERS: [&str; 7] = ["password", "secret", "token", "apikey", "api_key", "auth", "credential"];

/// Whether a key names a secret (password, secret, token, apiKey, api_key, auth, credential; any case).
pub fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    SECRET_MARKERS.iter().any(|m| key.contains(m))
}

/// A copy of `value` with every secret-named key's value replaced by `[REDACTED]`.
///
/// ```
/// let v = serde_json::json!({"user": "ann", "apiKey": "k-123", "nested": {"Auth_Header": "x"}});
/// let r = tool_core::call::redact(&v);
/// assert_eq!(r["user"], "ann");
/// assert_eq!(r["apiKey"], "[REDACTED]");
/// assert_eq!(r["nested"]["Auth_Header"], "[REDACTED]");
/// ```
pub fn redact(value: &Value) -> Value {
    match value {
        Value::Object(obj) => Value::Object(
            obj.iter()
                .map(|(k, v)| {
                    let v = if is_secret_key(k) {
                        Value::String(REDACTED.into())
                    } else {
                        redact(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        other => other.clone(),
    }
}

pub(super) fn path_has_secret(path: &str) -> bool {
    path.split('/').any(is_secret_key)
}

/// Quotes a value for an error message: redacted, compact, at most 200 characters.
pub(crate) fn quote(value: &Value) -> String {
    truncate(&redact(value).to_string(), QUOTE_LIMIT)
}

/// Quotes text that is not JSON: its keys cannot be redacted, so text that mentions a
/// secret-named key is not quoted at all.
pub(super) fn quote_text(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    if SECRET_MARKERS.iter().any(|m| lower.contains(m)) {
        format!("({} characters, not shown: they mention a secret-named key)", text.chars().count())
    } else {
        truncate(text, QUOTE_LIMIT)
    }
}

fn truncate(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}… ({} characters in all)", &text[..cut], text.chars().count()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_is_char_safe_and_says_how_long() {
        let long = "é".repeat(300);
        let t = truncate(&long, 200);
        assert!(t.starts_with(&"é".repeat(200)));
        assert!(t.contains("300 characters"));
        assert_eq!(truncate("short", 200), "short");
    }

    #[test]
    fn secret_keys() {
        for k in [
            "password",
            "clientSecret",
            "ACCESS_TOKEN",
            "apiKey",
            "x_api_key",
            "Authorization",
            "credentials",
        ] {
            assert!(is_secret_key(k), "{k}");
        }
        for k in ["user", "city", "limit"] {
            assert!(!is_secret_key(k), "{k}");
        }
    }
}
