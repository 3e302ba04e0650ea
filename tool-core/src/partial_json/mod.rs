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

mod lex;

use std::str::FromStr;

use serde_json::map::Entry;
use serde_json::{Map, Number, Value};

use lex::{Esc, Lit, Num, lex_string};

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
                State::ValueString | State::KeyString => self.string(cur, src, i)?,
                State::Number(n) => self.number(cur, n, src, i)?,
                State::Literal(lit, matched) => self.literal(cur, (lit, matched), src, i)?,
                _ if matches!(b, b' ' | b'\t' | b'\n' | b'\r') => *i += 1,
                State::Value | State::ArrayFirst if matches!(b, b'[' | b'{') => cur = self.open(cur, src, i)?,
                state => {
                    if let Some(step) = self.punctuation(cur, state, src, i)? {
                        return Ok(step);
                    }
                }
            }
        }
        if let State::Number(n) = self.state {
            self.preview_number(cur, n)?;
        }
        Ok(Step::End)
    }

    /// Reads on in the string being read (a value, or an object key).
    fn string(&mut self, cur: &mut Value, src: &str, i: &mut usize) -> Result<(), PartialJsonError> {
        if self.state == State::KeyString {
            let Some(Frame::Object(key)) = self.frames.last_mut() else {
                unreachable!("open key")
            };
            if lex_string(&mut self.esc, src, i, self.offset, key)? {
                self.state = State::Colon;
            }
            return Ok(());
        }
        let Value::String(s) = member(cur, self.frames.last()) else {
            unreachable!("open string")
        };
        if lex_string(&mut self.esc, src, i, self.offset, s)? {
            self.end_value();
        }
        Ok(())
    }

    /// Reads on in the number being read; a number that ended is put in the tree.
    fn number(&mut self, cur: &mut Value, mut n: Num, src: &str, i: &mut usize) -> Result<(), PartialJsonError> {
        let bytes = src.as_bytes();
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
        Ok(())
    }

    /// Reads one more byte of `true`, `false` or `null`.
    fn literal(&mut self, cur: &mut Value, (lit, matched): (Lit, u8), src: &str, i: &mut usize) -> Result<(), PartialJsonError> {
        let word = lit.word();
        if word.get(matched as usize) != src.as_bytes().get(*i) {
            return Err(self.fail(*i, src, "invalid literal"));
        }
        *i += 1;
        if matched as usize + 1 == word.len() {
            insert(cur, self.frames.last(), lit.value());
            self.end_value();
        } else {
            self.state = State::Literal(lit, matched + 1);
        }
        Ok(())
    }

    /// Opens an array or object where a value starts; returns the new innermost container.
    fn open<'v>(&mut self, cur: &'v mut Value, src: &str, i: &mut usize) -> Result<&'v mut Value, PartialJsonError> {
        if self.frames.len() + 1 >= MAX_DEPTH {
            return Err(self.fail(*i, src, "nested too deeply"));
        }
        let array = src.as_bytes()[*i] == b'[';
        *i += 1;
        let (frame, empty, state) = if array {
            (Frame::Array, Value::Array(Vec::new()), State::ArrayFirst)
        } else {
            (Frame::Object(String::new()), Value::Object(Map::new()), State::ObjectFirst)
        };
        let cur = insert(cur, self.frames.last(), empty);
        self.frames.push(frame);
        self.state = state;
        Ok(cur)
    }

    /// A byte between values: the start of a string, number or literal, a colon, a comma or a
    /// closing bracket. `Some(Reopen)` when a container closed.
    fn punctuation(&mut self, cur: &mut Value, state: State, src: &str, i: &mut usize) -> Result<Option<Step>, PartialJsonError> {
        let b = src.as_bytes()[*i];
        let top = self.frames.last();
        match (state, b) {
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
            (State::ArrayFirst, b']') | (State::ObjectFirst, b'}') => return Ok(Some(self.close(i))),
            (State::After, b']' | b'}') if matches!((top, b), (Some(Frame::Array), b']') | (Some(Frame::Object(_)), b'}')) => {
                return Ok(Some(self.close(i)));
            }
            (state, _) => return Err(self.fail(*i, src, state.expected(top))),
        }
        Ok(None)
    }

    /// Closes the innermost container.
    fn close(&mut self, i: &mut usize) -> Step {
        *i += 1;
        self.frames.pop();
        self.end_value();
        Step::Reopen
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

#[cfg(test)]
mod tests;
