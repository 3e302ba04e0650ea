//! Secrets and quotes: what an error message may repeat of what a caller sent.
//!
//! Owns the secret-key rule ([`is_secret_key`]), [`redact`] and the quoting of values and text
//! in messages (redacted, compact, bounded). A key names a secret by its words (`apiKey`,
//! `x_api_key`, `ACCESS_TOKEN`), never by a substring that ordinary words share (`author`,
//! `max_tokens`, `root`), and only the values under secret keys are hidden. Plain functions
//! over JSON; imports nothing of the crate above the model layer.

use serde_json::Value;

pub(crate) use crate::json::QUOTE_LIMIT;
use crate::json::bounded;

pub(super) const REDACTED: &str = "[REDACTED]";

/// Words that make a key a secret's name.
const SECRET_WORDS: [&str; 16] = [
    "password",
    "passwd",
    "passphrase",
    "secret",
    "secrets",
    "token",
    "credential",
    "credentials",
    "auth",
    "authorization",
    "apikey",
    "bearer",
    "cookie",
    "cookies",
    "jwt",
    "privatekey",
];

/// Two words that together name a secret (`api_key`, `privateKey`, `AccessKey`).
const SECRET_PAIRS: [(&str, &str); 4] = [("api", "key"), ("private", "key"), ("access", "key"), ("signing", "key")];

/// Last words that make a key about a secret rather than the secret itself (`token_count`,
/// `auth_type`, `password_policy`).
const ABOUT_WORDS: [&str; 22] = [
    "count", "counts", "limit", "limits", "type", "types", "kind", "name", "names", "url", "uri", "endpoint", "method", "methods",
    "scheme", "policy", "length", "expiry", "expires", "ttl", "required", "enabled",
];

/// A key's words, lowercase: split at anything not a letter or digit and at case changes
/// (`clientSecret` → client, secret; `APIKey` → api, key).
fn words(key: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = key.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1).copied();
        let boundary = c.is_uppercase()
            && prev.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit() || (p.is_uppercase() && next.is_some_and(char::is_lowercase)));
        if boundary && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// Whether a key names a secret, judged by its words (any case, any separator): a word such
/// as password, secret, token, credential(s), auth, authorization, apikey, bearer, cookie or
/// jwt, or a pair such as api key or private key; unless its last word says the value is
/// about the secret (`token_count`, `auth_type`).
///
/// ```
/// use tool_core::call::is_secret_key;
/// assert!(is_secret_key("apiKey") && is_secret_key("X-Api-Key") && is_secret_key("refresh_token"));
/// assert!(!is_secret_key("author") && !is_secret_key("max_tokens") && !is_secret_key("root"));
/// ```
pub fn is_secret_key(key: &str) -> bool {
    let words = words(key);
    if words.last().is_some_and(|w| ABOUT_WORDS.contains(&w.as_str())) {
        return false;
    }
    words.iter().any(|w| SECRET_WORDS.contains(&w.as_str()))
        || words
            .windows(2)
            .any(|pair| SECRET_PAIRS.contains(&(pair[0].as_str(), pair[1].as_str())))
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

/// Whether a JSON Pointer passes through a secret-named key.
pub(super) fn path_has_secret(path: &str) -> bool {
    path.split('/')
        .any(|segment| is_secret_key(&segment.replace("~1", "/").replace("~0", "~")))
}

/// Quotes a value for an error message: redacted, compact, at most 200 characters.
pub(crate) fn quote(value: &Value) -> String {
    bounded(&redact(value).to_string(), QUOTE_LIMIT).into_owned()
}

/// Quotes text that is not JSON: its keys cannot be redacted, so text that holds a word
/// naming a secret is not quoted at all.
pub(super) fn quote_text(text: &str) -> String {
    let mentions_secret = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .any(|word| !word.is_empty() && is_secret_key(word));
    if mentions_secret {
        format!("({} characters, not shown: they mention a secret-named key)", text.chars().count())
    } else {
        bounded(text, QUOTE_LIMIT).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quotes_are_char_safe_and_say_how_long() {
        let long = Value::String("é".repeat(300));
        let q = quote(&long);
        assert!(q.starts_with(&format!("\"{}", "é".repeat(199))), "{q}");
        assert!(q.contains("302 characters in all"), "{q}");
        assert_eq!(quote(&json!("short")), "\"short\"");
    }

    #[test]
    fn secret_keys_by_word() {
        for k in [
            "password",
            "clientSecret",
            "ACCESS_TOKEN",
            "apiKey",
            "APIKey",
            "x_api_key",
            "X-Api-Key",
            "Authorization",
            "auth",
            "Auth_Header",
            "credentials",
            "sessionToken",
            "privateKey",
            "db.password",
        ] {
            assert!(is_secret_key(k), "{k}");
        }
        for k in [
            "user",
            "city",
            "limit",
            "root",
            "overwrite",
            "author",
            "authority",
            "max_tokens",
            "token_count",
            "auth_type",
            "secretary",
            "keyboard",
            "key",
            "password_policy",
            "tokenizer",
        ] {
            assert!(!is_secret_key(k), "{k}");
        }
    }

    #[test]
    fn only_values_under_secret_keys_are_redacted() {
        let v = json!({"root": "/srv", "overwrite": true, "author": "ann", "auth": {"user": "u", "pass": "p"}, "list": [{"token": "t"}]});
        assert_eq!(
            redact(&v),
            json!({"root": "/srv", "overwrite": true, "author": "ann", "auth": "[REDACTED]", "list": [{"token": "[REDACTED]"}]})
        );
        assert!(path_has_secret("/auth/user"));
        assert!(path_has_secret("/a~1password"));
        assert!(!path_has_secret("/root") && !path_has_secret("/overwrite") && !path_has_secret(""));
    }

    #[test]
    fn text_is_not_quoted_when_it_names_a_secret() {
        assert!(quote_text(r#"{"password": "hunter2""#).contains("not shown"));
        assert_eq!(quote_text(r#"{"max_tokens": 5"#), r#"{"max_tokens": 5"#);
        assert!(quote_text(&"x".repeat(900)).contains("900 characters in all"));
    }
}
