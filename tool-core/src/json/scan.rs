//! One pass over JSON text before anything parses it: how deep it nests and, when asked,
//! whether it surely repeats no key.
//!
//! Owns [`scan`], the byte loop behind the call's depth limit and the happy path's duplicate
//! check (one pass for both, nothing allocated). It decides nothing about text that is not JSON
//! beyond its depth: a caller that trusts "surely unique" still parses the text strictly, and
//! text that does not parse takes the full path, which decides exactly.

/// What one pass over JSON text found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Scanned {
    /// The nesting of arrays and objects went past the maximum (the scan stopped there).
    pub(crate) too_deep: bool,
    /// Keys were asked for, and no object of the text repeats a key. `false` also when the
    /// scan cannot tell cheaply: a key with escapes, an object of more than [`PER_OBJECT`]
    /// members, more than [`HELD`] keys of open objects at once, nesting past [`FRAMES`].
    pub(crate) surely_unique: bool,
}

/// Containers whose keys are followed (their kinds fit one `u64`).
const FRAMES: usize = 64;
/// Keys held at once, over every object open at one point of the text.
const HELD: usize = 64;
/// Members of one object compared one by one.
const PER_OBJECT: usize = 16;

/// Scans `text` once: its nesting against `max_depth` (brackets inside strings do not count)
/// and, when `keys`, whether each object's keys are distinct (compared as written).
pub(crate) fn scan(text: &[u8], max_depth: usize, keys: bool) -> Scanned {
    // Two copies: the one without keys keeps no key tables at all.
    if keys {
        scan_with::<true>(text, max_depth)
    } else {
        scan_with::<false>(text, max_depth)
    }
}

