//! `json-query`: runs a JSONPath query (RFC 9535) over a JSON document with
//! `serde_json_path`.
//!
//! Shows `provider_options`: the tool's description is long and stable, so it asks Anthropic to
//! cache it.

use serde_json_path::JsonPath;
use tool_core::prelude::*;

/// Default number of matches returned.
pub const DEFAULT_MAX_RESULTS: u32 = 100;
/// Largest accepted `max_results`.
pub const MAX_RESULTS: u32 = 1000;

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

/// Runs `query` over `document`, returning at most `max_results` matches.
pub fn run_query(document: &Value, query: &str, max_results: usize) -> Result<JsonQueryResult, ToolError> {
    let path = JsonPath::parse(query).map_err(|e| {
        ToolError::new(format!(
            "`{query}` is not a valid JSONPath query: {e}. Queries start with `$`, e.g. `$.store.book[*].title` or `$..price` or `$.items[?@.price < 10]`."
        ))
    })?;
    let nodes = path.query_located(document);
    let count = nodes.len();
    let matches = nodes
        .into_iter()
        .take(max_results)
        .map(|n| JsonMatch {
            path: n.location().to_string(),
            pointer: n.location().to_json_pointer(),
            value: n.node().clone(),
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
        assert_eq!(spec.provider_options["anthropic"], json!({"cache_control": {"type": "ephemeral"}}));
    }
}
