//! Tool search: where tools sit (deferred, namespaced) and the index that finds them.

use proptest::prelude::*;
use serde_json::json;
use tool_core::catalog::{Catalog, SearchIndex};
use tool_core::spec::ToolSpec;
use tool_core::tool::DynamicToolBuilder;
use tool_core::{DynamicTool, Registry};

fn tool(builder: DynamicToolBuilder) -> DynamicTool {
    builder.handler(|_, _| async { Ok(json!(null)) }).unwrap()
}

fn crm_catalog() -> Catalog {
    let find = DynamicTool::builder("crm_find", "Find a customer by name")
        .defer_loading()
        .namespace("crm")
        .with_spec(|s| s.presentation.tags = vec!["sales".into()]);
    let orders =
        DynamicTool::builder("orders_list", "List a customer's open orders").with_spec(|s| s.presentation.tags = vec!["sales".into()]);
    let web = DynamicTool::builder("search_web", "Search the web");
    Catalog::new("agent", "1.0.0", Registry::from_iter([tool(find), tool(orders), tool(web)]))
}

#[test]
fn tools_declare_their_defaults_and_the_catalog_overrides_them() {
    let catalog = crm_catalog();
    let find = catalog.placement("crm_find").unwrap();
    assert!(find.deferred);
    assert_eq!(find.namespace.as_deref(), Some("crm"));
    assert!(!catalog.placement("orders_list").unwrap().deferred);
    assert!(catalog.placement("unknown").is_none());

    let catalog = catalog.defer_all_except(["search_web"]).namespace_by_tag("sales", "sales").unwrap();
    assert!(catalog.placement("orders_list").unwrap().deferred);
    assert!(!catalog.placement("search_web").unwrap().deferred);
    // The catalog's rule wins over the tool's own namespace.
    assert_eq!(catalog.placement("crm_find").unwrap().namespace.as_deref(), Some("sales"));
    assert_eq!(catalog.placement("search_web").unwrap().namespace, None);
    // Selecting tools keeps the overrides.
    let catalog = catalog.only(["crm_find", "search_web"]);
    assert!(catalog.placement("crm_find").unwrap().deferred);
    assert!(!catalog.defer_none().placement("crm_find").unwrap().deferred);
}

#[test]
fn namespaces_are_checked() {
    let err = crm_catalog().namespace_by_tag("sales", "crm.sales").unwrap_err();
    assert!(err.to_string().contains("`crm.sales` is not a namespace"), "{err}");
    assert!(crm_catalog().namespace_by_module("my_crate::crm", "").is_err());
    let bad = DynamicTool::builder("crm_find", "Find a customer")
        .namespace("c r m")
        .handler(|_, _| async { Ok(json!(1)) });
    assert!(bad.unwrap_err().to_string().contains("not a namespace"));
}

#[test]
fn search_reads_every_field_of_a_tool() {
    let spec = |id: &str, d: &str| ToolSpec::new(id, d, json!({"type": "object"}));
    let mut by_param = spec("geo_lookup", "Look a place up");
    by_param.schemas.input =
        json!({"type": "object", "properties": {"postcode": {"type": "string", "description": "A British postal code"}}});
    let mut by_title = spec("t1", "Does things");
    by_title.title = Some("Invoice generator".into());
    let mut by_tag = spec("t2", "Does other things");
    by_tag.presentation.tags = vec!["kubernetes".into()];
    let mut by_ns = spec("t3", "Does more things");
    by_ns.presentation.namespace = Some("zendesk".into());
    let index = SearchIndex::new([&by_param, &by_title, &by_tag, &by_ns, &spec("lookupCustomer", "Find a person")]);
    assert_eq!(index.search("postcode", 5)[0].id, "geo_lookup");
    assert_eq!(index.search("postal", 5)[0].id, "geo_lookup");
    assert_eq!(index.search("invoices", 5)[0].id, "t1");
    assert_eq!(index.search("kubernetes", 5)[0].id, "t2");
    assert_eq!(index.search("zendesk", 5)[0].id, "t3");
    assert_eq!(index.search("customer", 5)[0].id, "lookupCustomer");
    assert!(index.search("nothing matches this", 5).is_empty());
    assert!(index.search("customer", 0).is_empty());
}

#[test]
fn search_ranks_the_better_match_first_and_caps_at_k() {
    let spec = |id: &str, d: &str| ToolSpec::new(id, d, json!({"type": "object"}));
    let index = SearchIndex::new([
        &spec("github.create_issue", "Create an issue in a GitHub repository"),
        &spec("github.list_issues", "List the issues of a GitHub repository"),
        &spec("jira.create_ticket", "Create a ticket in a Jira project"),
        &spec("slack.post", "Post a message to a Slack channel"),
    ]);
    let hits = index.search("create github issue", 2);
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0].id, "github.create_issue");
    assert!(hits[0].score > hits[1].score);
    assert_eq!(index.search("ticket", 10).len(), 1);
}

