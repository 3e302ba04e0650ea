//! The exact bytes of every catalog format, pinned: a representative set of tools (the
//! `catalog_export` bench's schema, strict tools, output schemas, provider options, MCP
//! annotations and `_meta`, maps, tuples, a root `allOf`, `Option<Struct>`, escapes, names a
//! dialect must map) exported to all six formats, as declared and all strict, compared byte for
//! byte with `tests/fixtures/catalog_bytes.golden`. The same bytes must come out of a repeated
//! export, of a fresh catalog exporting the formats in another order, and (parsed) from
//! `Export::document`.
//!
//! After a deliberate change of a format, regenerate the file with
//! `TOOLSMITH_UPDATE_GOLDEN=1 cargo test -p tool-core --test catalog_bytes` and review the diff.

use serde_json::{Value, json};
use tool_core::catalog::{Catalog, Strictness};
use tool_core::{Dialect, DynamicTool, Registry};

/// The bench's schema (`benches/support/catalog_schema.rs`): `$schema`, nested object,
/// nullable and enum fields, an array of objects through `$defs`.
#[path = "../../../benches/support/catalog_schema.rs"]
mod catalog_schema;
use catalog_schema::schema as bench_schema;

fn tool(id: &str, description: &str, input: Value) -> tool_core::tool::DynamicToolBuilder {
    DynamicTool::builder(id, description).input_schema(input)
}

fn tools() -> Vec<DynamicTool> {
    let done = |b: tool_core::tool::DynamicToolBuilder| b.handler(|_, _| async { Ok(Value::Null) }).unwrap();
    vec![
        // The bench's tools: dotted ids (mapped for OpenAI and Anthropic), not strict.
        done(tool("toolkit0.search_0", "Search collection 0", bench_schema(0))),
        done(tool("toolkit1.search_1", "Search collection 1", bench_schema(1))),
        // Strict, with bounds and formats each strict mode keeps or removes, an optional
        // `Option<Struct>` and a nested object.
        done(
            tool(
                "book_flight",
                "Books a flight.\nSays \"yes\" or \"no\" \u{e9}\u{1f389} </script>\t\\",
                json!({
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "title": "BookFlight",
                    "type": "object",
                    "properties": {
                        "from": {"type": "string", "minLength": 3, "maxLength": 3, "pattern": "^[A-Z]{3}$"},
                        "when": {"type": "string", "format": "date-time"},
                        "email": {"type": ["string", "null"], "format": "email", "default": null},
                        "site": {"type": "string", "format": "uri"},
                        "seats": {"type": "integer", "format": "uint8", "minimum": 1, "maximum": 9},
                        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2, "uniqueItems": true},
                        "return": {"anyOf": [{"$ref": "#/$defs/Leg"}, {"type": "null"}], "description": "The way back"},
                        "class": {"oneOf": [{"const": "economy", "type": "string"}, {"const": "business", "type": "string"}]}
                    },
                    "required": ["from", "when", "seats"],
                    "$defs": {
                        "Leg": {
                            "type": "object",
                            "properties": {"date": {"type": "string", "format": "date"}, "flex": {"type": "boolean"}},
                            "required": ["date"]
                        }
                    }
                }),
            )
            .title("Book a flight")
            .with_spec(|s| {
                s.policy.strict = true;
                s.presentation.input_examples = vec![json!({"from": "CDG", "when": "2026-01-01T10:00:00Z", "seats": 1})];
                s.presentation
                    .provider_options
                    .insert("openai".into(), json!({"strict": true, "x-openai": 1}));
                s.presentation
                    .provider_options
                    .insert("anthropic".into(), json!({"cache_control": {"type": "ephemeral"}}));
            }),
        ),
        // Output schemas (an object one, for MCP and Gemini), MCP annotations and `_meta`,
        // Gemini options, a map and a tuple.
        done(
            tool(
                "weather.lookup",
                "Weather at a place",
                json!({
                    "type": "object",
                    "properties": {
                        "city": {"type": "string", "examples": ["Paris"]},
                        "units": {"type": "object", "additionalProperties": {"type": "string"}},
                        "at": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "items": false},
                        "mixed": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "string"}]},
                        "n": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5, "format": "double"}
                    },
                    "required": ["city"]
                }),
            )
            .output_schema(json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {"temp": {"type": ["number", "null"]}, "kind": {"const": "weather"}},
                "required": ["temp"]
            }))
            .with_spec(|s| {
                s.presentation.mcp.read_only_hint = Some(true);
                s.presentation.mcp.open_world_hint = Some(false);
                s.presentation.mcp.title = Some("Weather (MCP)".into());
                s.presentation.mcp.meta = Some(json!({"com.example/owner": "team-a"}));
                s.presentation
                    .provider_options
                    .insert("google".into(), json!({"behavior": "NON_BLOCKING"}));
                s.presentation
                    .provider_options
                    .insert("gemini".into(), json!({"behavior": "BLOCKING"}));
            }),
        ),
        // A non-object output schema (Gemini keeps it, MCP leaves it out) and a root `allOf`.
        done(
            tool(
                "1count-words",
                "Counts words",
                json!({
                    "type": "object",
                    "allOf": [
                        {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
                        {"$ref": "#/$defs/Opts"}
                    ],
                    "$defs": {"Opts": {"type": "object", "properties": {"lang": {"type": "string"}}}}
                }),
            )
            .output_schema(json!({"type": "integer", "format": "uint64", "minimum": 0})),
        ),
        // A long id (shortened with a hash suffix), no `$schema`, an empty object property.
        done(tool(
            &format!("very.long.{}", "segment_".repeat(12)),
            "A tool with a long id",
            json!({"type": "object", "properties": {"empty": {"type": "object", "properties": {}}}}),
        )),
        // The smallest input.
        done(tool("ping", "Pings", json!({"type": "object"}))),
    ]
}

