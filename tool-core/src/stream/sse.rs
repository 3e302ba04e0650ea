//! An incremental server-sent events parser (the WHATWG "event stream interpretation").
//!
//! Owns [`SseParser`], which takes raw bytes in chunks of any size (a chunk may end inside a
//! line, inside a `\r\n` pair or inside a UTF-8 character) and hands out complete
//! [`SseEvent`]s in order. It knows nothing about what the `data` means: the provider drivers
//! in the sibling modules read it.
//!
//! Rules followed (<https://html.spec.whatwg.org/multipage/server-sent-events.html>):
//! - a line ends with `\r\n`, `\n` or `\r` (a `\r` at the end of a chunk ends the line at once;
//!   a `\n` opening the next chunk is then skipped);
//! - one leading UTF-8 byte order mark is stripped; invalid UTF-8 decodes to U+FFFD;
//! - a line starting with `:` is a comment (keep-alives) and is ignored;
//! - `field:value` (one space after the colon is dropped), a line without a colon is a field
//!   with an empty value; `event`, `data`, `id` (ignored if it contains NUL) and `retry` (ASCII
//!   digits only) are read, other fields ignored;
//! - every `data` line appends its value and `\n`; a blank line dispatches: an empty data buffer
//!   dispatches nothing, otherwise the last `\n` is removed and the event type defaults to
//!   `message`; the last event id persists across events;
//! - at the end of the stream an event without its closing blank line is not dispatched
//!   ([`SseParser::finish`] reports it so a caller can treat it as truncation).
//!
//! Memory: the parser holds only the unfinished line and the current event's data; each byte is
//! looked at once, whatever the chunking.

use std::borrow::Cow;

/// Default bound on one line plus one event's data, in bytes (see [`SseParser::with_max_event_bytes`]).
pub const DEFAULT_MAX_EVENT_BYTES: usize = 64 * 1024 * 1024;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The event type (`event:` field), `"message"` when none was given.
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The last event id seen so far in the stream (`id:` field, persists across events).
    pub id: String,
    /// 1-based number of the stream line holding the event's first `data:` field.
    pub line: usize,
}

/// The SSE layer failed: an event or line grew past the configured bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseError {
    /// 1-based line number where the bound was crossed.
    pub line: usize,
    /// What happened.
    pub message: String,
}

/// An event the stream was still in the middle of when it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incomplete {
    /// 1-based line number where the unfinished event (or line) starts.
    pub line: usize,
}

/// Incremental SSE parser: push bytes, receive events.
#[derive(Debug)]
pub struct SseParser {
    /// Bytes of the current line not yet terminated.
    partial: Vec<u8>,
    /// The previous chunk ended with `\r`: skip one `\n` at the start of the next.
    skip_lf: bool,
    /// Number of lines completed so far.
    lines: usize,
    event_type: String,
    data: String,
    /// Line of the current event's first `data:` field.
    data_line: Option<usize>,
    last_id: String,
    retry: Option<u64>,
    max_event_bytes: usize,
}

impl Default for SseParser {
    fn default() -> Self {
        SseParser::new()
    }
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        SseParser {
            partial: Vec::new(),
            skip_lf: false,
            lines: 0,
            event_type: String::new(),
            data: String::new(),
            data_line: None,
            last_id: String::new(),
            retry: None,
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
        }
    }

    /// Bounds the bytes one unfinished line plus one event's data may take (default
    /// [`DEFAULT_MAX_EVENT_BYTES`]); past it [`SseParser::push`] fails instead of growing.
    pub fn with_max_event_bytes(mut self, max: usize) -> Self {
        self.max_event_bytes = max;
        self
    }

    /// The reconnection time last set by a `retry:` field, in milliseconds.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// Bytes held for the unfinished line and event (what the parser keeps between pushes).
    pub fn buffered_bytes(&self) -> usize {
        self.partial.len() + self.data.len() + self.event_type.len()
    }

    /// Number of lines completed so far.
    pub fn lines(&self) -> usize {
        self.lines
    }

    /// Feeds the next bytes of the stream. `on_event` is called for each dispatched event in
    /// order; returning `false` from it stops the parsing of this chunk (the rest is dropped: use
    /// it when the caller has failed and will not push again).
    pub fn push(&mut self, bytes: &[u8], mut on_event: impl FnMut(SseEvent) -> bool) -> Result<(), SseError> {
        let mut rest = bytes;
        if self.skip_lf && !rest.is_empty() {
            self.skip_lf = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        while !rest.is_empty() {
            let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') else {
                self.partial.extend_from_slice(rest);
                self.check_size()?;
                break;
            };
            let keep_going = if self.partial.is_empty() {
                self.line(&rest[..end], &mut on_event)?
            } else {
                self.partial.extend_from_slice(&rest[..end]);
                let line = std::mem::take(&mut self.partial);
                let keep_going = self.line(&line, &mut on_event)?;
                // Reuse the allocation only while it is small, so one huge line does not pin memory.
                if line.capacity() <= 64 * 1024 {
                    self.partial = line;
                    self.partial.clear();
                }
                keep_going
            };
            let terminator = rest[end];
            rest = &rest[end + 1..];
            if terminator == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
            if !keep_going {
                break;
            }
        }
        Ok(())
    }

    /// Ends the stream. Returns where an unfinished event starts if the stream stopped inside
    /// one (data without its closing blank line, or a line without its terminator); such an
    /// event is not dispatched. A trailing comment line is not counted as unfinished.
    pub fn finish(&self) -> Option<Incomplete> {
        if let Some(line) = self.data_line {
            return Some(Incomplete { line });
        }
        if !self.partial.is_empty() && self.partial.first() != Some(&b':') {
            // A lone byte order mark before anything else is not data either.
            if !(self.lines == 0 && b"\xEF\xBB\xBF".starts_with(&self.partial)) {
                return Some(Incomplete { line: self.lines + 1 });
            }
        }
        None
    }

    fn check_size(&self) -> Result<(), SseError> {
        if self.partial.len() + self.data.len() > self.max_event_bytes {
            return Err(SseError {
                line: self.lines + 1,
                message: format!("an SSE event is larger than the {} bytes allowed", self.max_event_bytes),
            });
        }
        Ok(())
    }

    /// Interprets one complete line (without its terminator).
    fn line(&mut self, raw: &[u8], on_event: &mut impl FnMut(SseEvent) -> bool) -> Result<bool, SseError> {
        let raw = if self.lines == 0 {
            raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw)
        } else {
            raw
        };
        self.lines += 1;
        if raw.is_empty() {
            return Ok(self.dispatch(on_event));
        }
        if raw[0] == b':' {
            return Ok(true);
        }
        let (name, value) = match raw.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &raw[colon + 1..];
                (&raw[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (raw, &[][..]),
        };
        match name {
            b"data" => {
                if self.data.len() + value.len() + 1 > self.max_event_bytes {
                    return Err(SseError {
                        line: self.lines,
                        message: format!("an SSE event is larger than the {} bytes allowed", self.max_event_bytes),
                    });
                }
                if self.data_line.is_none() {
                    self.data_line = Some(self.lines);
                }
                self.data.push_str(&decode(value));
                self.data.push('\n');
            }
            b"event" => self.event_type = decode(value).into_owned(),
            b"id" if !value.contains(&0) => self.last_id = decode(value).into_owned(),
            // Digits only; a value too large for u64 is ignored like any invalid one.
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                if let Ok(ms) = std::str::from_utf8(value).unwrap_or_default().parse() {
                    self.retry = Some(ms);
                }
            }
            _ => {}
        }
        Ok(true)
    }

    fn dispatch(&mut self, on_event: &mut impl FnMut(SseEvent) -> bool) -> bool {
        let Some(line) = self.data_line.take() else {
            self.event_type.clear();
            return true;
        };
        let mut data = std::mem::take(&mut self.data);
        data.pop(); // the trailing '\n' appended by the last data line
        let event = if self.event_type.is_empty() {
            "message".to_owned()
        } else {
            std::mem::take(&mut self.event_type)
        };
        self.event_type.clear();
        on_event(SseEvent {
            event,
            data,
            id: self.last_id.clone(),
            line,
        })
    }
}

