//! Compile-time behaviour of `#[tool]`: one folder per feature under `ui/`, each with
//! `fail_*.rs` cases (and their `.stderr` snapshots) and `pass_*.rs` programs that compile and run.
//!
//! Regenerate the snapshots with `TRYBUILD=overwrite cargo test -p toolsmith-tests --test ui`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*/fail_*.rs");
    t.pass("ui/*/pass_*.rs");
}
