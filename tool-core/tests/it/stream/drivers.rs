//! The streaming drivers on real SSE bytes (tests/fixtures/sse, written by gen_fixtures.py there).
//!
//! Every fixture is fed whole, in every chunk size from 1 to 64 and in seeded random splits; all
//! must give the same events (and the same error), which are then checked against the expected
//! sequence and each call's expected arguments.
//!
//! This file holds the decoding harness and the checks the tests share; the tests are in
//! `providers`, `failures`, `shapes`, `bounds` and `sse`.

use serde_json::{Value, json};
use tool_core::Dialect;
use tool_core::stream::{StreamDecoder, StreamError, ToolCallEvent};

mod bounds;
mod failures;
mod providers;
mod shapes;
mod sse;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/sse/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    events: Vec<ToolCallEvent>,
    error: Option<StreamError>,
}

/// Feeds `bytes` cut at `sizes` (cycled), then finishes; stops at the first error.
fn run(format: Dialect, bytes: &[u8], mut next_size: impl FnMut() -> usize) -> Outcome {
    let mut decoder = StreamDecoder::new(format);
    let mut events = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let (piece, tail) = rest.split_at(next_size().clamp(1, rest.len()));
        rest = tail;
        match decoder.push(piece) {
            Ok(more) => events.extend(more),
            Err(error) => {
                // Failed for good: the same error again, no events.
                assert_eq!(decoder.push(b"data: {}\n\n"), Err(error.clone()));
                return Outcome {
                    events,
                    error: Some(error),
                };
            }
        }
    }
    match decoder.finish() {
        Ok(more) => {
            events.extend(more);
            Outcome { events, error: None }
        }
        Err(error) => Outcome {
            events,
            error: Some(error),
        },
    }
}

/// SplitMix64: a deterministic source of split sizes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> usize {
        (self.next() % n) as usize
    }
}

/// The outcome of `bytes`, checked to be the same for every chunking.
fn decode_every_way(format: Dialect, name: &str) -> Outcome {
    let bytes = fixture(name);
    let whole = run(format, &bytes, || usize::MAX);
    for size in 1..=64 {
        assert_eq!(run(format, &bytes, || size), whole, "{name}: chunks of {size} bytes");
    }
    let mut rng = Rng(0x5EED ^ bytes.len() as u64);
    for trial in 0..200 {
        // Mostly small pieces, sometimes large ones, sometimes empty pushes (size 0 → 1 byte here,
        // so also push empty slices explicitly below).
        let max = [2, 7, 33, 300, 4000][trial % 5];
        assert_eq!(
            run(format, &bytes, || 1 + rng.below(max)),
            whole,
            "{name}: random split, trial {trial}"
        );
    }
    // Empty pushes between bytes change nothing.
    let mut decoder = StreamDecoder::new(format);
    let mut events = Vec::new();
    let mut error = None;
    for byte in &bytes {
        let pushed = decoder.push(&[]).and_then(|mut e| {
            e.extend(decoder.push(std::slice::from_ref(byte))?);
            Ok(e)
        });
        match pushed {
            Ok(more) => events.extend(more),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    if error.is_none() {
        match decoder.finish() {
            Ok(more) => events.extend(more),
            Err(e) => error = Some(e),
        }
    }
    assert_eq!(Outcome { events, error }, whole, "{name}: with empty pushes");
    whole
}

/// `S0 D0 A0 …`: kind and index of each event.
fn skeleton(events: &[ToolCallEvent]) -> String {
    let words: Vec<String> = events
        .iter()
        .map(|e| match e {
            ToolCallEvent::InputStart { index, .. } => format!("S{index}"),
            ToolCallEvent::InputDelta { index, .. } => format!("D{index}"),
            ToolCallEvent::InputAvailable { index, .. } => format!("A{index}"),
        })
        .collect();
    words.join(" ")
}

/// Expands `(D0 D1)x3` and `D1x2` shorthand.
fn expand(pattern: &str) -> String {
    let mut out = Vec::new();
    let mut rest = pattern.trim();
    while !rest.is_empty() {
        let (group, after): (Vec<&str>, &str) = if let Some(inner) = rest.strip_prefix('(') {
            let close = inner.find(')').unwrap();
            (inner[..close].split_whitespace().collect(), &inner[close + 1..])
        } else {
            let end = rest.find(' ').unwrap_or(rest.len());
            let word = &rest[..end];
            match word.split_once('x') {
                Some((w, n)) if !w.is_empty() => {
                    out.extend(std::iter::repeat_n(w.to_owned(), n.parse().unwrap()));
                    rest = rest[end..].trim_start();
                    continue;
                }
                _ => (vec![word], &rest[end..]),
            }
        };
        let (times, after) = match after.strip_prefix('x') {
            Some(a) => {
                let end = a.find(' ').unwrap_or(a.len());
                (a[..end].parse().unwrap(), &a[end..])
            }
            None => (1, after),
        };
        for _ in 0..times {
            out.extend(group.iter().map(|w| w.to_string()));
        }
        rest = after.trim_start();
    }
    out.join(" ")
}

struct Expected {
    id: &'static str,
    name: &'static str,
    args: Value,
    /// The deltas add up to the final input (false only where the provider restated it differently).
    deltas_add_up: bool,
}

fn call(id: &'static str, name: &'static str, args: Value) -> Expected {
    Expected {
        id,
        name,
        args,
        deltas_add_up: true,
    }
}

/// Checks the lifecycle of every call and its input.
fn check_calls(events: &[ToolCallEvent], expected: &[Expected]) {
    for (index, want) in expected.iter().enumerate() {
        let mine: Vec<&ToolCallEvent> = events.iter().filter(|e| e.index() == index).collect();
        assert!(mine.iter().all(|e| e.tool_call_id() == want.id), "call {index}: ids {mine:?}");
        assert_eq!(
            mine.first(),
            Some(&&ToolCallEvent::InputStart {
                tool_call_id: want.id.into(),
                tool_name: want.name.into(),
                index
            }),
            "call {index} starts first"
        );
        let Some(ToolCallEvent::InputAvailable { tool_name, input, .. }) = mine.last() else {
            panic!("call {index} does not end with InputAvailable: {mine:?}");
        };
        assert_eq!(tool_name, want.name);
        let middle = &mine[1..mine.len() - 1];
        let mut concatenated = String::new();
        for e in middle {
            let ToolCallEvent::InputDelta { delta, .. } = e else {
                panic!("call {index}: {e:?} between start and end")
            };
            assert!(!delta.is_empty(), "call {index}: empty delta");
            concatenated.push_str(delta);
        }
        if want.deltas_add_up {
            assert_eq!(&concatenated, input, "call {index}: deltas vs input");
        }
        let parsed: Value = serde_json::from_str(input).unwrap_or_else(|e| panic!("call {index}: input {input:?}: {e}"));
        assert_eq!(parsed, want.args, "call {index}: arguments");
    }
    let indices: std::collections::BTreeSet<usize> = events.iter().map(ToolCallEvent::index).collect();
    assert_eq!(indices.len(), expected.len(), "number of calls");
}
fn error_message(out: &Outcome) -> &str {
    &out.error.as_ref().expect("an error").message
}
