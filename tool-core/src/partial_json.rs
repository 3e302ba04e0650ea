//! Incremental ("partial") JSON for live previews of streamed tool-call arguments.
//!
//! Providers stream a tool call's arguments as text deltas (`input_json_delta`,
//! `function_call_arguments.delta`, …). [`PartialJson`] takes each delta once and keeps a
//! [`serde_json::Value`] preview of everything read so far, so an `on_input_delta` consumer can
//! show the arguments as they arrive in time linear in the total input, instead of re-parsing
//! the whole buffer after every delta.
//!
//! ```
//! use serde_json::json;
//! use tool_core::partial_json::PartialJson;
//!
//! let mut p = PartialJson::new();
//! p.push(r#"{"city": "Par"#).unwrap();
//! assert_eq!(p.value(), &json!({"city": "Par"}));
//! p.push(r#"is", "days": [1, 2"#).unwrap();
//! assert_eq!(p.value(), &json!({"city": "Paris", "days": [1, 2]}));
//! p.push("]}").unwrap();
//! assert!(p.is_complete());
//! assert_eq!(p.finish().unwrap(), json!({"city": "Paris", "days": [1, 2]}));
//! ```
//!
//! # What the preview shows
//!
//! Complete members as they are; an unterminated string as its prefix so far (an escape
//! sequence only once it is complete, a surrogate pair only once both halves are in); an
//! unfinished number as far as it parses (`1.` shows `1`, `2e` shows `2`; a lone `-` shows
//! nothing; of a number longer than 64 bytes, its first 64 bytes until it ends); `true`,
//! `false` and `null` only once complete; open arrays and objects closed implicitly; an object
//! key whose value has not started (or cannot be shown yet) is left out. Before anything can
//! be shown the preview is `null`. The preview depends only on the text read so far, not on
//! how it was split into deltas.
//!
//! Every preview is a prefix of the final value: complete members equal their final values,
//! and only the member being read can still change. (With duplicate keys, which `serde_json`
//! resolves to the last one, a later duplicate replaces the earlier value.)
//!
//! # Design
//!
//! A hand-written push state machine rather than a crate. `actson` (push-based, events) was
//! weighed first: it reports a string or number only once it is complete and keeps the token
//! in progress private, so the preview could not show a partial string without lexing every
//! string a second time; it also accepts lone UTF-16 surrogates (`"\ud800\u0041"` gives the
//! text `\ud800A`, where `serde_json` rejects it) and rejects integers beyond `i64`. `jiter`'s
//! partial mode re-parses the whole buffer, which is the quadratic cost this module avoids.
//!
//! The preview tree is built in place: opening a container inserts it into its parent at once,
//! a string value is appended to where it sits in the tree, and a number's preview is
//! replaced as it grows. Rust cannot keep a `&mut` into the tree between calls without
//! `unsafe`, so each [`PartialJson::push`] walks the open path from the root once (and again
//! after a container closes): O(depth) per delta, depth being at most [`MAX_DEPTH`]. Nothing
//! recurses per nesting level. Complete numbers are parsed by `serde_json` itself, so they are
//! the same values as a full parse gives.

use std::str::FromStr;

use serde_json::map::Entry;
use serde_json::{Map, Number, Value};

/// Nesting limit: a container opened at this depth is an error. The same limit as
/// `serde_json`'s (at most 127 open arrays and objects), so both accept the same documents.
pub const MAX_DEPTH: usize = 128;

/// The preview of an unfinished number shows at most this many bytes of its text, so that a
/// preview costs O(1) even for an absurdly long number.
const NUMBER_PREVIEW_MAX: usize = 64;

/// Input that can never become valid JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid JSON at byte {offset}: {message}")]
pub struct PartialJsonError {
    /// Byte offset of the problem in the whole input (all deltas together).
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

/// Incremental JSON: feed text deltas, read the current partial value at any time.
///
/// See the [module documentation](self) for what the preview shows.
#[derive(Debug, Clone, Default)]
pub struct PartialJson {
    root: Value,
    parser: Parser,
}

impl PartialJson {
    /// An empty parser; its [`value`](Self::value) is `null` until something can be shown.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next delta. Returns an error only for input that can never become valid JSON
    /// (the error says where); never panics. After an error every further call returns the
    /// same error, and [`value`](Self::value) keeps what was read before the offending byte.
    pub fn push(&mut self, delta: &str) -> Result<(), PartialJsonError> {
        self.parser.feed(&mut self.root, delta)
    }

