//! The text of a client's message, checked before `rmcp` parses it.
//!
//! Owns [`parse`]: a message body (an HTTP POST, a stdio line) read as JSON with one value per
//! key (I-JSON, RFC 7493). `rmcp` parses the same text again and keeps the last value of a
//! repeated key, so a body that repeats one (in a tool's arguments or anywhere else) is
//! refused here, naming the key and its path. What parsed is a [`Message`]: its top-level
//! members, for the checks before `rmcp` (nothing below them decoded). Which answers go where is
//! the transports' job.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::json::{TextError, parse_unique, scan};

/// A message refused before `rmcp` sees it: the JSON-RPC error to answer with.
pub(crate) struct Refused {
    /// The request's id, when it could be read.
    pub(crate) id: Value,
    /// The JSON-RPC error code (`-32700` not JSON, `-32600` not an acceptable message).
    pub(crate) code: i64,
    /// The error message.
    pub(crate) message: String,
}

/// A message that parsed: its top-level members, borrowed from its text (what they hold is
/// decoded only when a check asks: `rmcp` decodes the message itself).
pub(crate) struct Message<'a> {
    /// `None` when the text is JSON but not an object (a batch, a number…).
    members: Option<Members<'a>>,
}

/// The members of a message the checks read; a member present with any value (`null`
/// included) is `Some`.
#[derive(Deserialize)]
struct Members<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// How deep a message may nest and still take the quick path (deeper text is parsed whole,
/// which refuses what is past `serde_json`'s limit as before).
const QUICK_DEPTH: usize = 64;

impl<'a> Message<'a> {
    /// Whether the message is a JSON object.
    pub(crate) fn is_object(&self) -> bool {
        self.members.is_some()
    }

    fn members(&self) -> Option<&Members<'a>> {
        self.members.as_ref()
    }

    /// Whether the message has an `id` member (whatever its value).
    pub(crate) fn has_id(&self) -> bool {
        self.members().is_some_and(|m| m.id.is_some())
    }

    /// The message's id to answer with: `null` when it has none, or one that is neither a
    /// string nor an integer.
    pub(crate) fn id(&self) -> Value {
        self.members()
            .and_then(|m| m.id)
            .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
            .filter(answerable)
            .unwrap_or(Value::Null)
    }

    /// The `jsonrpc` member, when it is a string.
    pub(crate) fn jsonrpc(&self) -> Option<Cow<'a, str>> {
        string(self.members()?.jsonrpc?)
    }

    /// The `method` member, when it is a string.
    pub(crate) fn method(&self) -> Option<Cow<'a, str>> {
        string(self.members()?.method?)
    }

    /// Whether the message is a request (or notification) for `method`.
    pub(crate) fn is(&self, method: &str) -> bool {
        self.method().is_some_and(|m| m == method)
    }

    /// The raw `params` member, when there is one.
    pub(crate) fn params(&self) -> Option<&'a RawValue> {
        self.members()?.params
    }

    /// Whether the message answers a request: an `id` with a `result` or an `error`.
    pub(crate) fn is_response(&self) -> bool {
        self.members()
            .is_some_and(|m| m.id.is_some() && (m.result.is_some() || m.error.is_some()))
    }
}

/// Whether a request id can address an answer: MCP ids are strings or integers.
fn answerable(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// A JSON value that is a string, decoded (borrowed when it has no escapes).
fn string(raw: &RawValue) -> Option<Cow<'_, str>> {
    serde_json::from_str::<Cow<'_, str>>(raw.get()).ok()
}

/// Parses a message body, refusing text that is not JSON or that repeats a key.
///
/// One pass over the bytes settles the usual message (shallow, each object's keys surely
/// distinct): its top-level members are then read without decoding what they hold. Any other
/// text is parsed whole, which names the repeated key or the syntax error exactly.
pub(crate) fn parse(text: &[u8]) -> Result<Message<'_>, Refused> {
    let scanned = scan(text, QUICK_DEPTH, true);
    if scanned.too_deep || !scanned.surely_unique {
        parse_whole(text)?;
    }
    let object = text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let parsed = if object {
        serde_json::from_slice::<Members>(text).map(Some)
    } else {
        serde_json::from_slice::<serde::de::IgnoredAny>(text).map(|_| None)
    };
    match parsed {
        Ok(members) => Ok(Message { members }),
        Err(e) => Err(syntax(e)),
    }
}

fn syntax(e: serde_json::Error) -> Refused {
    Refused {
        id: Value::Null,
        code: -32700,
        message: format!("Parse error: {e}"),
    }
}

/// The whole parse: why the text is refused, exactly.
fn parse_whole(text: &[u8]) -> Result<(), Refused> {
    match parse_unique(text) {
        Ok(_) => Ok(()),
        Err(TextError::Syntax(e)) => Err(syntax(e)),
        Err(TextError::Duplicate(d)) => {
            // The text is JSON: its id (last value wins here, only to address the answer).
            let id = serde_json::from_slice::<Value>(text)
                .ok()
                .and_then(|v| v.get("id").cloned())
                .filter(answerable)
                .unwrap_or(Value::Null);
            Err(Refused {
                id,
                code: -32600,
                message: format!("Invalid request: {d}"),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn repeated_keys_are_refused_with_the_request_id() {
        let body = br#"{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "a": 2}}}"#;
        let refused = parse(body).err().unwrap();
        assert_eq!((refused.id, refused.code), (json!(7), -32600));
        assert!(
            refused.message.contains("`a`") && refused.message.contains("`/params/arguments`"),
            "{}",
            refused.message
        );
        let refused = parse(b"{").err().unwrap();
        assert_eq!((refused.id, refused.code), (Value::Null, -32700));
        assert_eq!(parse(br#"{"id": 1}"#).ok().map(|m| m.id()), Some(json!(1)));
    }

    #[test]
    fn the_quick_path_and_the_whole_parse_agree() {
        // A repeat deep inside, or past the quick path's depth, is still found.
        let deep_repeat = br#"{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": {"x": {"y": [{"k": 1, "k": 2}]}}}}"#;
        let refused = parse(deep_repeat).err().unwrap();
        assert_eq!((refused.id, refused.code), (json!(1), -32600));
        let nested = |n: usize| {
            format!(
                r#"{{"jsonrpc": "2.0", "id": 1, "method": "m", "params": {{"a": {}1{}}}}}"#,
                "[".repeat(n),
                "]".repeat(n)
            )
        };
        // Deeper than the quick path but within serde_json's limit: a message.
        let m = nested(QUICK_DEPTH + 10);
        assert!(parse(m.as_bytes()).is_ok());
        // Past serde_json's limit: refused as not JSON, as `rmcp` could not parse it.
        let m = nested(200);
        assert_eq!(parse(m.as_bytes()).err().map(|r| r.code), Some(-32700));
        // A repeated key is named even in text too deep to parse.
        let m = nested(200).replace(r#""a": "#, r#""a": 1, "a": "#);
        assert_eq!(parse(m.as_bytes()).err().map(|r| r.code), Some(-32600));
        // Not JSON, and JSON that is not an object.
        for text in [&b"{"[..], b"", b"{\"a\": }", b"[1, 2", b"\xff"] {
            assert_eq!(
                parse(text).err().map(|r| r.code),
                Some(-32700),
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
        for text in [&b"[]"[..], b" 42 ", b"\"s\"", b"null"] {
            assert!(!parse(text).ok().unwrap().is_object());
        }
        // Trailing text after the object is not JSON.
        assert_eq!(parse(br#"{"id": 1} x"#).err().map(|r| r.code), Some(-32700));
    }
}
