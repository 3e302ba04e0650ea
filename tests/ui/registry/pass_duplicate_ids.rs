//! Two `#[tool]`s with one id in one binary: the global registry refuses to start and names
//! both definitions. (A program of its own: the global registry is the whole binary's, and the
//! tests binary's must start.)

use tool_core::prelude::*;
use tool_core::RegistryProblem;

/// First definition
#[tool(id = "same-id")]
pub async fn first() -> u8 {
    1
}

/// Second definition
#[tool(id = "same-id")]
pub async fn second() -> u8 {
    2
}

fn main() {
    let err = Registry::try_global().unwrap_err();
    let text = err.to_string();
    assert!(text.contains("two tools have the id `same-id`"), "{text}");
    let lines: Vec<u32> = err
        .0
        .iter()
        .flat_map(|p| match p {
            RegistryProblem::DuplicateId { first, second, .. } => vec![first.line, second.line],
            other => panic!("unexpected {other}"),
        })
        .collect();
    assert_eq!(lines.len(), 2);
    assert_ne!(lines[0], lines[1]);
    assert!(text.matches("ui/registry/pass_duplicate_ids.rs:").count() == 2, "{text}");
    let panic = std::panic::catch_unwind(Registry::global).unwrap_err();
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(message.contains("same-id"));
}