    /// The current partial value. Cheap: the tree is kept up to date by [`push`](Self::push).
    pub fn value(&self) -> &Value {
        &self.root
    }

    /// Whether a complete top-level value has been read, that is whether
    /// [`finish`](Self::finish) would succeed now. A top-level number counts as complete
    /// once it is a valid number, even though more digits could still follow.
    pub fn is_complete(&self) -> bool {
        let p = &self.parser;
        match p.state {
            _ if p.error.is_some() => false,
            State::Done => true,
            State::Number(n) => p.frames.is_empty() && n.is_complete() && Number::from_str(&p.num).is_ok(),
            _ => false,
        }
    }

    /// Bytes consumed so far (up to the error, after one).
    pub fn len(&self) -> usize {
        self.parser.offset
    }

    /// Whether no byte has been consumed yet.
    pub fn is_empty(&self) -> bool {
        self.parser.offset == 0
    }

    /// The finished value, or an error if the input is invalid or incomplete.
    pub fn finish(self) -> Result<Value, PartialJsonError> {
        let p = self.parser;
        if let Some(e) = p.error {
            return Err(e);
        }
        match p.state {
            State::Done => Ok(self.root),
            State::Number(n) if p.frames.is_empty() && n.is_complete() => p.parse_number(p.num.len()),
            state => Err(PartialJsonError {
                offset: p.offset,
                message: format!("unexpected end of input: {}", state.expected(p.frames.last())),
            }),
        }
    }
}

/// One open container, outermost first. The innermost one's open member is its last element
/// (array) or the entry under `key` (object).
#[derive(Debug, Clone)]
enum Frame {
    Array,
    /// The key being read, or the key of the member being read.
    Object(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    /// A value must come next: at the start, after `:`, after `,` in an array.
    #[default]
    Value,
    /// After `[`: a value or `]`.
    ArrayFirst,
    /// After `{`: a key or `}`.
    ObjectFirst,
    /// After `,` in an object: a key.
    Key,
    KeyString,
    /// After a key: `:`.
    Colon,
    ValueString,
    Number(Num),
    /// Inside `true`, `false` or `null`, with this many bytes matched.
    Literal(Lit, u8),
    /// After a member: `,` or the container's closer.
    After,
    /// A complete top-level value: only whitespace may follow.
    Done,
}

impl State {
    fn expected(self, top: Option<&Frame>) -> &'static str {
        match self {
            State::Value => "expected a JSON value",
            State::ArrayFirst => "expected a value or ']'",
            State::ObjectFirst => "expected a key or '}'",
            State::Key => "expected a key (a string)",
            State::KeyString | State::ValueString => "unterminated string",
            State::Colon => "expected ':'",
            State::Number(_) => "unfinished number",
            State::Literal(..) => "unfinished literal",
            State::After => match top {
                Some(Frame::Object(_)) => "expected ',' or '}'",
                _ => "expected ',' or ']'",
            },
            State::Done => "trailing characters after the JSON value",
        }
    }
}

/// Where a number's text is in the JSON number grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Num {
    Start,
    /// `-`
    Minus,
    /// `0` or `-0`
    Zero,
    /// `12`
    Int,
    /// `1.`
    Dot,
    /// `1.5`
    Frac,
    /// `1e`
    E,
    /// `1e-`
    ESign,
    /// `1e5`
    Exp,
}

impl Num {
    fn step(self, b: u8) -> Option<Num> {
        Some(match (self, b) {
            (Num::Start, b'-') => Num::Minus,
            (Num::Start | Num::Minus, b'0') => Num::Zero,
            (Num::Start | Num::Minus, b'1'..=b'9') | (Num::Int, b'0'..=b'9') => Num::Int,
            (Num::Zero | Num::Int, b'.') => Num::Dot,
            (Num::Dot | Num::Frac, b'0'..=b'9') => Num::Frac,
            (Num::Zero | Num::Int | Num::Frac, b'e' | b'E') => Num::E,
            (Num::E, b'+' | b'-') => Num::ESign,
            (Num::E | Num::ESign | Num::Exp, b'0'..=b'9') => Num::Exp,
            _ => return None,
        })
    }

    fn is_complete(self) -> bool {
        matches!(self, Num::Zero | Num::Int | Num::Frac | Num::Exp)
    }