fn decode(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(input: &[u8], chunk: usize) -> (Vec<SseEvent>, Option<Incomplete>) {
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        for piece in input.chunks(chunk.max(1)) {
            parser
                .push(piece, |e| {
                    events.push(e);
                    true
                })
                .unwrap();
        }
        (events, parser.finish())
    }

    fn ev(event: &str, data: &str, id: &str, line: usize) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
            id: id.into(),
            line,
        }
    }

    #[test]
    fn whatwg_examples() {
        // The spec's own examples: multi-line data, comments, ids, the trailing event dropped.
        let input = b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n";
        for chunk in 1..input.len() {
            let (events, rest) = parse_all(input, chunk);
            assert_eq!(
                events,
                vec![ev("message", "first event", "1", 3), ev("message", "second event", "", 6)]
            );
            assert_eq!(rest, Some(Incomplete { line: 9 }));
        }
        let input = b"data\n\ndata\ndata\n\ndata:\n";
        let (events, rest) = parse_all(input, 1);
        assert_eq!(events, vec![ev("message", "", "", 1), ev("message", "\n", "", 3)]);
        assert_eq!(rest, Some(Incomplete { line: 6 }));
        let input = b"data:test\n\ndata: test\n\n";
        assert_eq!(
            parse_all(input, 3).0,
            vec![ev("message", "test", "", 1), ev("message", "test", "", 3)]
        );
    }

    #[test]
    fn line_endings_bom_and_fields() {
        let input = "\u{feff}event: a\r\ndata: 1\r\ndata: é\r\n\r\nevent:b\rdata:2\r\rretry: 1500\nretry: x\nevent: only-type\n\nid: a\0b\ndata: 3\n\n";
        for chunk in 1..8 {
            let mut parser = SseParser::new();
            let mut events = Vec::new();
            for piece in input.as_bytes().chunks(chunk) {
                parser
                    .push(piece, |e| {
                        events.push(e);
                        true
                    })
                    .unwrap();
            }
            assert_eq!(
                events,
                vec![ev("a", "1\né", "", 2), ev("b", "2", "", 6), ev("message", "3", "", 13)],
                "chunk {chunk}"
            );
            assert_eq!(parser.retry(), Some(1500));
            assert_eq!(parser.finish(), None);
            assert_eq!(parser.buffered_bytes(), 0);
        }
    }

    #[test]
    fn size_bound() {
        let mut parser = SseParser::new().with_max_event_bytes(16);
        assert!(parser.push(b"data: 0123456789\n", |_| true).is_ok());
        let err = parser.push(b"data: 0123456789\n", |_| true).unwrap_err();
        assert_eq!(err.line, 2);
        let mut parser = SseParser::new().with_max_event_bytes(16);
        assert!(parser.push(&[b'x'; 17], |_| true).is_err());
    }

    #[test]
    fn trailing_comment_is_not_truncation() {
        let (_, rest) = parse_all(b"data: x\n\n: keep-alive", 4);
        assert_eq!(rest, None);
        let (_, rest) = parse_all(b"data: x\n\nda", 4);
        assert_eq!(rest, Some(Incomplete { line: 3 }));
    }
}
