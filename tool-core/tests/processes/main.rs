//! tool-core's tests that need real processes, in one binary without a libtest harness: the
//! binary is also every child they start. Its `main` first serves the child modes (an
//! isolated tool's worker, the `toolsmith` command line, a suite's own child loop), and
//! otherwise runs every suite's tests under `libtest-mimic` (the usual filters and flags; tests
//! are named `SUITE::TEST`, e.g. `cargo test -p tool-core --test processes store::robust`).

#[path = "../support/mod.rs"]
#[allow(dead_code)]
mod support;

mod mcp;
mod runtime;
mod store;

use std::process::ExitCode;

/// A suite: its name, and its tests as trials named under it.
type Suite = (&'static str, fn(&str) -> Vec<libtest_mimic::Trial>);

fn main() -> ExitCode {
    // A child never returns from these: each exits when its work is done.
    tool_core::isolate::worker_main();
    support::child_cli::child_main();
    if store::pending_kill::child() || store::exactly_once_chaos::child() {
        return ExitCode::SUCCESS;
    }
    let args = libtest_mimic::Arguments::from_args();
    let suites: [Suite; 13] = [
        ("mcp::authorization", mcp::authorization::trials),
        ("mcp::fairness", mcp::fairness::trials),
        ("mcp::oauth", mcp::oauth::trials),
        ("mcp::production", mcp::production::trials),
        ("mcp::trust", mcp::trust::trials),
        ("runtime::isolation", runtime::isolation::trials),
        ("runtime::otel_export", runtime::otel_export::trials),
        ("store::exactly_once", store::exactly_once::trials),
        ("store::exactly_once_chaos", store::exactly_once_chaos::trials),
        ("store::faults", store::faults::trials),
        ("store::pending_kill", store::pending_kill::trials),
        ("store::robust", store::robust::trials),
        ("store::suite", store::suite::trials),
    ];
    let trials = suites.iter().flat_map(|(suite, trials)| trials(suite)).collect();
    libtest_mimic::run(&args, trials).exit_code()
}
