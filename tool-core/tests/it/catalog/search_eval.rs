//! Search quality: recall@5 of hand-written queries over a few hundred realistic tools, alone
//! and among 10,000 (the same tools under numbered workspaces).

use tool_core::catalog::SearchIndex;

#[path = "../../../benches/support/tool_corpus.rs"]
mod tool_corpus;

/// The floor: below it, a change to the tokeniser or the weights made search worse.
const FLOOR: f64 = 0.80;

#[test]
fn recall_at_5_over_the_realistic_catalog() {
    let grid = tool_corpus::grid();
    assert!(grid.len() >= 300, "{} tools", grid.len());
    for (id, _) in tool_corpus::QUERIES.iter().map(|(q, id)| (id, q)) {
        assert!(grid.iter().any(|s| s.id == *id), "the query's tool `{id}` is not in the corpus");
    }
    let index = SearchIndex::new(grid.iter());
    let search = |q: &str, k: usize| index.search(q, k).into_iter().map(|h| h.id).collect::<Vec<_>>();
    let r5 = tool_corpus::recall_at(5, search);
    let r1 = tool_corpus::recall_at(1, search);
    println!(
        "tool search over {} tools, {} queries: recall@1 {r1:.2}, recall@5 {r5:.2}",
        grid.len(),
        tool_corpus::QUERIES.len()
    );
    assert!(r5 >= FLOOR, "recall@5 {r5:.2} < {FLOOR}");
}
