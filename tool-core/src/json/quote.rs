//! How much of a caller's text a message may repeat.
//!
//! Owns [`QUOTE_LIMIT`], [`bounded`] (text cut to a limit, then an ellipsis and the full
//! length) and [`bound_quotes`] (every long double-quoted run of a message cut, for messages
//! written by others, such as `serde`'s). Text only; what may be quoted at all (secrets) is
//! the call layer's `redact`.

use std::borrow::Cow;

/// The longest a quoted value runs in a message, in characters.
pub const QUOTE_LIMIT: usize = 200;

/// `text` cut to `limit` characters, then an ellipsis and the full length.
pub fn bounded(text: &str, limit: usize) -> Cow<'_, str> {
    match text.char_indices().nth(limit) {
        None => Cow::Borrowed(text),
        Some((cut, _)) => Cow::Owned(format!("{}… ({} characters in all)", &text[..cut], text.chars().count())),
    }
}

/// A message with every double-quoted run longer than the quote limit cut (a `serde` error
/// quotes the value it could not read in full): `"abc…" (N characters in all)`.
pub fn bound_quotes(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(4 * QUOTE_LIMIT));
    let mut rest = message;
    while let Some(open) = rest.find('"') {
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        // The closing quote: the first one not escaped by a backslash.
        let mut escaped = false;
        let close = rest.char_indices().find(|&(_, c)| {
            let end = c == '"' && !escaped;
            escaped = c == '\\' && !escaped;
            end
        });
        let Some((close, _)) = close else {
            out.push_str(&bounded(rest, QUOTE_LIMIT));
            return out;
        };
        let inner = &rest[..close];
        match inner.char_indices().nth(QUOTE_LIMIT) {
            None => out.push_str(inner),
            Some((cut, _)) => {
                out.push_str(&inner[..cut]);
                out.push_str(&format!("…\" ({} characters in all", inner.chars().count()));
                out.push(')');
                rest = &rest[close + 1..];
                continue;
            }
        }
        out.push('"');
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_is_char_safe_and_says_how_long() {
        let long = "é".repeat(300);
        let b = bounded(&long, 200);
        assert!(b.starts_with(&"é".repeat(200)));
        assert!(b.ends_with("… (300 characters in all)"), "{b}");
        assert_eq!(bounded("short", 200), "short");
    }

    #[test]
    fn long_quoted_runs_in_messages_are_cut() {
        let msg = format!(
            "invalid type: string \"{}\\\"{}\", expected u32 at line 1",
            "a".repeat(500),
            "b".repeat(10)
        );
        let b = bound_quotes(&msg);
        assert!(b.len() < 300, "{b}");
        assert!(b.ends_with("expected u32 at line 1"), "{b}");
        assert!(b.contains("512 characters in all"), "{b}");
        assert_eq!(bound_quotes(r#"a "b" c "d"#), r#"a "b" c "d"#);
        assert_eq!(bound_quotes("no quotes"), "no quotes");
    }
}