/// The full catalog, and the one every tool of which can be strict (the map and tuples of
/// `weather.lookup` cannot).
struct Catalogs {
    full: Catalog,
    strict: Catalog,
}

fn catalogs() -> Catalogs {
    let full = Catalog::new("golden", "1.2.3", Registry::from_iter(tools()));
    let ids: Vec<String> = full
        .tools()
        .iter()
        .map(|t| t.spec().id.clone())
        .filter(|id| id != "weather.lookup")
        .collect();
    let strict = Catalog::new("golden", "1.2.3", Registry::from_iter(tools())).only(ids.iter().map(String::as_str));
    Catalogs { full, strict }
}

const STRICTNESS: [(Strictness, &str); 3] = [
    (Strictness::AsDeclared, "as-declared"),
    (Strictness::All, "all-strict"),
    (Strictness::All, "all-strict-without-weather"),
];

/// One section per format and strictness: the serialised document, then its warnings (or the
/// error), in the order given.
fn render(catalogs: &Catalogs, order: &[(Dialect, Strictness, &str)]) -> String {
    let mut out = String::new();
    for (format, strictness, label) in order {
        out.push_str(&format!("=== {} {label}\n", format.as_str()));
        let catalog = if label.ends_with("without-weather") {
            &catalogs.strict
        } else {
            &catalogs.full
        };
        match catalog.export_with(*format, *strictness) {
            Ok(export) => {
                let bytes = serde_json::to_vec(&export).unwrap();
                let text = String::from_utf8(bytes).expect("an export is UTF-8");
                let parsed: Value = serde_json::from_str(&text).expect("an export is JSON");
                assert_eq!(parsed, export.document(), "{format:?} {label}: the bytes and the document differ");
                out.push_str(&text);
                out.push('\n');
                for w in &export.warnings {
                    out.push_str(&format!("warning: {w}\n"));
                }
            }
            Err(e) => out.push_str(&format!("error: {e}\n")),
        }
    }
    out
}

fn every_export() -> Vec<(Dialect, Strictness, &'static str)> {
    Dialect::ALL
        .into_iter()
        .flat_map(|f| STRICTNESS.into_iter().map(move |(s, l)| (f, s, l)))
        .collect()
}

fn golden_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/catalog_bytes.golden")
}

#[test]
fn every_format_keeps_its_exact_bytes() {
    let order = every_export();
    let first = render(&catalogs(), &order);
    if std::env::var_os("TOOLSMITH_UPDATE_GOLDEN").is_some() {
        std::fs::write(golden_path(), &first).unwrap();
    }
    let golden = std::fs::read_to_string(golden_path()).expect("the golden file exists");
    if first != golden {
        let at = first.bytes().zip(golden.bytes()).take_while(|(a, b)| a == b).count();
        let from = at.saturating_sub(200);
        panic!(
            "catalog bytes differ from tests/fixtures/catalog_bytes.golden at byte {at}:\n--- got\n{}\n--- golden\n{}",
            first.get(from..(at + 200).min(first.len())).unwrap_or_default(),
            golden.get(from..(at + 200).min(golden.len())).unwrap_or_default()
        );
    }
}

#[test]
fn repeated_and_reordered_exports_give_the_same_bytes() {
    let order = every_export();
    let golden = render(&catalogs(), &order);
    // The same catalog again: every entry now comes from its cache.
    let warm = catalogs();
    render(&warm, &order);
    assert_eq!(render(&warm, &order), golden);
    // A fresh catalog exporting the formats backwards (what one format computes first must not
    // change another's bytes), then in the usual order.
    let fresh = catalogs();
    let mut backwards = order.clone();
    backwards.reverse();
    let back = render(&fresh, &backwards);
    let mut sections: Vec<&str> = back.split("=== ").filter(|s| !s.is_empty()).collect();
    sections.reverse();
    let reordered: String = sections.iter().map(|s| format!("=== {s}")).collect();
    assert_eq!(reordered, golden);
    assert_eq!(render(&fresh, &order), golden);
}

#[test]
fn the_golden_file_covers_every_format_and_its_features() {
    let golden = std::fs::read_to_string(golden_path()).expect("the golden file exists");
    for (format, _, label) in every_export() {
        assert!(golden.contains(&format!("=== {} {label}\n", format.as_str())), "{format:?} {label}");
    }
    // What the tools are there for actually shows in the bytes.
    for needle in [
        r#""$schema":"https://json-schema.org/draft/2020-12/schema""#,
        r#""nullable":true"#,
        r#""additionalProperties":false"#,
        r#""outputSchema""#,
        r#""annotations":{"#,
        r#""_meta":{"#,
        r#""responseJsonSchema""#,
        r#""input_examples""#,
        r#""x-openai":1"#,
        r#""behavior":"BLOCKING""#,
        r#"Says \"yes\""#,
        "warning: ",
    ] {
        assert!(golden.contains(needle), "{needle}");
    }
}