    /// Length of the longest prefix of a `len`-byte number text in this state that is a
    /// complete number (0: none).
    fn complete_prefix(self, len: usize) -> usize {
        match self {
            Num::Start | Num::Minus => 0,
            Num::Dot | Num::E => len - 1,
            Num::ESign => len - 2,
            Num::Zero | Num::Int | Num::Frac | Num::Exp => len,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lit {
    True,
    False,
    Null,
}

impl Lit {
    fn word(self) -> &'static [u8] {
        match self {
            Lit::True => b"true",
            Lit::False => b"false",
            Lit::Null => b"null",
        }
    }

    fn value(self) -> Value {
        match self {
            Lit::True => Value::Bool(true),
            Lit::False => Value::Bool(false),
            Lit::Null => Value::Null,
        }
    }
}

/// Where a string is in an escape sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Esc {
    #[default]
    None,
    /// After `\`.
    Backslash,
    /// Inside `\uXXXX` with `digits` hex digits read; `high` is the leading surrogate that
    /// this escape must complete.
    Hex { high: Option<u16>, digits: u8, acc: u16 },
    /// After a leading surrogate escape: `\` must follow.
    High(u16),
    /// After a leading surrogate escape and `\`: `u` must follow.
    HighBackslash(u16),
}

/// What [`Parser::run`] stopped for.
enum Step {
    /// The delta is consumed.
    End,
    /// A container closed: the open path must be walked again from the root.
    Reopen,
}

#[derive(Debug, Clone, Default)]
struct Parser {
    frames: Vec<Frame>,
    state: State,
    esc: Esc,
    /// The text of the number being read.
    num: String,
    /// Where that number starts in the input.
    num_start: usize,
    /// Length of the number prefix shown in the tree (0: the number is not in the tree).
    num_shown: usize,
    /// The longest complete prefix of the number's first [`NUMBER_PREVIEW_MAX`] bytes.
    num_capped: usize,
    /// Bytes consumed before the current delta (while pushing), or in all.
    offset: usize,
    error: Option<PartialJsonError>,
}

impl Parser {
    fn feed(&mut self, root: &mut Value, src: &str) -> Result<(), PartialJsonError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        let mut i = 0;
        loop {
            let cur = open_container(root, &self.frames);
            match self.run(cur, src, &mut i) {
                Ok(Step::End) => break,
                Ok(Step::Reopen) => {}
                Err(e) => {
                    self.offset += i;
                    self.error = Some(e.clone());
                    return Err(e);
                }
            }
        }
        self.offset += src.len();
        Ok(())
    }

    fn fail(&self, i: usize, src: &str, expected: &str) -> PartialJsonError {
        let found = match src.get(i..).and_then(|s| s.chars().next()) {
            Some(c) if c.is_ascii_graphic() || c == ' ' => format!("'{c}'"),
            Some(c) => format!("{c:?}"),
            None => "end of input".into(),
        };
        PartialJsonError {
            offset: self.offset + i,
            message: format!("unexpected {found}: {expected}"),
        }
    }

    fn end_value(&mut self) {
        self.state = if self.frames.is_empty() { State::Done } else { State::After };
    }

