//! `partial_json`: a 1 MiB argument document streamed in 16-byte deltas with a live preview
//! after every delta, against one `serde_json::from_slice` of the whole document in the same
//! run (goal: at most 3×). At 64 KiB also the naive way, re-parsing the whole buffer after
//! every delta (close what is open, then `serde_json::from_str`), to show the quadratic cost.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use tool_core::partial_json::PartialJson;

/// A deterministic pseudo-random stream (64-bit LCG, high bits).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "let",
    "mut",
    "value",
    "self",
    "return",
    "match",
    "Some(x)",
    "None",
    "=>",
    "{",
    "}",
    "(",
    ")",
    "\"quoted\"",
    "path\\to\\file",
    "café",
    "naïve",
    "日本語",
    "→",
    "// comment",
    "0x1F",
    "&mut",
    "Vec<u8>",
    "\t",
    "if",
    "else",
    "for",
    "in",
    "async",
    "await?",
    "Ok(())",
    "😀",
];

/// Source-code-like text: words, quotes, backslashes, tabs, newlines and some non-ASCII.
fn code(rng: &mut Rng, bytes: usize) -> String {
    let mut out = String::new();
    while out.len() < bytes {
        out.push_str(rng.pick(WORDS));
        out.push_str(if rng.below(8) == 0 { "\n    " } else { " " });
    }
    out
}

/// One file of a "write these files" tool call: path, metadata, a long `content` string, a
/// list of small edits and some numbers.
fn file(rng: &mut Rng, i: usize) -> Value {
    let edits: Vec<Value> = (0..rng.below(8) + 2)
        .map(|_| {
            json!({
                "line": rng.below(5_000),
                "column": rng.below(120),
                "old_text": code(rng, 30),
                "new_text": code(rng, 40),
                "confidence": rng.below(1_000) as f64 / 1_000.0,
                "kind": rng.pick(&["insert", "replace", "delete"]),
            })
        })
        .collect();
    let content_len = 1_200 + rng.below(1_200) as usize;
    json!({
        "path": format!("src/module_{}/file_{i}.rs", rng.below(40)),
        "language": "rust",
        "executable": rng.below(10) == 0,
        "mode": null,
        "size_hint": rng.below(1 << 20),
        "content": code(rng, content_len),
        "edits": edits,
        "weights": (0..6).map(|_| (rng.below(2_000_000) as f64 - 1e6) * 1.5e-7).collect::<Vec<_>>(),
        "tags": (0..rng.below(4)).map(|_| rng.pick(&["generated", "test", "api", "hot-path", "ünïcode"])).collect::<Vec<_>>(),
    })
}

/// A compact argument document of at least `bytes` bytes.
fn document(bytes: usize) -> String {
    let mut rng = Rng(0x5eed);
    let mut files = Vec::new();
    let mut size = 0;
    while size < bytes {
        let f = file(&mut rng, files.len());
        size += serde_json::to_string(&f).unwrap().len() + 1;
        files.push(f);
    }
    serde_json::to_string(&json!({
        "task": "Apply the refactoring plan: rename `Foo` to `Bar`, update \"call sites\" and tests.",
        "dry_run": false,
        "files": files,
        "options": {"max_bytes": 1_048_576, "timeout_s": 30.5, "labels": ["refactor", "bulk"], "author": {"name": "bot", "id": 42}},
    }))
    .unwrap()
}

/// 16-byte deltas, each end moved up to a char boundary.
fn deltas(doc: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < doc.len() {
        let mut end = (at + 16).min(doc.len());
        while !doc.is_char_boundary(end) {
            end += 1;
        }
        out.push(&doc[at..end]);
        at = end;
    }
    out
}

fn incremental(deltas: &[&str]) -> Value {
    let mut p = PartialJson::new();
    for d in deltas {
        p.push(d).unwrap();
        black_box(p.value());
    }
    p.finish().unwrap()
}

