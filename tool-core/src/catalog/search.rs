//! Tool search: an in-memory BM25 index over what a model reads of each tool.
//!
//! Owns [`SearchIndex`] (built once per catalog, updated tool by tool as a registry changes),
//! [`SearchHit`] and the tokeniser. Each tool is one document of weighted fields: its id and
//! title, namespace and tags, description, and the names and descriptions of its parameters
//! (BM25F: a term's frequency is the sum of its fields' weights).
//!
//! Why our own BM25 over [`unicode_segmentation`] rather than a search crate: the documents
//! are a few hundred bytes and live in memory, so the ranking is some 200 lines, and what
//! matters for tool search is the tokenising, which the crates do not do for tool names:
//! - `tantivy` is a full search engine (on-disk segments, a query language, ~100 crates in its
//!   tree and tens of seconds of build time) for corpora millions of times larger;
//! - the `bm25` crate (default features pull `cached`, `rust-stemmers`, `stop-words`,
//!   `deunicode`) hashes each token into a `u32` (collisions merge words), has no field
//!   weights, and its default tokeniser transliterates non-Latin scripts to ASCII
//!   (`deunicode`), which merges unrelated words of those scripts;
//! - `unicode-segmentation` (no dependencies, maintained by unicode-rs) splits words by UAX #29
//!   in every script; on top we split identifiers (`create_issue`, `createIssue`,
//!   `github.issues`) into their words, lowercase, and fold English plurals.
//!
//! A query's words are expanded before ranking (`expand`: synonyms, abbreviations, light
//! stemming). Must not know providers' formats or the loaded set (the catalog's `deferred`
//! module's).

use std::collections::HashMap;

use serde_json::Value;
use unicode_segmentation::UnicodeSegmentation;

use super::expand;
use crate::spec::ToolSpec;

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
/// BM25's length normalisation.
const B: f32 = 0.75;
/// How deep parameter names and descriptions are read in an input schema.
const MAX_SCHEMA_DEPTH: usize = 4;
/// The longest query read, in characters (a model may send anything).
const MAX_QUERY_CHARS: usize = 1024;

/// The weight of each field of a tool in its score.
mod weight {
    pub const NAME: f32 = 3.0;
    pub const TITLE: f32 = 2.0;
    pub const NAMESPACE: f32 = 1.5;
    pub const TAG: f32 = 1.5;
    pub const DESCRIPTION: f32 = 1.0;
    pub const PARAM_NAME: f32 = 1.0;
    pub const PARAM_DESCRIPTION: f32 = 0.5;
}

/// English words too common to tell tools apart.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it", "its", "of", "on", "or", "the", "this",
    "that", "to", "with",
];

/// One tool found, with its score (higher is better; only comparable within one search).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SearchHit {
    /// The tool's id.
    pub id: String,
    /// Its BM25 score for the query.
    pub score: f32,
}

/// One indexed tool.
#[derive(Debug)]
struct Doc {
    id: String,
    /// Its weighted length.
    len: f32,
    /// Its distinct terms (to take it out of the postings again).
    terms: Vec<Box<str>>,
    /// A hash of its searched text, to tell a replaced tool.
    fingerprint: u64,
}

/// An inverted index of tools, ranked with BM25F.
///
/// ```
/// use tool_core::catalog::SearchIndex;
/// use tool_core::spec::ToolSpec;
/// use serde_json::json;
///
/// let mut index = SearchIndex::default();
/// index.insert(&ToolSpec::new("github.create_issue", "Open an issue in a repository", json!({"type": "object"})));
/// index.insert(&ToolSpec::new("weather", "Current weather for a city", json!({"type": "object"})));
/// let hits = index.search("create a GitHub issue", 5);
/// assert_eq!(hits[0].id, "github.create_issue");
/// assert!(index.search("天気 🌦️ \u{200d}", 5).is_empty());
/// ```
#[derive(Debug, Default)]
pub struct SearchIndex {
    /// Slots of documents; a removed tool leaves `None` (reused by the next insertion).
    docs: Vec<Option<Doc>>,
    free: Vec<u32>,
    by_id: HashMap<String, u32>,
    /// Each term's documents and weighted frequencies.
    postings: HashMap<Box<str>, Vec<(u32, f32)>>,
    total_len: f64,
    live: usize,
}