#[test]
fn the_catalog_index_follows_its_registry() {
    let catalog = crm_catalog();
    assert_eq!(catalog.search("customer", 5).len(), 2);
    catalog
        .registry()
        .insert(tool(DynamicTool::builder("crm_merge", "Merge two customer records")))
        .unwrap();
    assert!(catalog.search("merge customers", 5).iter().any(|h| h.id == "crm_merge"));
    catalog.registry().remove("crm_find");
    let hits = catalog.search("customer", 5);
    assert!(hits.iter().all(|h| h.id != "crm_find"), "{hits:?}");
    assert_eq!(hits.len(), 2);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any text is a query: scripts, emoji, joiners, combining marks, controls, lone
    /// surrogates' replacements, very long words.
    #[test]
    fn queries_in_any_script_never_fail(query in "\\PC{0,80}", odd in "[\u{0300}-\u{036f}\u{200b}-\u{200f}\u{fe0f}\u{1f300}-\u{1f5ff}\u{0600}-\u{06ff}\u{4e00}-\u{4e2f}\u{ff00}-\u{ff10}\u{0000}-\u{001f}]{0,40}", k in 0usize..8) {
        let specs = [
            ToolSpec::new("wetter.vorhersage", "Die Wettervorhersage für eine Stadt", json!({"type": "object"})),
            ToolSpec::new("tenki", "東京の天気予報を取得する", json!({"type": "object"})),
            ToolSpec::new("taqs", "الطقس في مدينة", json!({"type": "object"})),
            ToolSpec::new("emoji", "🌦️ weather 👩‍💻 coder", json!({"type": "object"})),
        ];
        let index = SearchIndex::new(specs.iter());
        for q in [query.as_str(), odd.as_str(), &format!("{query}{odd}"), &odd.repeat(50)] {
            let hits = index.search(q, k);
            prop_assert!(hits.len() <= k);
            prop_assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
            prop_assert!(hits.iter().all(|h| h.score.is_finite() && h.score > 0.0));
        }
    }
}

#[test]
fn words_of_other_scripts_are_found() {
    let specs = [
        ToolSpec::new("tenki", "東京の天気予報を取得する", json!({"type": "object"})),
        ToolSpec::new("pogoda", "Прогноз погоды для города", json!({"type": "object"})),
        ToolSpec::new("wetter", "Wettervorhersage für München", json!({"type": "object"})),
    ];
    let index = SearchIndex::new(specs.iter());
    assert_eq!(index.search("天気", 3)[0].id, "tenki");
    assert_eq!(index.search("погоды", 3)[0].id, "pogoda");
    assert_eq!(index.search("MÜNCHEN", 3)[0].id, "wetter");
}

#[test]
fn a_query_finds_tools_by_synonyms_stems_and_kinds_but_its_own_words_rank_first() {
    let spec = |id: &str, description: &str| ToolSpec::new(id, description, json!({"type": "object"}));
    let index = SearchIndex::new(&[
        spec("files_remove", "Remove a file from the workspace"),
        spec("money_convert", "Convert an amount between currencies"),
        spec("units", "Convert an amount between units of length or mass"),
        spec("math", "Evaluate a mathematical expression"),
        spec("files_delete_all", "Delete every file of a folder"),
    ]);
    let top = |q: &str| index.search(q, 5).into_iter().map(|h| h.id).collect::<Vec<_>>();
    // A synonym finds the tool; a tool with the query's own word ranks above it.
    assert_eq!(top("delete a file"), ["files_delete_all", "files_remove"]);
    let mut erase = top("erase a file");
    erase.sort();
    assert_eq!(erase, ["files_delete_all", "files_remove"]);
    // A stem the index holds: `converting` is `convert`.
    assert_eq!(top("converting currencies")[0], "money_convert");
    // Words no description has that name what a tool works on.
    assert_eq!(top("kilometres to miles")[0], "units");
    assert_eq!(top("pounds in a stone")[0], "units");
    assert_eq!(top("square root of two")[0], "math");
    assert_eq!(top("17% of 2340")[0], "math");
    // Nothing a query holds fails the search.
    for q in [
        "",
        "%%%",
        "√",
        "İstanbul'da hava",
        "東京の天気 converting",
        "\u{200d}ing",
        "eding ing ed",
    ] {
        let _ = index.search(q, 5);
    }
}
