//! The inputs that once crashed or stalled the example tools, and scaled-up variants of them.
//!
//! Each runs twice: in this process through the registry, on a thread with a tokio worker's
//! stack (2 MiB), and through the built `toolsmith` binary. Each must end within a generous
//! bound (a hang fails the test instead of stalling CI) with a model-readable error naming the
//! limit it reached; the process must not abort (a stack overflow or an allocation failure
//! aborts this test binary, or ends the subprocess by a signal).

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_core::prelude::*;

/// Generous: every case ends in well under a second when the limits work.
const BOUND: Duration = Duration::from_secs(20);
/// A tokio worker thread's default stack.
const WORKER_STACK: usize = 2 << 20;
/// Linux refuses a single command-line argument longer than this (`MAX_ARG_STRLEN`).
const MAX_ARG_BYTES: usize = 128 * 1024;

/// A crash input: the tool, its arguments, the request context and what the error must say.
struct Case {
    name: String,
    tool: &'static str,
    args: Value,
    context: Option<Value>,
    says: &'static [&'static str],
}

fn case(name: impl Into<String>, tool: &'static str, args: Value, says: &'static [&'static str]) -> Case {
    Case {
        name: name.into(),
        tool,
        args,
        context: None,
        says,
    }
}

/// Runs `f` on a thread with a worker-sized stack; fails if it does not finish within [`BOUND`].
fn within_bound<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::Builder::new()
        .stack_size(WORKER_STACK)
        .spawn(move || {
            let _ = tx.send(f());
        })
        .expect("a thread starts");
    rx.recv_timeout(BOUND)
        .unwrap_or_else(|_| panic!("{what}: no answer within {BOUND:?} (hang or crash)"))
}

/// Calls the tool in this process, through the registry.
fn call_in_process(case: &Case) -> ToolError {
    // Linking the examples crate registers its tools.
    let _ = examples::calculate::MAX_NESTING;
    let (tool, args) = (case.tool, case.args.clone());
    let options = match &case.context {
        Some(cx) => CallOptions::with_context(cx.clone()),
        None => CallOptions::default(),
    };
    let started = Instant::now();
    let result = within_bound(&case.name, move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime
            .block_on(Registry::global().call(tool, args, options))
            .map(|out| out.value())
    });
    assert!(started.elapsed() < BOUND);
    match result {
        Ok(value) => panic!("{}: expected an error naming a limit, got {value}", case.name),
        Err(e) => e,
    }
}