fn scan_with<const KEYS: bool>(text: &[u8], max_depth: usize) -> Scanned {
    let mut depth = 0usize;
    let mut unique = KEYS;
    // Bit `d` is set when the container at depth `d + 1` is an object.
    let mut objects = 0u64;
    // Where each open container's keys start in `held`.
    let mut starts = [0u8; FRAMES];
    // The keys of the open objects, as byte ranges of `text`.
    let mut held = [(0u32, 0u32); HELD];
    let mut count = 0usize;
    let mut expect_key = false;
    let mut i = 0;
    // Ranges are `u32`: past that, keys are not followed.
    if text.len() > u32::MAX as usize {
        unique = false;
    }
    while i < text.len() {
        match text[i] {
            b'"' => {
                let start = i + 1;
                let mut end = start;
                let mut escapes = false;
                while end < text.len() {
                    match text[end] {
                        b'\\' => {
                            escapes = true;
                            end += 2;
                        }
                        b'"' => break,
                        _ => end += 1,
                    }
                }
                let end = end.min(text.len());
                if expect_key && unique {
                    let from = usize::from(starts[depth - 1]);
                    let key = &text[start..end];
                    // Unsure (escapes, too many keys) or a repeat: not surely unique.
                    let unsure = escapes || count - from >= PER_OBJECT || count == HELD;
                    if unsure || held[from..count].iter().any(|&(s, e)| &text[s as usize..e as usize] == key) {
                        unique = false;
                    } else {
                        held[count] = (start as u32, end as u32);
                        count += 1;
                    }
                }
                expect_key = false;
                i = end + 1;
                continue;
            }
            open @ (b'{' | b'[') => {
                depth += 1;
                if depth > max_depth {
                    return Scanned {
                        too_deep: true,
                        surely_unique: false,
                    };
                }
                if unique && depth > FRAMES {
                    unique = false;
                }
                if unique {
                    // `count` < HELD = 64 fits a `u8`.
                    starts[depth - 1] = count as u8;
                    let bit = 1u64 << (depth - 1);
                    objects = if open == b'{' { objects | bit } else { objects & !bit };
                }
                expect_key = unique && open == b'{';
            }
            b'}' | b']' => {
                if unique && depth >= 1 {
                    count = usize::from(starts[depth - 1]);
                }
                depth = depth.saturating_sub(1);
                expect_key = false;
            }
            b',' => expect_key = unique && depth >= 1 && objects & (1u64 << (depth - 1)) != 0,
            _ => {}
        }
        i += 1;
    }
    Scanned {
        too_deep: false,
        surely_unique: unique,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unique(text: &str) -> bool {
        scan(text.as_bytes(), 64, true).surely_unique
    }

    #[test]
    fn repeated_keys_at_any_depth_are_not_unique() {
        assert!(unique(r#"{"a": [1, {"b": 2}], "b": {"a": null}}"#));
        assert!(!unique(r#"{"a": 1, "a": 2}"#));
        assert!(!unique(r#"{"a": [1, {"b": 2, "b": 3}]}"#));
        assert!(!unique(r#"{"x": {"a": {}, "b": [], "a": 0}}"#));
        // The same key in sibling or nested objects is not a repeat.
        assert!(unique(r#"[{"a": 1}, {"a": 2}, {"a": {"a": {"a": 3}}}]"#));
        // A string value equal to a key is not a key.
        assert!(unique(r#"{"a": "a", "b": ["a", "b"], "c": {"d": "c"}}"#));
    }

    #[test]
    fn what_it_cannot_tell_cheaply_is_not_unique() {
        assert!(!unique(r#"{"\u0061": 1}"#));
        assert!(!unique(r#"{"a\"b": 1}"#));
        let wide = (0..=PER_OBJECT).map(|i| format!("\"k{i}\": {i}")).collect::<Vec<_>>().join(", ");
        assert!(!unique(&format!("{{{wide}}}")));
        let narrow = (0..PER_OBJECT).map(|i| format!("\"k{i}\": {i}")).collect::<Vec<_>>().join(", ");
        assert!(unique(&format!("{{{narrow}}}")));
        // Escapes inside values are skipped as strings, quotes included.
        assert!(unique(r#"{"a": "x\"}{\\", "b": "\\"}"#));
        assert!(!scan(br#"{"a": 1}"#, 64, false).surely_unique, "keys not asked for");
    }

    #[test]
    fn depth_ignores_brackets_inside_strings() {
        assert!(!scan(br#"{"a": "[[[[[[[[["}"#, 2, false).too_deep);
        assert!(scan(br#"{"a": "\"[[[", "b": [[1]]}"#, 2, false).too_deep);
        assert!(!scan(b"[[[]]]", 3, true).too_deep);
        assert!(scan(b"[[[[]]]]", 3, true).too_deep);
        let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
        let scanned = scan(deep.as_bytes(), 128, true);
        assert!(
            !scanned.too_deep && !scanned.surely_unique,
            "past {FRAMES} frames keys are not followed"
        );
    }

    #[test]
    fn text_that_is_not_json_does_not_panic() {
        for text in ["", "}", "]]]", "{\"a", "{\"a\\", "{,\"a\":1,,\"a\"", "\"", "{[}]"] {
            let _ = scan(text.as_bytes(), 64, true);
        }
    }

    use proptest::prelude::*;

    /// JSON text whose objects take keys from a small set (so they repeat), one of them
    /// written with an escape; with whether that escaped key was used.
    fn arb_text() -> impl Strategy<Value = (String, bool)> {
        let leaf = prop_oneof![
            Just(("1".to_owned(), false)),
            Just(("null".to_owned(), false)),
            Just((r#""a""#.to_owned(), false)),
            Just((r#""[{\"}]\\""#.to_owned(), false)),
        ];
        leaf.prop_recursive(5, 64, 4, |inner| {
            let key = prop_oneof![Just(r#""a""#), Just(r#""b""#), Just(r#""c""#), Just(r#""\u0061""#)];
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(|items| {
                    let escaped = items.iter().any(|(_, e)| *e);
                    let texts: Vec<_> = items.into_iter().map(|(t, _)| t).collect();
                    (format!("[{}]", texts.join(",")), escaped)
                }),
                prop::collection::vec((key, inner), 0..5).prop_map(|members| {
                    let escaped = members.iter().any(|(k, (_, e))| *e || k.contains('\\'));
                    let texts: Vec<_> = members.into_iter().map(|(k, (t, _))| format!("{k}: {t}")).collect();
                    (format!("{{{}}}", texts.join(", ")), escaped)
                }),
            ]
        })
    }

    fn depth(value: &serde_json::Value) -> usize {
        match value {
            serde_json::Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
            serde_json::Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
            _ => 0,
        }
    }

    proptest! {
        /// "Surely unique" is never said of text that repeats a key, and is said of every text
        /// that does not, where no key has an escape; the depth is the parsed value's.
        #[test]
        fn the_scan_agrees_with_the_strict_parse((text, escaped) in arb_text(), max in 0usize..7) {
            let strict = crate::json::parse_unique(text.as_bytes());
            let scanned = scan(text.as_bytes(), usize::MAX, true);
            if scanned.surely_unique {
                prop_assert!(strict.is_ok(), "said unique: {}", text);
            }
            if !escaped {
                prop_assert_eq!(scanned.surely_unique, strict.is_ok(), "{}", text);
            }
            // The depth of text without repeats is its value's (a repeat's value would be lost).
            if let Ok(value) = strict {
                prop_assert_eq!(scan(text.as_bytes(), max, true).too_deep, depth(&value) > max, "{}", text);
            }
        }
    }
}
