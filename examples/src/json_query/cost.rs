//! An upper bound on the work of a JSONPath query, computed before the query runs.
//!
//! `serde_json_path` has no budget of its own: `$..*..*..*` visits every node once per node
//! per node, `$[0,0,0,0][0,0,0,0]…` multiplies its matches at each segment, and a filter runs
//! its subqueries once per candidate. The query's shape is read here (a small descent over the
//! text that serde_json_path has already accepted, bounded by the nesting the caller checked)
//! and combined with the document's size into the most nodes the query could visit.

use super::{DocumentShape, MAX_QUERY_NESTING};

/// What one selector may select from one node.
enum Selector {
    /// A name or an index: at most one child.
    One,
    /// A wildcard or a slice: any number of children.
    Many,
    /// A filter: any number of children, each tested at this cost.
    Filter(FilterShape),
}

/// The parts of a filter expression that cost work on each candidate.
#[derive(Default)]
struct FilterShape {
    queries: Vec<QueryShape>,
    /// `==`/`!=` comparisons with no literal side: they may compare whole subtrees.
    deep_comparisons: u64,
    /// `match(…)`/`search(…)` calls: each compiles a regular expression.
    regex_calls: u64,
}

struct Segment {
    descendant: bool,
    selectors: Vec<Selector>,
}

struct QueryShape {
    segments: Vec<Segment>,
}

struct Reader<'a> {
    text: &'a [u8],
    pos: usize,
    /// The pattern of each `match`/`search` call, in the order read: `None` when it is not a
    /// string literal.
    patterns: Vec<Option<String>>,
}

