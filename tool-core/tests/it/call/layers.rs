//! The layers of `ARCHITECTURE.md`, held against the source: each module of `tool-core` names
//! only the modules its layer may use (`crate::x` paths and `use crate::{x, …}` lists). A back
//! edge — the call layer importing the runtime, `tool` importing `call`, `context` importing
//! `tool` — fails here with the file and the module it names.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The layer of a top-level module, lowest first; `None` for the crate's private glue.
fn layer(module: &str) -> Option<u8> {
    Some(match module {
        "spec" | "schema" | "error" | "model_output" | "json" | "panic" | "fingerprint" | "budget" | "caller" => 0,
        "tool" | "context" | "call" | "registry" | "isolate" | "respecified" | "idempotency" => 1,
        "dialect" | "catalog" | "stream" | "partial_json" | "check" => 2,
        "runtime" | "pins" | "credentials" | "otel" => 3,
        "mcp" | "cli" | "provider" => 4,
        // The test kit drives every part, edges included; nothing imports it.
        "testing" => 5,
        _ => return None,
    })
}

/// Pairs that are forbidden even where the layers would allow them.
const FORBIDDEN: &[(&str, &str)] = &[
    // `tool` is what runs; `call` runs it: the arrow points one way.
    ("tool", "call"),
    // What a tool receives knows nothing of the tool traits.
    ("context", "tool"),
    // Edges do not import each other (the CLI's `serve` is the one sanctioned use of `mcp`).
    ("mcp", "cli"),
    ("mcp", "provider"),
    ("provider", "mcp"),
    ("provider", "cli"),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a source file belongs to.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
    first.trim_end_matches(".rs").to_owned()
}

/// Every top-level module the file names through `crate::` in code (comments and doc links
/// are not imports), outside its `#[cfg(test)]` part.
fn named_modules(text: &str) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or(text);
    let code: String = code
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| format!("{l}\n"))
        .collect();
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    let mut names = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(list) = rest.strip_prefix('{') {
            for item in list.split('}').next().unwrap_or("").split(',') {
                names.insert(ident(item.trim()));
            }
        } else {
            names.insert(ident(rest));
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

#[test]
fn no_module_imports_a_layer_above_it_or_a_forbidden_neighbour() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = Vec::new();
    for file in &files {
        let from = module_of(&src, file);
        let Some(from_layer) = layer(&from) else { continue };
        let text = std::fs::read_to_string(file).unwrap();
        for to in named_modules(&text) {
            let Some(to_layer) = layer(&to) else { continue };
            let cli_serves_mcp = from == "cli" && to == "mcp";
            let edge_to_edge = from_layer == 4 && to_layer == 4 && from != to && !cli_serves_mcp;
            if to_layer > from_layer || edge_to_edge || FORBIDDEN.contains(&(from.as_str(), to.as_str())) {
                problems.push(format!(
                    "{} ({from}) imports `crate::{to}`",
                    file.strip_prefix(&src).unwrap().display()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "back edges:\n{}", problems.join("\n"));
}

#[test]
fn the_scanner_sees_paths_and_use_lists() {
    let names = named_modules(
        "use crate::call::{CallArgs};\nuse crate::{tool, context::Writer};\nfn f() { crate::runtime::x(); }\n#[cfg(test)]\nuse crate::cli;",
    );
    assert_eq!(
        names,
        ["call", "context", "runtime", "tool"].map(String::from).into_iter().collect()
    );
}

#[test]
fn every_module_of_the_crate_is_on_a_layer() {
    // The crate's root and its glue: the macro's private path, the budget's test file.
    const GLUE: &[&str] = &["lib", "private", "budget_tests"];
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let unplaced: BTreeSet<String> = files
        .iter()
        .map(|f| module_of(&src, f))
        .filter(|m| layer(m).is_none() && !GLUE.contains(&m.as_str()))
        .collect();
    assert!(
        unplaced.is_empty(),
        "modules on no layer (add them to `layer` and to ARCHITECTURE.md's table): {unplaced:?}"
    );
}