impl SearchIndex {
    /// An index of these tools.
    pub fn new<'a>(specs: impl IntoIterator<Item = &'a ToolSpec>) -> SearchIndex {
        let mut index = SearchIndex::default();
        for spec in specs {
            index.insert(spec);
        }
        index
    }

    /// How many tools are indexed.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether no tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Whether a tool with this id is indexed.
    pub fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// The ids of the indexed tools, in no order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.by_id.keys().map(String::as_str)
    }

    /// Whether this very spec is indexed (same id, same searched text).
    pub(crate) fn indexed_same(&self, spec: &ToolSpec) -> bool {
        let Some(doc) = self.by_id.get(&spec.id).and_then(|s| self.docs.get(*s as usize)?.as_ref()) else {
            return false;
        };
        doc.fingerprint == fingerprint(spec)
    }

    /// Indexes a tool (replacing one of the same id).
    pub fn insert(&mut self, spec: &ToolSpec) {
        self.remove(&spec.id);
        let mut tf: HashMap<Box<str>, f32> = HashMap::new();
        let mut len = 0.0;
        for (text, w) in fields(spec) {
            for_each_term(&text, |term| {
                *tf.entry(term.into()).or_default() += w;
                len += w;
            });
        }
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.docs.push(None);
                u32::try_from(self.docs.len() - 1).unwrap_or(u32::MAX)
            }
        };
        let mut terms = Vec::with_capacity(tf.len());
        for (term, f) in tf {
            self.postings.entry(term.clone()).or_default().push((slot, f));
            terms.push(term);
        }
        self.total_len += f64::from(len);
        self.live += 1;
        self.by_id.insert(spec.id.clone(), slot);
        if let Some(d) = self.docs.get_mut(slot as usize) {
            *d = Some(Doc {
                id: spec.id.clone(),
                len,
                terms,
                fingerprint: fingerprint(spec),
            });
        }
    }

    /// Takes a tool out of the index; whether it was in.
    pub fn remove(&mut self, id: &str) -> bool {
        let Some(slot) = self.by_id.remove(id) else {
            return false;
        };
        let Some(doc) = self.docs.get_mut(slot as usize).and_then(Option::take) else {
            return false;
        };
        for term in &doc.terms {
            if let Some(list) = self.postings.get_mut(term) {
                list.retain(|(d, _)| *d != slot);
                if list.is_empty() {
                    self.postings.remove(term);
                }
            }
        }
        self.total_len -= f64::from(doc.len);
        self.live -= 1;
        self.free.push(slot);
        true
    }

    /// The `k` tools that best match `query`, best first (ties by id); tools matching none of
    /// its words are left out. Any text is a query: words of every script are matched, and
    /// nothing in it can fail the search.
    pub fn search(&self, query: &str, k: usize) -> Vec<SearchHit> {
        self.search_where(query, k, |_| true)
    }

    /// [`SearchIndex::search`] among the tools `keep` accepts (by id).
    pub fn search_where(&self, query: &str, k: usize, keep: impl Fn(&str) -> bool) -> Vec<SearchHit> {
        if k == 0 || self.live == 0 {
            return Vec::new();
        }
        let query: String = query.chars().take(MAX_QUERY_CHARS).collect();
        let terms = self.query_terms(&query);
        let n = self.live as f32;
        let avg = (self.total_len / self.live as f64).max(f64::MIN_POSITIVE) as f32;
        // A dense score per document slot, and the slots touched: cheaper than a map when
        // a common word matches thousands of tools.
        let mut scores = vec![0.0_f32; self.docs.len()];
        let mut touched: Vec<u32> = Vec::new();
        for (term, weight) in &terms {
            let Some(list) = self.postings.get(term.as_str()) else {
                continue;
            };
            let df = list.len() as f32;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            for &(slot, tf) in list {
                let (Some(score), Some(Some(doc))) = (scores.get_mut(slot as usize), self.docs.get(slot as usize)) else {
                    continue;
                };
                if *score == 0.0 {
                    touched.push(slot);
                }
                let norm = K1 * (1.0 - B + B * doc.len / avg);
                *score += weight * idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        let id = |slot: u32| self.docs.get(slot as usize).and_then(Option::as_ref).map_or("", |d| d.id.as_str());
        let mut ranked: Vec<(u32, f32)> = touched
            .into_iter()
            .filter(|slot| keep(id(*slot)))
            .map(|slot| (slot, scores[slot as usize]))
            .collect();
        // Ids are cloned only for the `k` kept.
        let order = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then_with(|| id(a.0).cmp(id(b.0)));
        if ranked.len() > k {
            ranked.select_nth_unstable_by(k - 1, order);
            ranked.truncate(k);
        }
        ranked.sort_by(order);
        ranked
            .into_iter()
            .map(|(slot, score)| SearchHit {
                id: id(slot).to_owned(),
                score,
            })
            .collect()
    }
}

impl SearchIndex {
    /// A query's terms with their weights: its own words (1; a word the index does not hold
    /// replaced by its stem that it does), then what they bring (see `expand`: synonyms,
    /// abbreviations, kinds; arithmetic signs bring mathematics), each once.
    fn query_terms(&self, query: &str) -> Vec<(String, f32)> {
        let mut own: Vec<String> = Vec::new();
        for_each_term(query, |t| {
            let t = match self.postings.contains_key(t) {
                true => t.to_owned(),
                false => expand::stem(t, |s| self.postings.contains_key(s)).unwrap_or_else(|| t.to_owned()),
            };
            if !own.contains(&t) {
                own.push(t);
            }
        });
        let mut terms: Vec<(String, f32)> = own.iter().map(|t| (t.clone(), 1.0)).collect();
        let arithmetic = expand::is_arithmetic(query).then(expand::arithmetic);
        let brought = own.iter().flat_map(|t| expand::synonyms(t)).chain(arithmetic.into_iter().flatten());
        for term in brought {
            if !terms.iter().any(|(t, _)| t == term) {
                terms.push((term.clone(), expand::SYNONYM_WEIGHT));
            }
        }
        terms
    }
}

/// A hash of the texts a search reads of a tool.
fn fingerprint(spec: &ToolSpec) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for (text, w) in fields(spec) {
        text.hash(&mut h);
        w.to_bits().hash(&mut h);
    }
    h.finish()
}