    /// Consumes `src[*i..]` until its end or until a container closes. `cur` is the innermost
    /// open container, or the root when none is open.
    fn run(&mut self, mut cur: &mut Value, src: &str, i: &mut usize) -> Result<Step, PartialJsonError> {
        let bytes = src.as_bytes();
        while let Some(&b) = bytes.get(*i) {
            match self.state {
                State::ValueString => {
                    let Value::String(s) = member(cur, self.frames.last()) else {
                        unreachable!("open string")
                    };
                    if lex_string(&mut self.esc, src, i, self.offset, s)? {
                        self.end_value();
                    }
                }
                State::KeyString => {
                    let Some(Frame::Object(key)) = self.frames.last_mut() else {
                        unreachable!("open key")
                    };
                    if lex_string(&mut self.esc, src, i, self.offset, key)? {
                        self.state = State::Colon;
                    }
                }
                State::Number(mut n) => {
                    let start = *i;
                    while let Some(next) = bytes.get(*i).and_then(|&b| n.step(b)) {
                        n = next;
                        *i += 1;
                    }
                    let before = self.num.len();
                    self.num.push_str(&src[start..*i]);
                    if before <= NUMBER_PREVIEW_MAX && self.num.len() > NUMBER_PREVIEW_MAX {
                        let capped = self.num.as_bytes()[..NUMBER_PREVIEW_MAX]
                            .iter()
                            .try_fold(Num::Start, |n, &b| n.step(b));
                        self.num_capped = capped.map_or(0, |n| n.complete_prefix(NUMBER_PREVIEW_MAX));
                    }
                    self.state = State::Number(n);
                    if *i < bytes.len() {
                        // The number ended before `bytes[*i]`, which is looked at again.
                        if !n.is_complete() {
                            return Err(self.fail(*i, src, "invalid number"));
                        }
                        let value = self.parse_number(self.num.len())?;
                        self.put_number(cur, value);
                        self.end_value();
                    }
                }
                State::Literal(lit, matched) => {
                    let word = lit.word();
                    if word.get(matched as usize) != Some(&b) {
                        return Err(self.fail(*i, src, "invalid literal"));
                    }
                    *i += 1;
                    if matched as usize + 1 == word.len() {
                        insert(cur, self.frames.last(), lit.value());
                        self.end_value();
                    } else {
                        self.state = State::Literal(lit, matched + 1);
                    }
                }
                state => {
                    if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                        *i += 1;
                        continue;
                    }
                    let top = self.frames.last();
                    match (state, b) {
                        (State::Value | State::ArrayFirst, b'[' | b'{') => {
                            if self.frames.len() + 1 >= MAX_DEPTH {
                                return Err(self.fail(*i, src, "nested too deeply"));
                            }
                            *i += 1;
                            let (frame, empty, state) = if b == b'[' {
                                (Frame::Array, Value::Array(Vec::new()), State::ArrayFirst)
                            } else {
                                (Frame::Object(String::new()), Value::Object(Map::new()), State::ObjectFirst)
                            };
                            cur = insert(cur, top, empty);
                            self.frames.push(frame);
                            self.state = state;
                        }
                        (State::Value | State::ArrayFirst, b'"') => {
                            *i += 1;
                            self.esc = Esc::None;
                            self.state = State::ValueString;
                            let Value::String(s) = insert(cur, top, Value::String(String::new())) else {
                                unreachable!()
                            };
                            if lex_string(&mut self.esc, src, i, self.offset, s)? {
                                self.end_value();
                            }
                        }
                        (State::Value | State::ArrayFirst, b'-' | b'0'..=b'9') => {
                            self.num.clear();
                            self.num_start = self.offset + *i;
                            self.num_shown = 0;
                            self.state = State::Number(Num::Start);
                        }
                        (State::Value | State::ArrayFirst, b't') => self.state = State::Literal(Lit::True, 0),
                        (State::Value | State::ArrayFirst, b'f') => self.state = State::Literal(Lit::False, 0),
                        (State::Value | State::ArrayFirst, b'n') => self.state = State::Literal(Lit::Null, 0),
                        (State::ObjectFirst | State::Key, b'"') => {
                            *i += 1;
                            let Some(Frame::Object(key)) = self.frames.last_mut() else {
                                unreachable!("object")
                            };
                            key.clear();
                            self.esc = Esc::None;
                            self.state = State::KeyString;
                        }
                        (State::Colon, b':') => {
                            *i += 1;
                            self.state = State::Value;
                        }
                        (State::After, b',') => {
                            *i += 1;
                            self.state = if matches!(top, Some(Frame::Array)) {
                                State::Value
                            } else {
                                State::Key
                            };
                        }
                        (State::ArrayFirst, b']') | (State::ObjectFirst, b'}') => {
                            *i += 1;
                            self.frames.pop();
                            self.end_value();
                            return Ok(Step::Reopen);
                        }
                        (State::After, b']' | b'}') if matches!((top, b), (Some(Frame::Array), b']') | (Some(Frame::Object(_)), b'}')) => {
                            *i += 1;
                            self.frames.pop();
                            self.end_value();
                            return Ok(Step::Reopen);
                        }
                        (state, _) => return Err(self.fail(*i, src, state.expected(top))),
                    }
                }
            }
        }
        if let State::Number(n) = self.state {
            self.preview_number(cur, n)?;
        }
        Ok(Step::End)
    }

    /// Parses the first `len` bytes of the number being read.
    fn parse_number(&self, len: usize) -> Result<Value, PartialJsonError> {
        match Number::from_str(&self.num[..len]) {
            Ok(n) => Ok(Value::Number(n)),
            Err(_) => Err(PartialJsonError {
                offset: self.num_start,
                message: "number out of range".into(),
            }),
        }
    }

    /// Shows the longest complete prefix of the number being read (of its first
    /// [`NUMBER_PREVIEW_MAX`] bytes), so the preview depends only on the text read so far,
    /// not on how it was split into deltas.
    ///
    /// A prefix of at most 64 bytes can only be out of range with a non-negative exponent,
    /// which more digits can only make larger: such a number is an error at once.
    fn preview_number(&mut self, cur: &mut Value, n: Num) -> Result<(), PartialJsonError> {
        let len = if self.num.len() <= NUMBER_PREVIEW_MAX {
            n.complete_prefix(self.num.len())
        } else {
            self.num_capped
        };
        if len > 0 && len != self.num_shown {
            let value = self.parse_number(len)?;
            self.put_number(cur, value);
            self.num_shown = len;
        }
        Ok(())
    }

    fn put_number(&mut self, cur: &mut Value, value: Value) {
        if self.num_shown == 0 {
            insert(cur, self.frames.last(), value);
        } else {
            *member(cur, self.frames.last()) = value;
        }
    }
}