/// The value of a string literal's text (between its quotes), or `None` if it is malformed.
fn decode_literal(raw: &str) -> Option<String> {
    // RFC 9535 literals escape like JSON strings, plus `\'` in single quotes.
    let mut json = String::from("\"");
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next()? {
                '\'' => json.push('\''),
                escaped => {
                    json.push('\\');
                    json.push(escaped);
                }
            },
            '"' => json.push_str("\\\""),
            c => json.push(c),
        }
    }
    json.push('"');
    serde_json::from_str(&json).ok()
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn skip_blank(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn skip_string(&mut self, quote: u8) {
        self.pos += 1;
        while let Some(b) = self.peek() {
            self.pos = (self.pos + if b == b'\\' { 2 } else { 1 }).min(self.text.len());
            if b == quote {
                return;
            }
        }
    }

    /// The decoded pattern of a `match(…)`/`search(…)` call whose `(` is next, if its second
    /// argument is a string literal. Reads ahead without moving.
    fn pattern_argument(&self) -> Option<String> {
        let mut r = Reader {
            text: self.text,
            pos: self.pos,
            patterns: Vec::new(),
        };
        if r.peek()? != b'(' {
            return None;
        }
        r.pos += 1;
        let mut depth = 0usize;
        loop {
            match r.peek()? {
                q @ (b'\'' | b'"') => r.skip_string(q),
                b'(' | b'[' => {
                    depth += 1;
                    r.pos += 1;
                }
                b')' | b']' => {
                    depth = depth.checked_sub(1)?;
                    r.pos += 1;
                }
                b',' if depth == 0 => {
                    r.pos += 1;
                    break;
                }
                _ => r.pos += 1,
            }
        }
        r.skip_blank();
        let quote = r.peek().filter(|q| matches!(q, b'\'' | b'"'))?;
        let start = r.pos;
        r.skip_string(quote);
        let raw = std::str::from_utf8(r.text.get(start + 1..r.pos.checked_sub(1)?)?).ok()?;
        r.skip_blank();
        (r.peek()? == b')').then_some(())?;
        decode_literal(raw)
    }

    fn skip_word(&mut self) -> &'a [u8] {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80) {
            self.pos += 1;
        }
        &self.text[start..self.pos]
    }

    /// A query starting at `$` or `@`.
    fn query(&mut self, depth: usize) -> Option<QueryShape> {
        // Each nesting level of the text (checked before) is at most two levels here.
        if depth > 2 * MAX_QUERY_NESTING + 2 {
            return None;
        }
        self.pos += 1;
        let mut segments = Vec::new();
        loop {
            let before = self.pos;
            self.skip_blank();
            let descendant = self.text.get(self.pos..).is_some_and(|t| t.starts_with(b".."));
            let selectors = match self.peek() {
                Some(b'.') if descendant => {
                    self.pos += 2;
                    self.dotted_or_bracketed(depth)?
                }
                Some(b'.') => {
                    self.pos += 1;
                    self.dotted_or_bracketed(depth)?
                }
                Some(b'[') => self.bracketed(depth)?,
                _ => {
                    self.pos = before;
                    return Some(QueryShape { segments });
                }
            };
            segments.push(Segment { descendant, selectors });
        }
    }

    fn dotted_or_bracketed(&mut self, depth: usize) -> Option<Vec<Selector>> {
        match self.peek() {
            Some(b'*') => {
                self.pos += 1;
                Some(vec![Selector::Many])
            }
            Some(b'[') => self.bracketed(depth),
            _ => {
                self.skip_word();
                Some(vec![Selector::One])
            }
        }
    }

    /// `[selector, …]`, starting at `[`.
    fn bracketed(&mut self, depth: usize) -> Option<Vec<Selector>> {
        self.pos += 1;
        let mut selectors = Vec::new();
        loop {
            self.skip_blank();
            let selector = match self.peek()? {
                q @ (b'\'' | b'"') => {
                    self.skip_string(q);
                    Selector::One
                }
                b'*' => {
                    self.pos += 1;
                    Selector::Many
                }
                b'?' => {
                    self.pos += 1;
                    Selector::Filter(self.filter(depth + 1)?)
                }
                _ => {
                    let start = self.pos;
                    while self.peek().is_some_and(|b| b != b',' && b != b']') {
                        self.pos += 1;
                    }
                    if self.text[start..self.pos].contains(&b':') {
                        Selector::Many
                    } else {
                        Selector::One
                    }
                }
            };
            selectors.push(selector);
            self.skip_blank();
            match self.peek()? {
                b',' => self.pos += 1,
                b']' => {
                    self.pos += 1;
                    return Some(selectors);
                }
                _ => return None,
            }
        }
    }

    /// A filter's logical expression, up to the `,` or `]` that ends the selector.
    fn filter(&mut self, depth: usize) -> Option<FilterShape> {
        let mut shape = FilterShape::default();
        let mut parens = 0usize;
        // Whether the last operand was a literal, and whether a `==`/`!=` waits for its right side.
        let (mut last_literal, mut open_comparison) = (false, None::<bool>);
        loop {
            self.skip_blank();
            let b = self.peek()?;
            let mut operand = None;
            match b {
                b',' | b']' if parens == 0 => return Some(shape),
                b'(' => {
                    parens += 1;
                    self.pos += 1;
                }
                b')' => {
                    parens = parens.checked_sub(1)?;
                    self.pos += 1;
                    operand = Some(false);
                }
                b'@' | b'$' => {
                    shape.queries.push(self.query(depth + 1)?);
                    operand = Some(false);
                }
                b'\'' | b'"' => {
                    self.skip_string(b);
                    operand = Some(true);
                }
                b'=' | b'!' if self.text.get(self.pos + 1) == Some(&b'=') => {
                    self.pos += 2;
                    open_comparison = Some(last_literal);
                }
                _ if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b >= 0x80 => {
                    self.pos += usize::from(b == b'-');
                    let word = self.skip_word();
                    if word == b"match" || word == b"search" {
                        shape.regex_calls += 1;
                        self.skip_blank();
                        let pattern = self.pattern_argument();
                        self.patterns.push(pattern);
                    }
                    let literal = word.first().is_some_and(u8::is_ascii_digit) || matches!(word, b"true" | b"false" | b"null");
                    self.pos += usize::from(word.is_empty() && b != b'-');
                    operand = Some(literal);
                }
                _ => self.pos += 1,
            }
            if let Some(literal) = operand {
                if let Some(left_literal) = open_comparison.take() {
                    shape.deep_comparisons += u64::from(!left_literal && !literal);
                }
                last_literal = literal;
            }
        }
    }
}

/// What a query costs, read before it runs.
pub(super) struct Analysis {
    /// The most nodes the query could visit (and select).
    pub(super) work: u64,
    /// The pattern of each `match`/`search` call: `None` when it is not a string literal.
    pub(super) patterns: Vec<Option<String>>,
}

/// Reads the shape of a query that `serde_json_path` has accepted and bounds its work on a
/// document of `doc`'s shape; `None` if the shape cannot be read (which a valid query never is).
pub(super) fn analyze(query: &str, doc: &DocumentShape) -> Option<Analysis> {
    let mut reader = Reader {
        text: query.as_bytes(),
        pos: 0,
        patterns: Vec::new(),
    };
    reader.skip_blank();
    let shape = reader.query(0)?;
    reader.skip_blank();
    (reader.pos == reader.text.len()).then_some(Analysis {
        work: query_cost(&shape, doc, 1, true).0,
        patterns: reader.patterns,
    })
}

