//! Input hygiene at the command line, on the real `toolsmith` binary: a repeated key in a
//! call's arguments, its `--context` or resume data is refused naming the key, and a request
//! context that is not an object is never echoed.

use crate::support;

use support::toolsmith;

#[test]
fn call_arguments_with_a_repeated_key_are_refused_naming_it() {
    let run = toolsmith(&["call", "convert-units", r#"{"value": 100, "from": "C", "to": "F", "value": 0}"#]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(run.stderr.contains("`value`") && run.stderr.contains("RFC 7493"), "{}", run.stderr);
    // Without the repeat, the same call runs.
    let run = toolsmith(&["call", "convert-units", r#"{"value": 100, "from": "C", "to": "F"}"#]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("212"), "{}", run.stdout);
}

#[test]
fn a_context_with_a_repeated_key_is_refused_and_one_that_is_not_an_object_is_not_echoed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let context = format!(r#"{{"root": "{root}", "root": "/"}}"#);
    let run = toolsmith(&["call", "search-files", r#"{"query": "x"}"#, "--context", &context]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(run.stderr.contains("--context") && run.stderr.contains("`root`"), "{}", run.stderr);

    let run = toolsmith(&["call", "search-files", r#"{"query": "x"}"#, "--context", r#""password=hunter2""#]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(run.stderr.contains("must be a JSON object"), "{}", run.stderr);
    assert!(
        !run.stderr.contains("hunter2") && !run.stdout.contains("hunter2"),
        "{}{}",
        run.stdout,
        run.stderr
    );
}
