//! `json-query`: runs a JSONPath query (RFC 9535) over a JSON document with
//! `serde_json_path`.
//!
//! Shows `provider_options`: the tool's description is long and stable, so it asks Anthropic to
//! cache it.

use serde_json_path::JsonPath;
use tool_core::prelude::*;

mod cost;
mod locate;

/// Default number of matches returned.
pub const DEFAULT_MAX_RESULTS: u32 = 100;
/// Largest accepted `max_results`.
pub const MAX_RESULTS: u32 = 1000;
/// Longest accepted query, in characters.
pub const MAX_QUERY_CHARS: usize = 1_000;
/// Deepest accepted nesting of brackets and parentheses in a query (`$[?(@[?(…)])]`). The
/// parser's time doubles with each nested filter, so this stays small.
pub const MAX_QUERY_NESTING: usize = 10;
/// Deepest accepted nesting of arrays and objects in the document.
pub const MAX_DOCUMENT_DEPTH: usize = 64;
/// Most nodes (values at any depth) accepted in the document.
pub const MAX_DOCUMENT_NODES: usize = 1_000_000;
/// Most node visits a query may need, estimated from its shape and the document's size before
/// it runs.
pub const MAX_QUERY_WORK: u64 = 2_000_000;
/// What one `match`/`search` call counts in [`MAX_QUERY_WORK`] (each call compiles its
/// pattern; a call on a document whose longest string is longer counts that length).
pub const REGEX_CALL_WORK: u64 = 2_000;
/// Largest compiled form of a `match`/`search` pattern, in bytes: `[a-z]{100}` fits, the
/// Unicode class `\w` alone does not (`[A-Za-z0-9_]` does). Each call compiles its pattern
/// again, so this bounds the time of a call.
pub const MAX_PATTERN_BYTES: usize = 1 << 14;
/// Most bytes of JSON in the returned matches' values together.
pub const MAX_OUTPUT_BYTES: usize = 1 << 20;

/// One node the query selected.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct JsonMatch {
    /// Where the node is, as a normalized JSONPath (`$['store']['book'][0]`).
    pub path: String,
    /// The same location as a JSON Pointer (`/store/book/0`).
    pub pointer: String,
    /// The node's value.
    pub value: Value,
}

/// The result of a query.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct JsonQueryResult {
    /// The query as given.
    pub query: String,
    /// How many nodes the query selected in all.
    pub count: usize,
    /// The selected nodes in document order, at most `max_results` of them.
    pub matches: Vec<JsonMatch>,
    /// Whether `matches` was cut short of `count`.
    pub truncated: bool,
}

/// The size of a document, as the cost estimate needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DocumentShape {
    /// Values at any depth, the document itself included.
    nodes: u64,
    /// Most children of one array or object.
    fanout: u64,
    /// Longest string (or object key), in bytes.
    longest_string: u64,
}

/// Measures `document` without recursion, refusing one deeper than [`MAX_DOCUMENT_DEPTH`] or
/// larger than [`MAX_DOCUMENT_NODES`].
fn measure(document: &Value) -> Result<DocumentShape, ToolError> {
    let mut shape = DocumentShape {
        nodes: 0,
        fanout: 0,
        longest_string: 0,
    };
    let mut stack = vec![(document, 0usize)];
    while let Some((node, depth)) = stack.pop() {
        shape.nodes += 1;
        if depth > MAX_DOCUMENT_DEPTH {
            return Err(ToolError::new(format!(
                "The document nests arrays and objects deeper than {MAX_DOCUMENT_DEPTH} levels (the limit)."
            )));
        }
        if shape.nodes > MAX_DOCUMENT_NODES as u64 {
            return Err(ToolError::new(format!(
                "The document has more than {MAX_DOCUMENT_NODES} values (the limit); send the part to query."
            )));
        }
        match node {
            Value::Array(items) => {
                shape.fanout = shape.fanout.max(items.len() as u64);
                stack.extend(items.iter().map(|v| (v, depth + 1)));
            }
            Value::Object(map) => {
                shape.fanout = shape.fanout.max(map.len() as u64);
                let longest_key = map.keys().map(String::len).max().unwrap_or(0) as u64;
                shape.longest_string = shape.longest_string.max(longest_key);
                stack.extend(map.values().map(|v| (v, depth + 1)));
            }
            Value::String(s) => shape.longest_string = shape.longest_string.max(s.len() as u64),
            _ => {}
        }
    }
    Ok(shape)
}