/// What a `toolsmith` subprocess did.
struct Exit {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `toolsmith call` as a subprocess, killing it if it outlives [`BOUND`].
fn call_binary(case: &Case) -> Exit {
    let data = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    command
        .env("TOOLSMITH_DATA_DIR", data.path())
        .args(["call", case.tool, &case.args.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(cx) = &case.context {
        command.args(["--context", &cx.to_string()]);
    }
    let mut child = command.spawn().expect("the toolsmith binary starts");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + BOUND;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{}: `toolsmith call` did not exit within {BOUND:?}", case.name);
        }
        thread::sleep(Duration::from_millis(20));
    };
    Exit {
        code: status.code(),
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

fn assert_names_the_limit(case: &Case, message: &str) {
    for phrase in case.says {
        assert!(message.contains(phrase), "{}: `{phrase}` missing from: {message}", case.name);
    }
}

/// Runs every case both ways (the binary only for arguments the system can pass on a command line).
fn run_all(cases: &[Case]) {
    for case in cases {
        let e = call_in_process(case);
        assert_names_the_limit(case, e.message());

        if case.args.to_string().len() > MAX_ARG_BYTES {
            continue;
        }
        let exit = call_binary(case);
        assert!(
            exit.code.is_some(),
            "{}: the process was killed by a signal: {}",
            case.name,
            exit.stderr
        );
        assert_ne!(exit.code, Some(0), "{}: expected a failure, got {}", case.name, exit.stdout);
        assert!(
            !exit.stderr.contains("stack overflow") && !exit.stderr.contains("panicked"),
            "{}",
            exit.stderr
        );
        assert_names_the_limit(case, &exit.stderr);
    }
}

fn nested(open: &str, core: &str, close: &str, times: usize) -> String {
    open.repeat(times) + core + &close.repeat(times)
}

#[test]
fn calculate_bounds_nesting_operations_and_value_sizes() {
    let mut cases = vec![];
    for (scale, says) in [
        (1, &["256", "limit"][..]),
        (10, &["the limit is 2000"]),
        (100, &["the limit is 2000"]),
    ] {
        let expr = "-".repeat(1_403 * scale) + "1";
        cases.push(case(
            format!("{} unary minus", 1_403 * scale),
            "calculate",
            json!({ "expression": expr }),
            says,
        ));
    }
    // 990 functions applied without parentheses: `f f f … 1`.
    cases.push(case(
        "990 chained function applications",
        "calculate",
        json!({ "expression": "f ".repeat(990) + "1" }),
        &["256", "limit"],
    ));
    // Doubling a string: 31 times (2 GiB; 192 characters), 32 times (198 characters), 62 and
    // 310 times.
    for times in [31, 32, 62, 310] {
        let expr = "a=\"x\";".to_owned() + &"a=a+a;".repeat(times);
        cases.push(case(
            format!("a string doubled {times} times"),
            "calculate",
            json!({ "expression": expr }),
            &["10000 bytes of text", "limit"],
        ));
    }
    // Doubling a tuple: 24 times (2^25 leaves), 48 times, 240 times.
    for times in [24, 48, 240] {
        let expr = "a=(1,1);".to_owned() + &"a=(a,a);".repeat(times);
        cases.push(case(
            format!("a tuple doubled {times} times"),
            "calculate",
            json!({ "expression": expr }),
            &["1000 items", "limit"],
        ));
    }
    for depth in [65, 650, 6_500] {
        cases.push(case(
            format!("{depth} nested parentheses"),
            "calculate",
            json!({ "expression": nested("(", "1", ")", depth) }),
            &["limit"],
        ));
    }
    assert_eq!(cases[0].args["expression"].as_str().unwrap().len(), 1_404);
    assert_eq!(cases[4].args["expression"].as_str().unwrap().len(), 192);
    assert_eq!(cases[5].args["expression"].as_str().unwrap().len(), 198);
    run_all(&cases);
}

#[test]
fn calculate_refuses_overflowing_builtins_instead_of_panicking() {
    let cases = [
        ("shl(1, 64)", "between 0 and 63"),
        ("shr(1, -1)", "between 0 and 63"),
        ("math::abs(-9223372036854775807 - 1)", "smallest integer"),
        ("str::substring(\"é\", 0, 1)", "multi-byte character"),
    ]
    .map(|(expr, says)| Case {
        says: Box::leak(Box::new([says])),
        ..case(expr, "calculate", json!({ "expression": expr }), &[])
    });
    run_all(&cases);
}

#[test]
fn json_query_bounds_query_nesting_and_work() {
    let doc = json!({"a": [1, 2, {"b": 3}]});
    let mut cases = vec![];
    for scale in [1, 10, 100] {
        let parens = nested("(", "@", ")", 251 * scale);
        let query = format!("$[?{parens}]");
        cases.push(case(
            format!("a filter of {} nested parentheses", 251 * scale),
            "json-query",
            json!({ "document": doc, "query": query }),
            &["deeper than 10 levels", "limit"],
        ));
        let filters = nested("[?@", "", "]", 86 * scale);
        cases.push(case(
            format!("{} nested filters", 86 * scale),
            "json-query",
            json!({ "document": doc, "query": format!("${filters}") }),
            &["deeper than 10 levels", "limit"],
        ));
    }
    assert_eq!(cases[0].args["query"].as_str().unwrap().len(), 507);
    // Work that multiplies: repeated selectors and descendants of descendants.
    let big: Vec<Value> = (0..2_000).map(|i| json!({"id": i, "tags": ["x", "y"]})).collect();
    let dup = "$".to_owned() + &"[0,0,0,0,0,0,0,0,0,0]".repeat(12);
    for query in [dup.as_str(), "$..*..*..*", "$..[?@..[?@..*]]"] {
        cases.push(case(
            format!("the query {query}"),
            "json-query",
            json!({ "document": big, "query": query }),
            &["node visits", "limit of 2000000"],
        ));
    }
    // Patterns compiled on every call: a huge one, and one taken from the document.
    let strings: Vec<Value> = (0..500).map(|i| json!(format!("{i:0>100}"))).collect();
    for (query, says) in [
        (r"$[?match(@, '(\\w{100}){100}')]", &["larger than 16384 bytes (the limit)"][..]),
        (r"$[?search(@, '\\w{1000}')]", &["larger than 16384 bytes (the limit)"]),
        ("$[?match(@, @)]", &["must be a string literal"]),
    ] {
        cases.push(case(
            format!("the query {query}"),
            "json-query",
            json!({ "document": strings, "query": query }),
            says,
        ));
    }
    // A document sent as text nested deeper than the limit.
    let deep = nested("[", "1", "]", 100);
    cases.push(case(
        "a document nested 100 deep",
        "json-query",
        json!({ "document": deep, "query": "$" }),
        &["deeper than 64 levels"],
    ));
    // Output: 100 copies of a 100 KB string.
    let wide = json!({"s": ["x".repeat(100_000)]});
    cases.push(case(
        "matches adding up to 10 MB",
        "json-query",
        json!({ "document": wide, "query": "$[*,*,*,*,*,*,*,*,*,*][*,*,*,*,*,*,*,*,*,*]", "max_results": 1000 }),
        &["bytes of JSON (the limit)"],
    ));
    run_all(&cases);
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo {}", path.display());
}

#[cfg(unix)]
#[test]
fn search_files_never_opens_special_files() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("dir");
    std::fs::create_dir(&dir).unwrap();
    mkfifo(&dir.join("pipe"));
    std::os::unix::fs::symlink(dir.join("pipe"), root.path().join("to-pipe")).unwrap();
    let _socket = std::os::unix::net::UnixListener::bind(dir.join("sock")).unwrap();
    std::fs::write(dir.join("notes.txt"), "the needle is here\n").unwrap();
    let cx = json!({ "root": root.path() });

    let mut cases = vec![];
    for path in ["dir/pipe", "to-pipe", "dir/sock"] {
        cases.push(Case {
            context: Some(cx.clone()),
            ..case(
                format!("search-files at {path}"),
                "search-files",
                json!({ "query": "needle", "path": path }),
                &["special file", "only regular files are searched"],
            )
        });
    }
    run_all(&cases);

    // The walk passes the FIFO, the socket and the link by and finds the regular file.
    let walk = Case {
        context: Some(cx),
        ..case("a walk past special files", "search-files", json!({ "query": "needle" }), &[])
    };
    let options = CallOptions::with_context(walk.context.clone().unwrap());
    let out = within_bound("walk", move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime
            .block_on(Registry::global().call("search-files", walk.args, options))
            .map(|o| o.value())
    })
    .unwrap();
    assert_eq!(
        out["matches"],
        json!([{"path": "dir/notes.txt", "kind": "content", "line": 1, "text": "the needle is here"}])
    );
    assert_eq!(out["skipped"], 3, "the FIFO, the socket and the link: {out}");
    assert_eq!(out["files_scanned"], 1);
}