/// Work and output size of `query` run from `input` nodes (`distinct`: no node twice).
fn query_cost(query: &QueryShape, doc: &DocumentShape, mut input: u64, mut distinct: bool) -> (u64, u64) {
    let (n, fanout) = (doc.nodes, doc.fanout);
    let mut work = 0u64;
    for segment in &query.segments {
        let single = segment.selectors.len() == 1;
        let visited = if segment.descendant { input.saturating_mul(n) } else { input };
        let mut out = 0u64;
        for selector in &segment.selectors {
            let candidates = match (selector, segment.descendant) {
                (Selector::One, false) => input,
                (_, true) => input.saturating_mul(n),
                (_, false) if distinct => input.saturating_mul(fanout).min(n),
                (_, false) => input.saturating_mul(fanout),
            };
            if let Selector::Filter(filter) = selector {
                work = work.saturating_add(candidates.saturating_mul(filter_cost(filter, doc)));
            }
            out = out.saturating_add(candidates);
        }
        distinct = distinct && single && (!segment.descendant || input <= 1);
        if distinct {
            out = out.min(n);
        }
        work = work.saturating_add(visited).saturating_add(out);
        input = out;
    }
    (work, input)
}

/// The work of testing one candidate against a filter.
fn filter_cost(filter: &FilterShape, doc: &DocumentShape) -> u64 {
    let queries = filter.queries.iter().fold(1u64, |acc, q| {
        let (work, out) = query_cost(q, doc, 1, true);
        acc.saturating_add(work).saturating_add(out)
    });
    let regex = doc.longest_string.max(super::REGEX_CALL_WORK);
    queries
        .saturating_add(filter.deep_comparisons.saturating_mul(doc.nodes))
        .saturating_add(filter.regex_calls.saturating_mul(regex))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate(query: &str, doc: &DocumentShape) -> Option<u64> {
        analyze(query, doc).map(|a| a.work)
    }

    #[test]
    fn regex_patterns_are_read_and_decoded() {
        let d = doc(10, 2);
        let patterns = |q: &str| analyze(q, &d).unwrap().patterns;
        assert_eq!(patterns("$[?match(@.a, 'x.*')]"), vec![Some("x.*".to_owned())]);
        assert_eq!(
            patterns(r#"$[?search(@[?match(@, "a\\d")], 'it\'s') && match(@.b, @.c)]"#),
            vec![Some("it's".to_owned()), Some("a\\d".to_owned()), None]
        );
        assert_eq!(patterns("$[?match(value(@..x), '[a-z]\\u0041')]"), vec![Some("[a-z]A".to_owned())]);
        assert_eq!(patterns("$.a"), Vec::<Option<String>>::new());
    }

    fn doc(nodes: u64, fanout: u64) -> DocumentShape {
        DocumentShape {
            nodes,
            fanout,
            longest_string: 10,
        }
    }

    #[test]
    fn plain_paths_cost_their_length_and_descendants_the_document() {
        let d = doc(1000, 10);
        assert_eq!(estimate("$.a.b", &d), Some(4));
        assert_eq!(estimate("$['a'][0]", &d), Some(4));
        // One pass over the document, then at most every node selected.
        assert_eq!(estimate("$..price", &d), Some(2000));
        assert_eq!(estimate("$..*", &d), Some(2000));
        assert!(estimate("$..*..*", &d).unwrap() > 1_000_000);
        assert!(estimate("$..*..*..*", &d).unwrap() > 1_000_000_000);
    }

    #[test]
    fn repeated_selectors_multiply_and_filters_cost_per_candidate() {
        let d = doc(1000, 10);
        let dup = "$".to_owned() + &"[0,0,0,0,0,0,0,0,0,0]".repeat(12);
        assert!(estimate(&dup, &d).unwrap() >= 10u64.pow(12));
        let cheap = estimate("$.items[?@.price < 10 && @.tag == 'x'].name", &d).unwrap();
        assert!(cheap < 200, "{cheap}");
        let nested = estimate("$..[?@..[?@..*]]", &d).unwrap();
        assert!(nested >= 1_000_000_000, "{nested}");
        // Comparing two queries may compare whole subtrees; comparing with a literal does not.
        let deep = estimate("$.items[?@.a == $.b]", &d).unwrap();
        let literal = estimate("$.items[?@.a == 'b']", &d).unwrap();
        assert!(deep >= 10 * 1000 && literal < 100, "{deep} {literal}");
        let regex = estimate("$.items[?match(@.a, 'x.*')]", &d).unwrap();
        assert!(regex >= 10 * super::super::REGEX_CALL_WORK, "{regex}");
    }

    #[test]
    fn every_valid_form_is_read() {
        let d = doc(100, 5);
        for q in [
            "$",
            "$.store.book[*].title",
            "$..book[-1:]",
            "$.a[0:4:2, 'x', \"y\", *]",
            "$[?length(@.tags) == 1 && @.tags[0] == 'new'].title",
            "$[?!(@.a) || (@.b > -1.5e3)]",
            "$[?search(@.name, '[a-z]+') && count(@.*) >= 2 && value(@..x) != null]",
            "$ .a [ 0 ] ..b",
            "$['it\\'s', 'a]b'][?@['c,d'] == 'e]']",
        ] {
            assert!(estimate(q, &d).is_some(), "{q}");
        }
    }
}
