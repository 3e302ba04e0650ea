//! Compile-time behaviour of `#[tool]`: one folder per feature under `ui/`, each with
//! `fail_*.rs` cases (and their `.stderr` snapshots) and `pass_*.rs` cases that compile and run.
//! The pass cases are modules of one program, `ui/pass.rs` (one link instead of one per case);
//! `ui/registry/`'s stay programs of their own, as they test the global registry itself.
//!
//! Regenerate the snapshots with `TRYBUILD=overwrite cargo test -p toolsmith-tests --test ui`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*/fail_*.rs");
    t.pass("ui/pass.rs");
    t.pass("ui/registry/pass_*.rs");
}

/// A pass case that `ui/pass.rs` does not name would never be compiled.
#[test]
fn every_pass_case_is_in_the_pass_program() {
    let ui = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ui");
    let program = std::fs::read_to_string(ui.join("pass.rs")).unwrap();
    let mut missing = Vec::new();
    let mut named = 0;
    for feature in std::fs::read_dir(&ui).unwrap() {
        let feature = feature.unwrap().path();
        if !feature.is_dir() || feature.ends_with("registry") {
            continue;
        }
        for case in std::fs::read_dir(&feature).unwrap() {
            let case = case.unwrap().path();
            let file = case.file_name().unwrap().to_str().unwrap().to_owned();
            if !(file.starts_with("pass_") && file.ends_with(".rs")) {
                continue;
            }
            let path = format!("{}/{file}", feature.file_name().unwrap().to_str().unwrap());
            let Some(at) = program.find(&format!("#[path = \"{path}\"]\nmod ")) else {
                missing.push(path);
                continue;
            };
            let module = program[at..]
                .lines()
                .nth(1)
                .unwrap()
                .trim_start_matches("mod ")
                .trim_end_matches(';');
            assert!(
                program.contains(&format!("    {module}::main();")),
                "ui/pass.rs does not run {module}::main()"
            );
            named += 1;
        }
    }
    assert!(missing.is_empty(), "ui/pass.rs does not include these pass cases: {missing:?}");
    assert!(named >= 24, "only {named} pass cases found");
}