/// The innermost open container (the root when none is open).
fn open_container<'a>(root: &'a mut Value, frames: &[Frame]) -> &'a mut Value {
    let mut cur = root;
    if let Some((_, outer)) = frames.split_last() {
        for frame in outer {
            cur = member(cur, Some(frame));
        }
    }
    cur
}

/// The member being read in `cur`, whose frame is `top` (the root itself when `top` is `None`).
fn member<'a>(cur: &'a mut Value, top: Option<&Frame>) -> &'a mut Value {
    match (top, cur) {
        (None, cur) => cur,
        (Some(Frame::Array), Value::Array(items)) => items.last_mut().expect("open member"),
        (Some(Frame::Object(key)), Value::Object(map)) => map.get_mut(key).expect("open member"),
        _ => unreachable!("frame matches its container"),
    }
}

/// Adds a member to `cur`, whose frame is `top` (replaces the root when `top` is `None`), and
/// returns it.
fn insert<'a>(cur: &'a mut Value, top: Option<&Frame>, value: Value) -> &'a mut Value {
    match (top, cur) {
        (None, cur) => {
            *cur = value;
            cur
        }
        (Some(Frame::Array), Value::Array(items)) => {
            items.push(value);
            items.last_mut().expect("just pushed")
        }
        (Some(Frame::Object(key)), Value::Object(map)) => match map.entry(key.as_str()) {
            Entry::Vacant(e) => e.insert(value),
            Entry::Occupied(mut e) => {
                e.insert(value);
                e.into_mut()
            }
        },
        _ => unreachable!("frame matches its container"),
    }
}