/// The texts of a tool a search reads, each with its weight.
fn fields(spec: &ToolSpec) -> Vec<(String, f32)> {
    let mut out = vec![(spec.id.clone(), weight::NAME), (spec.description.clone(), weight::DESCRIPTION)];
    let titles = [spec.title.as_ref(), spec.presentation.mcp.title.as_ref()];
    out.extend(titles.into_iter().flatten().map(|t| (t.clone(), weight::TITLE)));
    if let Some(ns) = &spec.presentation.namespace {
        out.push((ns.clone(), weight::NAMESPACE));
    }
    out.extend(spec.presentation.tags.iter().map(|t| (t.clone(), weight::TAG)));
    parameters(&spec.schemas.input, 0, &mut out);
    out
}

/// The names and descriptions of a schema's properties, nested ones too (to a depth).
fn parameters(schema: &Value, depth: usize, out: &mut Vec<(String, f32)>) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    if let Some(Value::Object(props)) = schema.get("properties") {
        for (name, sub) in props {
            out.push((name.clone(), weight::PARAM_NAME));
            if let Some(d) = sub.get("description").and_then(Value::as_str) {
                out.push((d.to_owned(), weight::PARAM_DESCRIPTION));
            }
            parameters(sub, depth + 1, out);
        }
    }
    if let Some(items) = schema.get("items") {
        parameters(items, depth + 1, out);
    }
}

/// Calls `f` with each search term of `text`: its Unicode words (UAX #29), identifiers split
/// at `_`, `.`, `:` and lower-to-upper case changes, lowercased, English possessives and plurals
/// folded, stop words left out.
pub(crate) fn for_each_term(text: &str, mut f: impl FnMut(&str)) {
    let mut buf = String::new();
    for word in text.unicode_words() {
        for part in identifier_parts(word) {
            buf.clear();
            let part = part.strip_suffix("'s").or_else(|| part.strip_suffix("\u{2019}s")).unwrap_or(part);
            buf.extend(part.chars().flat_map(char::to_lowercase));
            if buf.is_empty() || STOP_WORDS.contains(&buf.as_str()) {
                continue;
            }
            f(fold_plural(&buf));
        }
    }
}

/// `create_issue` → `create`, `issue`; `createIssue` → `create`, `Issue`; `v2` stays.
fn identifier_parts(word: &str) -> impl Iterator<Item = &str> {
    word.split(['_', '.', ':']).flat_map(|piece| {
        let mut starts = vec![0];
        let mut prev: Option<char> = None;
        for (i, c) in piece.char_indices() {
            if prev.is_some_and(char::is_lowercase) && c.is_uppercase() {
                starts.push(i);
            }
            prev = Some(c);
        }
        let ends: Vec<usize> = starts.iter().skip(1).copied().chain([piece.len()]).collect();
        starts
            .into_iter()
            .zip(ends)
            .map(move |(s, e)| &piece[s..e])
            .filter(|p| !p.is_empty())
    })
}

/// `issues` → `issue`, `boxes` → `box`, `repositories` and `repository` → `repositor`; other
/// words as they are. Only ASCII words are folded (the rule is English).
fn fold_plural(word: &str) -> &str {
    if word.len() < 4 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return word;
    }
    let cut = |n: usize| &word[..word.len() - n];
    if word.ends_with("ies") {
        return cut(3);
    }
    if word.ends_with('y') && !matches!(word.as_bytes()[word.len() - 2], b'a' | b'e' | b'o' | b'u') {
        return cut(1);
    }
    if ["sses", "xes", "ches", "shes"].iter().any(|s| word.ends_with(s)) {
        return cut(2);
    }
    if word.ends_with('s') && !["ss", "us", "is"].iter().any(|s| word.ends_with(s)) {
        return cut(1);
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_term(text, |t| out.push(t.to_owned()));
        out
    }

    #[test]
    fn identifiers_split_into_words() {
        assert_eq!(terms("github.create_issue"), ["github", "create", "issue"]);
        assert_eq!(terms("listOpenOrders v2"), ["list", "open", "order", "v2"]);
        assert_eq!(terms("The repositories of a user"), ["repositor", "user"]);
        assert_eq!(terms("Repository queries"), ["repositor", "quer"]);
        assert_eq!(terms("today's boxes, a customer\u{2019}s"), ["today", "box", "customer"]);
    }

    #[test]
    fn other_scripts_are_words_too() {
        assert_eq!(terms("Wetter in München"), ["wetter", "münchen"]);
        assert!(!terms("東京の天気").is_empty());
        assert_eq!(terms("погода"), ["погода"]);
    }
}
