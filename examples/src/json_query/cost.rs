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
            self.pos += if b == b'\\' { 2 } else { 1 };
            if b == quote {
                return;
            }
        }
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
            let descendant = self.text[self.pos..].starts_with(b"..");
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

/// Reads the shape of a query that `serde_json_path` has accepted; `None` if it cannot be read
/// (which a valid query never is).
fn shape(query: &str) -> Option<QueryShape> {
    let mut reader = Reader {
        text: query.as_bytes(),
        pos: 0,
    };
    reader.skip_blank();
    let shape = reader.query(0)?;
    reader.skip_blank();
    (reader.pos == reader.text.len()).then_some(shape)
}

/// The most nodes `query` could visit (and select) on a document of `doc`'s shape, or `None`
/// if its shape cannot be read.
pub(super) fn estimate(query: &str, doc: &DocumentShape) -> Option<u64> {
    shape(query).map(|q| query_cost(&q, doc, 1, true).0)
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