/// Reads string content from `src[*i..]` into `out`, up to and including the closing quote.
/// Returns whether the string closed. Escapes are decoded once complete, so `out` is always
/// the decoded prefix of the string.
fn lex_string(esc: &mut Esc, src: &str, i: &mut usize, base: usize, out: &mut String) -> Result<bool, PartialJsonError> {
    let bytes = src.as_bytes();
    let fail = |at: usize, message: &str| PartialJsonError {
        offset: base + at,
        message: message.into(),
    };
    loop {
        if *esc == Esc::None {
            let start = *i;
            while let Some(&b) = bytes.get(*i) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                *i += 1;
            }
            // `start` and `*i` sit on ASCII bytes or the end, so both are char boundaries.
            out.push_str(&src[start..*i]);
            match bytes.get(*i) {
                None => return Ok(false),
                Some(b'"') => {
                    *i += 1;
                    return Ok(true);
                }
                Some(b'\\') => {
                    *i += 1;
                    *esc = Esc::Backslash;
                }
                Some(_) => return Err(fail(*i, "control character in string (must be escaped)")),
            }
        }
        let Some(&b) = bytes.get(*i) else { return Ok(false) };
        *esc = match *esc {
            Esc::None => unreachable!("handled above"),
            Esc::Backslash if b == b'u' => Esc::Hex {
                high: None,
                digits: 0,
                acc: 0,
            },
            Esc::Backslash => {
                out.push(match b {
                    b'"' => '"',
                    b'\\' => '\\',
                    b'/' => '/',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    b't' => '\t',
                    _ => return Err(fail(*i, "invalid escape")),
                });
                Esc::None
            }
            Esc::Hex { high, digits, acc } => {
                let Some(d) = (b as char).to_digit(16) else {
                    return Err(fail(*i, "invalid \\u escape"));
                };
                let acc = (acc << 4) | d as u16;
                if digits < 3 {
                    Esc::Hex {
                        high,
                        digits: digits + 1,
                        acc,
                    }
                } else {
                    match (high, acc) {
                        (None, 0xD800..=0xDBFF) => Esc::High(acc),
                        (Some(h), 0xDC00..=0xDFFF) => {
                            let c = 0x10000 + ((u32::from(h) - 0xD800) << 10) + (u32::from(acc) - 0xDC00);
                            out.push(char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER));
                            Esc::None
                        }
                        (None, 0xDC00..=0xDFFF) | (Some(_), _) => return Err(fail(*i, "unpaired surrogate in \\u escape")),
                        (None, c) => {
                            out.push(char::from_u32(u32::from(c)).unwrap_or(char::REPLACEMENT_CHARACTER));
                            Esc::None
                        }
                    }
                }
            }
            Esc::High(h) if b == b'\\' => Esc::HighBackslash(h),
            Esc::HighBackslash(h) if b == b'u' => Esc::Hex {
                high: Some(h),
                digits: 0,
                acc: 0,
            },
            Esc::High(_) | Esc::HighBackslash(_) => return Err(fail(*i, "unpaired surrogate in \\u escape")),
        };
        *i += 1;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Feeds `text` in one delta per char; returns the previews after each and the result.
    fn previews(text: &str) -> (Vec<Value>, Result<Value, PartialJsonError>) {
        let mut p = PartialJson::new();
        let mut out = Vec::new();
        for (i, c) in text.char_indices() {
            if let Err(e) = p.push(&text[i..i + c.len_utf8()]) {
                return (out, Err(e));
            }
            out.push(p.value().clone());
        }
        (out, p.finish())
    }

    fn preview_of(text: &str) -> Value {
        let mut p = PartialJson::new();
        p.push(text).unwrap();
        p.value().clone()
    }

    fn error_of(chunks: &[&str]) -> PartialJsonError {
        let mut p = PartialJson::new();
        for c in chunks {
            if let Err(e) = p.push(c) {
                // Poisoned: the same error again.
                assert_eq!(p.push("1"), Err(e.clone()));
                return e;
            }
        }
        p.finish().unwrap_err()
    }

    #[test]
    fn previews_of_prefixes() {
        let cases: &[(&str, Value)] = &[
            ("", Value::Null),
            ("  ", Value::Null),
            ("{", json!({})),
            ("[", json!([])),
            (r#"{"a"#, json!({})),
            (r#"{"a""#, json!({})),
            (r#"{"a":"#, json!({})),
            (r#"{"a": -"#, json!({})),
            (r#"{"a": t"#, json!({})),
            (r#"{"a": tru"#, json!({})),
            (r#"{"a": true"#, json!({"a": true})),
            (r#"{"a": n"#, json!({})),
            (r#"{"a": null"#, json!({"a": null})),
            (r#"{"a": fals"#, json!({})),
            (r#"{"a": false ,"#, json!({"a": false})),
            (r#"{"a": ""#, json!({"a": ""})),
            (r#"{"a": "he"#, json!({"a": "he"})),
            (r#"{"a": "he\"#, json!({"a": "he"})),
            (r#"{"a": "he\n"#, json!({"a": "he\n"})),
            (r#"{"a": "x\u00"#, json!({"a": "x"})),
            (r#"{"a": "x\u00e9"#, json!({"a": "xé"})),
            (r#"{"a": "\ud83d"#, json!({"a": ""})),
            (r#"{"a": "\ud83d\"#, json!({"a": ""})),
            (r#"{"a": "\ud83d\ude0"#, json!({"a": ""})),
            (r#"{"a": "\ud83d\ude00"#, json!({"a": "😀"})),
            (r#"{"a": 1"#, json!({"a": 1})),
            (r#"{"a": 12"#, json!({"a": 12})),
            (r#"{"a": 12."#, json!({"a": 12})),
            (r#"{"a": 12.5"#, json!({"a": 12.5})),
            (r#"{"a": 12.5e"#, json!({"a": 12.5})),
            (r#"{"a": 12.5e-"#, json!({"a": 12.5})),
            (r#"{"a": 12.5e-1"#, json!({"a": 1.25})),
            (r#"{"a": -0"#, json!({"a": -0.0})),
            (r#"{"a": [1, [2, {"b": "c"#, json!({"a": [1, [2, {"b": "c"}]]})),
            (r#"{"a": [1, [2, {"b": "c"}], "#, json!({"a": [1, [2, {"b": "c"}]]})),
            (r#"{"a": [1, [2, {"b": "c"}]], "d"#, json!({"a": [1, [2, {"b": "c"}]]})),
            (r#"["x", tr"#, json!(["x"])),
            (r#"["x", -"#, json!(["x"])),
            ("\"top", json!("top")),
            ("12", json!(12)),
            ("-", Value::Null),
            ("[] ", json!([])),
        ];
        for (text, want) in cases {
            assert_eq!(&preview_of(text), want, "preview of {text:?}");
        }
    }

    #[test]
    fn char_by_char_previews_lead_to_the_full_value() {
        let text = r#" {"name": "Ada \"the\" Countess\u0021", "tags": ["x", "y\/z"], "n": -12.5E+2, "ok": true, "nil": null,
            "nested": {"deep": [[[]], {}], "emoji": "\ud83d\ude00 日本"}, "big": 18446744073709551616 } "#;
        let (steps, end) = previews(text);
        let full: Value = serde_json::from_str(text).unwrap();
        assert_eq!(end.unwrap(), full);
        assert_eq!(steps.last().unwrap(), &full);
        // A few milestones along the way.
        assert!(steps.contains(&json!({"name": "Ada \"the\" Countess"})));
        assert!(steps.contains(&json!({"name": "Ada \"the\" Countess!", "tags": ["x", "y/"]})));
        assert!(steps.contains(&json!({"name": "Ada \"the\" Countess!", "tags": ["x", "y/z"], "n": -12.5})));
    }

    #[test]
    fn escapes_and_numbers_split_across_deltas() {
        let mut p = PartialJson::new();
        for chunk in [
            "[\"a\\u12",
            "34\", \"\\",
            "ud83d",
            "\\",
            "u",
            "de00",
            "\", 1",
            "2.",
            "5",
            "e",
            "+",
            "3]",
        ] {
            p.push(chunk).unwrap();
        }
        assert_eq!(p.finish().unwrap(), json!(["a\u{1234}", "😀", 12.5e3]));
    }

    #[test]
    fn top_level_scalars_and_completeness() {
        for text in ["0", "-0", "12", "1.5e3", "true", "false", "null", "\"s\"", " 7 ", "[]", "{}"] {
            let mut p = PartialJson::new();
            p.push(text).unwrap();
            assert!(p.is_complete(), "{text:?}");
            assert_eq!(p.finish().unwrap(), serde_json::from_str::<Value>(text).unwrap(), "{text:?}");
        }
        for text in ["", " ", "-", "1.", "1e", "1e+", "tru", "\"s", "[", "{\"a\":1"] {
            let mut p = PartialJson::new();
            p.push(text).unwrap();
            assert!(!p.is_complete(), "{text:?}");
            let e = p.finish().unwrap_err();
            assert_eq!(e.offset, text.len(), "{text:?}");
            assert!(e.message.starts_with("unexpected end of input"), "{e}");
        }
    }

    #[test]
    fn errors_say_where() {
        let cases: &[(&[&str], usize, &str)] = &[
            (&["[1,", " ]"], 4, "expected a JSON value"),
            (&["{\"a\":1,}"], 7, "expected a key"),
            (&["{\"a\" 1}"], 5, "expected ':'"),
            (&["[1 2]"], 3, "expected ',' or ']'"),
            (&["{\"a\":1]"], 6, "expected ',' or '}'"),
            (&["[1}"], 2, "expected ',' or ']'"),
            (&["[tx"], 2, "invalid literal"),
            (&["[-x"], 2, "invalid number"),
            (&["[1.x"], 3, "invalid number"),
            (&["[01]"], 2, "expected ',' or ']'"),
            (&["{} x"], 3, "trailing characters"),
            (&["1 2"], 2, "trailing characters"),
            (&["\"a\u{1}\""], 2, "control character"),
            (&["\"\\x\""], 2, "invalid escape"),
            (&["\"\\u12g4\""], 5, "invalid \\u escape"),
            (&["\"\\udc00\""], 6, "unpaired surrogate"),
            (&["\"\\ud800", "x\""], 7, "unpaired surrogate"),
            (&["\"\\ud800\\n\""], 8, "unpaired surrogate"),
            (&["\"\\ud800\\u0041\""], 12, "unpaired surrogate"),
            (&["[1e400]"], 1, "number out of range"),
            (&["é"], 0, "expected a JSON value"),
        ];
        for (chunks, offset, msg) in cases {
            let e = error_of(chunks);
            assert_eq!(e.offset, *offset, "{chunks:?}: {e}");
            assert!(e.message.contains(msg), "{chunks:?}: {e}");
            assert!(serde_json::from_str::<Value>(&chunks.concat()).is_err(), "{chunks:?}");
        }
        let e = error_of(&["[tx"]);
        assert_eq!(e.to_string(), "invalid JSON at byte 2: unexpected 'x': invalid literal");
    }

    #[test]
    fn error_keeps_the_preview_and_len() {
        let mut p = PartialJson::new();
        p.push("[1, \"ab").unwrap();
        assert!(p.push("c\", x").is_err());
        assert_eq!(p.value(), &json!([1, "abc"]));
        assert_eq!(p.len(), 11);
        assert!(!p.is_complete());
    }

    #[test]
    fn depth_limit_matches_serde_json() {
        for depth in [MAX_DEPTH - 1, MAX_DEPTH, 100_000] {
            let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            let mut p = PartialJson::new();
            let ours = p.push(&text).and_then(|_| p.finish());
            let theirs = serde_json::from_str::<Value>(&text);
            assert_eq!(ours.is_ok(), theirs.is_ok(), "depth {depth}");
            if depth >= MAX_DEPTH {
                assert_eq!(ours.unwrap_err().offset, MAX_DEPTH - 1);
            }
        }
        // Objects count too; no stack overflow on drop or clone of the deepest allowed tree.
        let text = format!("{}1{}", "{\"k\":[".repeat(63), "]}".repeat(63));
        let mut p = PartialJson::new();
        p.push(&text).unwrap();
        let copy = p.clone();
        assert_eq!(copy.finish().unwrap(), serde_json::from_str::<Value>(&text).unwrap());
    }

    #[test]
    fn duplicate_keys_keep_the_last_like_serde_json() {
        let text = r#"{"a": [1], "b": 2, "a": "x"}"#;
        let (_, end) = previews(text);
        assert_eq!(end.unwrap(), serde_json::from_str::<Value>(text).unwrap());
        assert_eq!(preview_of(r#"{"a": [1], "a": "#), json!({"a": [1]}));
        assert_eq!(preview_of(r#"{"a": [1], "a": {"#), json!({"a": {}}));
    }

    #[test]
    fn long_numbers_stay_linear_and_exact() {
        let digits = "7".repeat(10_000);
        let text = format!("[1.{digits}e-3]");
        let mut p = PartialJson::new();
        for chunk in text.as_bytes().chunks(16) {
            p.push(std::str::from_utf8(chunk).unwrap()).unwrap();
            assert!(p.value().as_array().unwrap().iter().all(Value::is_number));
        }
        assert_eq!(p.finish().unwrap(), serde_json::from_str::<Value>(&text).unwrap());
    }

    #[test]
    fn number_previews_do_not_depend_on_the_deltas() {
        let long = format!("[1{}", "2".repeat(100));
        let want: Value = serde_json::from_str(&long[1..65]).unwrap();
        for size in [1, 3, 7, long.len()] {
            let mut p = PartialJson::new();
            for chunk in long.as_bytes().chunks(size) {
                p.push(std::str::from_utf8(chunk).unwrap()).unwrap();
            }
            assert_eq!(p.value(), &json!([want]), "deltas of {size}");
        }
        // Out of range for good (the exponent can only grow): an error as soon as it is seen.
        for text in ["[-12e+5300", r#"{"a": 1e999"#, "1e999", "[0.5e400, 1]"] {
            for size in [1, 3, 7, text.len()] {
                let mut p = PartialJson::new();
                let e = text
                    .as_bytes()
                    .chunks(size)
                    .find_map(|c| p.push(std::str::from_utf8(c).unwrap()).err());
                let e = e.unwrap_or_else(|| p.finish().unwrap_err());
                assert_eq!(e.message, "number out of range", "{text:?} in deltas of {size}");
                assert_eq!(e.offset, text.find(['-', '0', '1']).unwrap(), "{text:?}");
            }
        }
        // Not out of range: a long mantissa brought back by a negative exponent.
        let text = format!("[1{}e-300]", "0".repeat(400));
        let mut p = PartialJson::new();
        p.push(&text).unwrap();
        assert_eq!(p.finish().unwrap(), serde_json::from_str::<Value>(&text).unwrap());
    }

    #[test]
    fn whitespace_everywhere() {
        let text = " \t\n\r{ \"a\" \n:\t[ 1 , 2 ] , \"b\" : { } } \n";
        let (steps, end) = previews(text);
        assert_eq!(end.unwrap(), json!({"a": [1, 2], "b": {}}));
        assert_eq!(steps[3], Value::Null);
    }
}
