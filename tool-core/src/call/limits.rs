//! Limits on arguments, applied before anything parses them.
//!
//! Owns [`Limits`] and the size and depth checks of argument text and values. It must not
//! validate against schemas (that is `validate`) nor run anything.

use serde_json::Value;

use super::CallArgs;
use crate::error::{ErrorKind, ToolError};
use crate::json::{Scanned, scan};

/// Limits applied to arguments before they are parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted argument document, in bytes (default 1 MiB).
    pub max_input_bytes: usize,
    /// Deepest accepted nesting of arrays and objects (default 64).
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_input_bytes: 1 << 20,
            max_depth: 64,
        }
    }
}

fn rejected(tool: &str, message: String) -> ToolError {
    ToolError::with_kind(ErrorKind::InputRejected, format!("Tool `{tool}` refused its arguments: {message}")).for_tool(tool)
}

/// Refuses arguments past the size and depth limits, before any parsing. For text, the same
/// pass also tells, when `keys` asks, whether it surely repeats no key (the answer, `false` for
/// a value: it was parsed already).
pub(crate) fn check_limits(tool: &str, args: &CallArgs<'_>, limits: &Limits, keys: bool) -> Result<bool, ToolError> {
    let (size, scanned) = match args {
        CallArgs::Text(text) => (text.len(), scan(text.as_bytes(), limits.max_depth, keys)),
        CallArgs::Value(value) => (
            serialized_len(value),
            Scanned {
                too_deep: value_depth(value) > limits.max_depth,
                surely_unique: false,
            },
        ),
    };
    if size > limits.max_input_bytes {
        return Err(rejected(
            tool,
            format!("they are {size} bytes, more than the limit of {} bytes", limits.max_input_bytes),
        ));
    }
    if scanned.too_deep {
        return Err(rejected(
            tool,
            format!(
                "they nest deeper than the limit of {} levels (the limit is {})",
                limits.max_depth, limits.max_depth
            ),
        ));
    }
    Ok(scanned.surely_unique)
}

fn value_depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(value_depth).max().unwrap_or(0),
        Value::Object(obj) => 1 + obj.values().map(value_depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn serialized_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_limits_and_keys_in_one_pass() {
        let limits = Limits {
            max_depth: 2,
            ..Limits::default()
        };
        let text = |t: &'static str| CallArgs::Text(t.into());
        assert!(check_limits("t", &text(r#"{"a": "[[[[[[[[["}"#), &limits, true).unwrap());
        assert!(!check_limits("t", &text(r#"{"a": 1, "a": 2}"#), &limits, true).unwrap());
        assert!(
            !check_limits("t", &text(r#"{"a": 1}"#), &limits, false).unwrap(),
            "keys not asked for"
        );
        let err = check_limits("t", &text(r#"{"a": "\"[[[", "b": [[1]]}"#), &limits, true).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InputRejected);
        assert!(err.message().contains("nest deeper"), "{err}");
    }

    #[test]
    fn value_limits() {
        let mut deep = json!(1);
        for _ in 0..70 {
            deep = json!([deep]);
        }
        let err = check_limits("t", &CallArgs::Value(deep), &Limits::default(), true).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InputRejected);
        let big = json!({"s": "x".repeat(2 << 20)});
        let err = check_limits("t", &CallArgs::Value(big), &Limits::default(), true).unwrap_err();
        assert!(err.message().contains("bytes"), "{err}");
    }
}