/// Refuses a query nested deeper than [`MAX_QUERY_NESTING`] or longer than
/// [`MAX_QUERY_CHARS`], before any parser sees it (string literals are skipped).
fn screen(query: &str) -> Result<(), ToolError> {
    let (mut depth, mut quote, mut escaped) = (0usize, None::<char>, false);
    for c in query.chars() {
        match (quote, c) {
            (Some(_), _) if escaped => escaped = false,
            (Some(_), '\\') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '[' | '(') => depth += 1,
            (None, ']' | ')') => depth = depth.saturating_sub(1),
            (None, _) => {}
        }
        if depth > MAX_QUERY_NESTING {
            return Err(ToolError::new(format!(
                "The query nests brackets and parentheses deeper than {MAX_QUERY_NESTING} levels (the limit)."
            )));
        }
    }
    let chars = query.chars().count();
    if chars > MAX_QUERY_CHARS {
        return Err(ToolError::new(format!(
            "The query is {chars} characters long; the limit is {MAX_QUERY_CHARS}."
        )));
    }
    Ok(())
}

/// Adds the JSON size of `value` to `used`, failing once the total passes [`MAX_OUTPUT_BYTES`].
fn charge_output(value: &Value, used: &mut usize) -> Result<(), ToolError> {
    struct Meter<'a>(&'a mut usize);
    impl std::io::Write for Meter<'_> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            *self.0 += buf.len();
            if *self.0 > MAX_OUTPUT_BYTES {
                return Err(std::io::Error::other("over the output limit"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer(Meter(used), value).map_err(|_| {
        ToolError::new(format!(
            "The selected values add up to more than {MAX_OUTPUT_BYTES} bytes of JSON (the limit). Select smaller parts (e.g. `$.items[*].id` rather than `$.items[*]`) or lower max_results."
        ))
    })
}

/// Refuses `match`/`search` patterns that are not string literals or whose compiled form is
/// over [`MAX_PATTERN_BYTES`]: the functions compile their pattern on every call.
fn check_patterns(patterns: &[Option<String>]) -> Result<(), ToolError> {
    for pattern in patterns {
        let Some(pattern) = pattern else {
            return Err(ToolError::new(
                "The pattern (second argument) of `match` and `search` must be a string literal such as 'ab.*', so its cost is known before the query runs.",
            ));
        };
        // The form `match` compiles; `search`'s is no larger.
        regex::RegexBuilder::new(&format!("(?R)^({pattern})$"))
            .size_limit(MAX_PATTERN_BYTES)
            .build()
            .map_err(|e| match e {
                regex::Error::CompiledTooBig(_) => ToolError::new(format!(
                    "The pattern '{pattern}' is too complex: compiled, it is larger than {MAX_PATTERN_BYTES} bytes (the limit). Use a simpler one (e.g. `[a-z]` rather than `\\w`, fewer or smaller repetitions)."
                )),
                other => ToolError::new(format!("The pattern '{pattern}' is not a valid regular expression: {other}")),
            })?;
    }
    Ok(())
}

/// Runs `query` over `document`, returning at most `max_results` matches.
pub fn run_query(document: &Value, query: &str, max_results: usize) -> Result<JsonQueryResult, ToolError> {
    screen(query)?;
    let path = JsonPath::parse(query).map_err(|e| {
        ToolError::new(format!(
            "`{query}` is not a valid JSONPath query: {e}. Queries start with `$`, e.g. `$.store.book[*].title` or `$..price` or `$.items[?@.price < 10]`."
        ))
    })?;
    let shape = measure(document)?;
    let cost::Analysis { work, patterns } = cost::analyze(query, &shape)
        .ok_or_else(|| ToolError::new(format!("The cost of `{query}` cannot be estimated, so it is not run.")))?;
    check_patterns(&patterns)?;
    if work > MAX_QUERY_WORK {
        return Err(ToolError::new(format!(
            "`{query}` could need up to {work} node visits on this document ({} values), more than the limit of {MAX_QUERY_WORK}. Use fewer `..` (descendant) segments, wildcards and nested filters, or a more specific path.",
            shape.nodes
        )));
    }
    let nodes = path.query(document).all();
    let count = nodes.len();
    let shown = &nodes[..count.min(max_results)];
    let mut used = 0usize;
    for node in shown {
        charge_output(node, &mut used)?;
    }
    let matches = locate::locate(document, shown)
        .into_iter()
        .zip(shown)
        .map(|(at, node)| JsonMatch {
            path: at.path,
            pointer: at.pointer,
            value: (*node).clone(),
        })
        .collect::<Vec<_>>();
    Ok(JsonQueryResult {
        query: query.to_owned(),
        count,
        truncated: matches.len() < count,
        matches,
    })
}

/// Select values from a JSON document with a JSONPath query (RFC 9535)
///
/// Supports child (`$.a.b`, `$['a b']`), index and slice (`[0]`, `[-1]`, `[0:2]`), wildcard
/// (`[*]`), descendant (`$..price`) and filter (`[?@.price < 10 && @.tags[0] == 'new']`)
/// selectors, and the functions `length`, `count`, `match`, `search` and `value`. Returns each
/// selected node with its location.
///
/// Limits: a query of at most 1000 characters nesting brackets and parentheses at most 10
/// deep; a document of at most 1000000 values nested at most 64 deep; a query whose estimated
/// work on the document (node visits, counting each `match`/`search` call as at least 2000)
/// is at most 2000000; `match`/`search` patterns are string literals compiling to at most
/// 16384 bytes (write `[A-Za-z0-9_]` rather than `\w`); returned values totalling at most 1 MiB
/// of JSON. Exceeding one is an error naming it.
#[tool(
    id = "json-query",
    blocking,
    tags = ["data", "offline"],
    provider_options(anthropic = json!({"cache_control": {"type": "ephemeral"}})),
    mcp(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
)]
pub async fn json_query(
    /// The JSON document to query. A document sent as a JSON string is parsed first.
    document: Value,
    /// The JSONPath query, starting with `$`.
    query: String,
    /// The most matches to return (default 100, at most 1000).
    max_results: Option<u32>,
) -> Result<JsonQueryResult, ToolError> {
    let max_results = max_results.unwrap_or(DEFAULT_MAX_RESULTS);
    if max_results > MAX_RESULTS {
        return Err(ToolError::new(format!(
            "max_results is {max_results}; it can be at most {MAX_RESULTS}."
        )));
    }
    // Models often send the document as JSON text; querying the string itself is never meant.
    let document = match document {
        Value::String(text) => match serde_json::from_str::<Value>(&text) {
            Ok(parsed @ (Value::Object(_) | Value::Array(_))) => parsed,
            _ => Value::String(text),
        },
        other => other,
    };
    run_query(&document, &query, max_results as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> Value {
        json!({"store": {
            "book": [
                {"title": "Sayings of the Century", "price": 8.95, "tags": ["classic"]},
                {"title": "Sword of Honour", "price": 12.99, "tags": ["new"]},
                {"title": "Moby Dick", "price": 8.99, "isbn": "0-553-21311-3"}
            ],
            "bicycle": {"color": "red", "price": 399}
        }})
    }

    fn values(r: &JsonQueryResult) -> Vec<Value> {
        r.matches.iter().map(|m| m.value.clone()).collect()
    }

    #[test]
    fn children_wildcards_and_locations() {
        let r = run_query(&store(), "$.store.book[*].title", 100).unwrap();
        assert_eq!(r.count, 3);
        assert_eq!(
            values(&r),
            vec![json!("Sayings of the Century"), json!("Sword of Honour"), json!("Moby Dick")]
        );
        assert_eq!(r.matches[1].path, "$['store']['book'][1]['title']");
        assert_eq!(r.matches[1].pointer, "/store/book/1/title");
        assert!(!r.truncated);
    }

    #[test]
    fn descendants_filters_slices_and_functions() {
        let r = run_query(&store(), "$..price", 100).unwrap();
        assert_eq!(r.count, 4);
        let cheap = run_query(&store(), "$.store.book[?@.price < 10].title", 100).unwrap();
        assert_eq!(values(&cheap), vec![json!("Sayings of the Century"), json!("Moby Dick")]);
        let with_isbn = run_query(&store(), "$.store.book[?@.isbn].title", 100).unwrap();
        assert_eq!(values(&with_isbn), vec![json!("Moby Dick")]);
        let last = run_query(&store(), "$.store.book[-1:].title", 100).unwrap();
        assert_eq!(values(&last), vec![json!("Moby Dick")]);
        let tagged = run_query(&store(), "$.store.book[?length(@.tags) == 1 && @.tags[0] == 'new'].title", 100).unwrap();
        assert_eq!(values(&tagged), vec![json!("Sword of Honour")]);
        let none = run_query(&store(), "$.store.car", 100).unwrap();
        assert_eq!((none.count, none.matches.len()), (0, 0));
    }

    #[test]
    fn results_are_capped_and_bad_queries_explained() {
        let r = run_query(&store(), "$..*", 2).unwrap();
        assert_eq!(r.matches.len(), 2);
        assert!(r.count > 2);
        assert!(r.truncated);
        let e = run_query(&store(), "store.book", 10).unwrap_err();
        assert!(e.message().starts_with("`store.book` is not a valid JSONPath query"), "{e}");
    }

    #[test]
    fn locations_match_serde_json_path() {
        let doc = json!({"a b": [{"x/y": 1, "t~": [true, null]}], "store": store()});
        for query in ["$..*", "$..price", "$['a b'][0]['x/y']", "$..[?@ == null]", "$[*][*][*]"] {
            let r = run_query(&doc, query, 1000).unwrap();
            let expected = JsonPath::parse(query).unwrap().query_located(&doc);
            let expected: Vec<(String, String)> = expected
                .iter()
                .map(|n| (n.location().to_string(), n.location().to_json_pointer()))
                .collect();
            let got: Vec<(String, String)> = r.matches.iter().map(|m| (m.path.clone(), m.pointer.clone())).collect();
            assert_eq!(got, expected, "{query}");
            assert_eq!(r.count, expected.len());
        }
    }

    fn message(doc: &Value, query: &str, max: usize) -> String {
        run_query(doc, query, max).unwrap_err().message().to_owned()
    }

    #[test]
    fn query_nesting_and_length_are_refused_before_parsing() {
        let doc = json!({"a": [1]});
        // The deepest allowed nesting parses and runs on a worker-sized stack.
        let parens = format!("$[?{}@{}]", "(".repeat(MAX_QUERY_NESTING - 1), ")".repeat(MAX_QUERY_NESTING - 1));
        let filters = format!("${}{}", "[?@".repeat(MAX_QUERY_NESTING), "]".repeat(MAX_QUERY_NESTING));
        let ok = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                (
                    run_query(&json!({"a": [1]}), &parens, 10).is_ok(),
                    run_query(&json!([[1]]), &filters, 10).is_ok(),
                )
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(ok, (true, true));
        let deeper = format!("$[?{}@{}]", "(".repeat(MAX_QUERY_NESTING), ")".repeat(MAX_QUERY_NESTING));
        assert!(message(&doc, &deeper, 10).contains("deeper than 10 levels (the limit)"));
        // Brackets inside string literals do not count.
        let quoted = format!("$['{}']", "[".repeat(100));
        assert_eq!(run_query(&doc, &quoted, 10).unwrap().count, 0);
        let long = format!("$.a{}", "[0]".repeat(400));
        assert!(message(&doc, &long, 10).contains("the limit is 1000"));
    }

    #[test]
    fn documents_work_and_output_are_bounded() {
        let deep = (0..MAX_DOCUMENT_DEPTH).fold(json!(1), |v, _| json!([v]));
        assert_eq!(run_query(&deep, "$", 1).unwrap().count, 1);
        assert!(message(&json!([deep]), "$", 1).contains("deeper than 64 levels"));
        let wide = Value::Array(vec![json!(0); MAX_DOCUMENT_NODES]);
        assert!(message(&wide, "$[0]", 1).contains("more than 1000000 values (the limit)"));
        // A large document: plain queries run, multiplying ones are refused.
        let items: Vec<Value> = (0..5_000).map(|i| json!({"id": i, "tags": ["a", "b"]})).collect();
        let big = json!({ "items": items });
        assert_eq!(run_query(&big, "$..id", 10).unwrap().count, 5_000);
        assert_eq!(run_query(&big, "$.items[?@.id < 3].id", 10).unwrap().count, 3);
        assert_eq!(run_query(&big, "$..[?@ == 'b']", 10).unwrap().count, 5_000);
        let e = message(&big, "$..*..*", 10);
        assert!(e.contains("node visits") && e.contains("limit of 2000000"), "{e}");
        // Output: each match is 100 KB; 10 of them are 1 MB.
        let wide = json!({"s": ["x".repeat(100_000)]});
        assert_eq!(run_query(&wide, "$[*][*,*,*,*,*,*,*,*,*,*]", 1000).unwrap().count, 10);
        let e = message(&wide, "$[*][*,*,*,*,*,*,*,*,*,*,*]", 1000);
        assert!(e.contains("more than 1048576 bytes of JSON (the limit)"), "{e}");
        // Regular expressions: literal patterns of bounded size, a bounded number of calls.
        let names = json!({"items": (0..100).map(|i| json!({"name": format!("item{i}")})).collect::<Vec<_>>()});
        assert_eq!(run_query(&names, "$.items[?match(@.name, 'item1.')].name", 100).unwrap().count, 10);
        assert_eq!(
            run_query(&names, "$.items[?search(@.name, '[a-z0-9]+9$')].name", 100)
                .unwrap()
                .count,
            10
        );
        let e = message(&names, "$.items[?match(@.name, '\\\\w{100}')]", 10);
        assert!(e.contains("larger than 16384 bytes (the limit)"), "{e}");
        let e = message(&names, "$.items[?match(@.name, @.pattern)]", 10);
        assert!(e.contains("must be a string literal"), "{e}");
        let e = message(&names, "$.items[?match(@.name, 'a(')]", 10);
        assert!(e.contains("not a valid regular expression"), "{e}");
        let many: Vec<Value> = (0..2_000).map(|i| json!(format!("s{i}"))).collect();
        let e = message(&json!(many), "$[?match(@, 's1.*')]", 10);
        assert!(e.contains("limit of 2000000"), "{e}");
        // Only the returned matches count.
        assert_eq!(run_query(&wide, "$[*][*,*,*,*,*,*,*,*,*,*,*]", 5).unwrap().count, 11);
    }

    #[test]
    fn the_tool_description_states_the_limits() {
        let spec = Registry::global().get("json-query").unwrap().spec().clone();
        let text = spec.description.clone();
        for limit in [MAX_QUERY_CHARS, MAX_QUERY_NESTING, MAX_DOCUMENT_NODES, MAX_DOCUMENT_DEPTH] {
            assert!(text.contains(&format!(" {limit} ")), "{limit} is not in: {text}");
        }
        for limit in [MAX_QUERY_WORK, REGEX_CALL_WORK, MAX_PATTERN_BYTES as u64] {
            assert!(text.contains(&format!(" {limit}")), "{limit} is not in: {text}");
        }
        assert_eq!(MAX_OUTPUT_BYTES, 1 << 20, "the description says 1 MiB");
    }

    #[tokio::test]
    async fn documents_sent_as_text_are_parsed_and_provider_options_are_kept() {
        let r = Registry::global();
        let out = r
            .call(
                "json-query",
                json!({"document": "{\"a\": [1, 2, 3]}", "query": "$.a[1]"}),
                CallOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(
            out.value(),
            json!({"query": "$.a[1]", "count": 1, "truncated": false,
                   "matches": [{"path": "$['a'][1]", "pointer": "/a/1", "value": 2}]})
        );
        let out = r
            .call(
                "json-query",
                json!({"document": "plain text", "query": "$"}),
                CallOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(out.value()["matches"][0]["value"], "plain text");
        let spec = r.get("json-query").unwrap().spec().clone();
        assert_eq!(
            spec.presentation.provider_options["anthropic"],
            json!({"cache_control": {"type": "ephemeral"}})
        );
    }
}
