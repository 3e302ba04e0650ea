//! The lexical pieces of the parser: where a number, a literal or a string escape is, and
//! reading string content. Nothing here knows about containers or the preview tree.

use serde_json::Value;

use super::PartialJsonError;

/// Where a number's text is in the JSON number grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Num {
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
    pub(super) fn step(self, b: u8) -> Option<Num> {
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

    pub(super) fn is_complete(self) -> bool {
        matches!(self, Num::Zero | Num::Int | Num::Frac | Num::Exp)
    }

    /// Length of the longest prefix of a `len`-byte number text in this state that is a
    /// complete number (0: none).
    pub(super) fn complete_prefix(self, len: usize) -> usize {
        match self {
            Num::Start | Num::Minus => 0,
            Num::Dot | Num::E => len - 1,
            Num::ESign => len - 2,
            Num::Zero | Num::Int | Num::Frac | Num::Exp => len,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lit {
    True,
    False,
    Null,
}

impl Lit {
    pub(super) fn word(self) -> &'static [u8] {
        match self {
            Lit::True => b"true",
            Lit::False => b"false",
            Lit::Null => b"null",
        }
    }

    pub(super) fn value(self) -> Value {
        match self {
            Lit::True => Value::Bool(true),
            Lit::False => Value::Bool(false),
            Lit::Null => Value::Null,
        }
    }
}

/// Where a string is in an escape sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Esc {
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

/// Reads string content from `src[*i..]` into `out`, up to and including the closing quote.
/// Returns whether the string closed. Escapes are decoded once complete, so `out` is always
/// the decoded prefix of the string.
pub(super) fn lex_string(esc: &mut Esc, src: &str, i: &mut usize, base: usize, out: &mut String) -> Result<bool, PartialJsonError> {
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
        *esc = escape_step(*esc, b, out).map_err(|message| fail(*i, message))?;
        *i += 1;
    }
}

/// One byte of an escape sequence: the state after it (a completed escape is written to `out`).
fn escape_step(esc: Esc, b: u8, out: &mut String) -> Result<Esc, &'static str> {
    Ok(match esc {
        Esc::None => unreachable!("only called inside an escape"),
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
                _ => return Err("invalid escape"),
            });
            Esc::None
        }
        Esc::Hex { high, digits, acc } => {
            let Some(d) = (b as char).to_digit(16) else {
                return Err("invalid \\u escape");
            };
            let acc = (acc << 4) | d as u16;
            if digits < 3 {
                Esc::Hex {
                    high,
                    digits: digits + 1,
                    acc,
                }
            } else {
                code_unit(high, acc, out)?
            }
        }
        Esc::High(h) if b == b'\\' => Esc::HighBackslash(h),
        Esc::HighBackslash(h) if b == b'u' => Esc::Hex {
            high: Some(h),
            digits: 0,
            acc: 0,
        },
        Esc::High(_) | Esc::HighBackslash(_) => return Err("unpaired surrogate in \\u escape"),
    })
}

/// A complete `\uXXXX` code unit: a character, or the first half of a surrogate pair.
fn code_unit(high: Option<u16>, unit: u16, out: &mut String) -> Result<Esc, &'static str> {
    Ok(match (high, unit) {
        (None, 0xD800..=0xDBFF) => Esc::High(unit),
        (Some(h), 0xDC00..=0xDFFF) => {
            let c = 0x10000 + ((u32::from(h) - 0xD800) << 10) + (u32::from(unit) - 0xDC00);
            out.push(char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER));
            Esc::None
        }
        (None, 0xDC00..=0xDFFF) | (Some(_), _) => return Err("unpaired surrogate in \\u escape"),
        (None, c) => {
            out.push(char::from_u32(u32::from(c)).unwrap_or(char::REPLACEMENT_CHARACTER));
            Esc::None
        }
    })
}