/// The naive preview: scan the whole buffer, cut it back to the last point where only
/// closers are missing (keeping an unterminated value string up to its last complete char),
/// close what is open and parse the result with `serde_json`.
fn naive_preview(buf: &str) -> Option<Value> {
    #[derive(Clone, Copy, PartialEq)]
    enum Ctx {
        Array,
        ObjectKey,
        ObjectValue,
    }
    let bytes = buf.as_bytes();
    let mut stack: Vec<Ctx> = Vec::new();
    let mut good = 0; // cut here and close the stack
    let mut in_string = false;
    let mut key = false;
    let mut string_good = 0; // inside a value string: cut here, then `"` and close
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'"' => {
                    in_string = false;
                    if !key {
                        good = i + 1;
                    }
                }
                b'\\' if bytes.get(i + 1) == Some(&b'u') => {
                    let high = buf
                        .get(i + 2..i + 6)
                        .is_some_and(|h| h.starts_with(['d', 'D']) && h[1..2].contains(['8', '9', 'a', 'b', 'A', 'B']));
                    i += if high { 11 } else { 5 };
                    if i < bytes.len() {
                        string_good = i + 1;
                    }
                }
                b'\\' => {
                    i += 1;
                    if i < bytes.len() {
                        string_good = i + 1;
                    }
                }
                _ => string_good = i + 1,
            }
        } else {
            match b {
                b'"' => {
                    in_string = true;
                    key = stack.last() == Some(&Ctx::ObjectKey);
                    string_good = i + 1;
                }
                b'[' => {
                    stack.push(Ctx::Array);
                    good = i + 1;
                }
                b'{' => {
                    stack.push(Ctx::ObjectKey);
                    good = i + 1;
                }
                b']' | b'}' => {
                    stack.pop();
                    good = i + 1;
                }
                b':' => *stack.last_mut()? = Ctx::ObjectValue,
                b',' => {
                    good = i;
                    if let Some(top @ Ctx::ObjectValue) = stack.last_mut() {
                        *top = Ctx::ObjectKey;
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    let mut text = if in_string && !key {
        format!("{}\"", &buf[..string_good.min(buf.len())])
    } else {
        buf[..good].to_string()
    };
    for ctx in stack.iter().rev() {
        text.push(if *ctx == Ctx::Array { ']' } else { '}' });
    }
    serde_json::from_str(&text).ok()
}

fn naive(deltas: &[&str]) -> Value {
    let mut buf = String::new();
    let mut last = None;
    for d in deltas {
        buf.push_str(d);
        last = naive_preview(&buf).or(last);
        black_box(&last);
    }
    last.unwrap()
}

fn partial_json(c: &mut Criterion) {
    let big = document(1 << 20);
    let small = document(64 << 10);
    for doc in [&big, &small] {
        let full: Value = serde_json::from_str(doc).unwrap();
        assert_eq!(incremental(&deltas(doc)), full);
        assert_eq!(naive(&deltas(doc)), full);
    }
    eprintln!(
        "documents: {} bytes ({} deltas), {} bytes ({} deltas)",
        big.len(),
        deltas(&big).len(),
        small.len(),
        deltas(&small).len()
    );

    let mut group = c.benchmark_group("partial_json");
    group.sample_size(10);
    for (name, doc) in [("1MiB", &big), ("64KiB", &small)] {
        let d = deltas(doc);
        group.throughput(Throughput::Bytes(doc.len() as u64));
        group.bench_function(format!("serde_from_slice/{name}"), |b| {
            b.iter(|| serde_json::from_slice::<Value>(black_box(doc.as_bytes())).unwrap())
        });
        group.bench_function(format!("incremental_16B/{name}"), |b| b.iter(|| incremental(black_box(&d))));
        if name == "64KiB" {
            group.bench_function(format!("naive_reparse_16B/{name}"), |b| b.iter(|| naive(black_box(&d))));
        }
    }
    group.finish();
}

criterion_group!(benches, partial_json);
criterion_main!(benches);
