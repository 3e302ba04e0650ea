//! The text of a client's message, checked before `rmcp` parses it.
//!
//! Owns [`parse`]: a message body (an HTTP POST, a stdio line) read as JSON with one value per
//! key (I-JSON, RFC 7493). `rmcp` parses the same text again and keeps the last value of a
//! repeated key, so a body that repeats one (in a tool's arguments or anywhere else) is
//! refused here, naming the key and its path. Which answers go where is the transports' job.

use serde_json::Value;

use crate::json::{parse_unique, TextError};

/// A message refused before `rmcp` sees it: the JSON-RPC error to answer with.
pub(crate) struct Refused {
    /// The request's id, when it could be read.
    pub(crate) id: Value,
    /// The JSON-RPC error code (`-32700` not JSON, `-32600` not an acceptable message).
    pub(crate) code: i64,
    /// The error message.
    pub(crate) message: String,
}

/// Parses a message body, refusing text that is not JSON or that repeats a key.
pub(crate) fn parse(text: &[u8]) -> Result<Value, Refused> {
    match parse_unique(text) {
        Ok(v) => Ok(v),
        Err(TextError::Syntax(e)) => Err(Refused {
            id: Value::Null,
            code: -32700,
            message: format!("Parse error: {e}"),
        }),
        Err(TextError::Duplicate(d)) => {
            // The text is JSON: its id (last value wins here, only to address the answer).
            let id = serde_json::from_slice::<Value>(text)
                .ok()
                .and_then(|v| v.get("id").cloned())
                .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
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
        assert_eq!(parse(br#"{"id": 1}"#).ok(), Some(json!({"id": 1})));
    }
}
