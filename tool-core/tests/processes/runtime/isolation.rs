//! Tools cannot take the process down or hog it: the blocking pool, cancellation that ends the
//! work, and process isolation, through the real registry and real child processes.
//!
//! The `processes` binary is its own tool worker: its `main` calls
//! `tool_core::isolate::worker_main()` first. The children are this very binary, started by the
//! registry. These tests run one after another, each bounded in time.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tool_core::context::Writer;
use tool_core::isolate::{BlockingTools, ExecutionPolicy, IsolateTools, ProcessLimits, WorkerCommand};
use tool_core::prelude::*;
use tool_core::{CancellationToken, ErrorKind};

// ---- the tools ------------------------------------------------------------------------------

/// Recurses until the stack is gone
#[tool(isolate = "process")]
async fn overflow() -> u64 {
    #[allow(unconditional_recursion)]
    fn down(n: u64) -> u64 {
        let frame = std::hint::black_box([n; 512]);
        frame[(n % 512) as usize] + down(std::hint::black_box(n + 1))
    }
    down(0)
}

/// Aborts the process
#[tool(isolate = "process")]
async fn abort_now() -> u64 {
    std::process::abort()
}

/// Allocates without bound
#[tool(isolate = "process")]
async fn hog_memory() -> usize {
    let mut kept: Vec<Vec<u8>> = Vec::new();
    loop {
        kept.push(Vec::with_capacity(64 << 20));
        std::hint::black_box(&kept);
    }
}

/// Announces its pid through the writer, then spins (never checking the cancellation)
#[tool(isolate = "process")]
async fn spin_isolated(#[ctx] cx: ToolContext) -> u64 {
    cx.writer().write(json!({ "pid": std::process::id() }));
    let mut x = 0u64;
    loop {
        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
    }
}

/// Says which process it ran in
#[tool(isolate = "process")]
async fn where_am_i(
    /// Echoed back
    text: String,
    #[ctx] cx: ToolContext,
) -> Value {
    cx.writer().write(json!({ "progress": "half" }));
    // Printing must not corrupt the exchange with the parent.
    println!("noise on standard output");
    json!({ "pid": std::process::id(), "text": text })
}

/// Panics in its own process
#[tool(isolate = "process")]
async fn panics_isolated() -> u64 {
    panic!("deliberate")
}

/// Suspends in its own process
#[tool(isolate = "process")]
async fn suspends_isolated(#[ctx] cx: ToolContext) -> Result<u64, ToolError> {
    Err(cx.suspend(json!({ "question": "go on?" })))
}

/// Answers, leaving a blocking task behind that never ends
#[tool(isolate = "process")]
async fn leaves_work_behind() -> u64 {
    tokio::task::spawn_blocking(|| {
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    });
    7
}

/// Calls another isolated tool from its own process
#[tool(isolate = "process")]
async fn calls_nested() -> Result<Value, ToolError> {
    let inner = Registry::global()
        .call("where-am-i", json!({"text": "nested"}), CallOptions::default())
        .await?;
    Ok(json!({ "outer": std::process::id(), "inner": inner.value()["pid"] }))
}

/// Spin bodies still running.
static SPINNING: AtomicUsize = AtomicUsize::new(0);
/// Spin bodies that saw the cancellation and stopped.
static STOPPED: AtomicUsize = AtomicUsize::new(0);

/// Spins until cancelled (checking cooperatively), at most 60 s.
fn spin(cx: &ToolContext) -> Result<u64, ToolError> {
    SPINNING.fetch_add(1, Ordering::SeqCst);
    let started = Instant::now();
    let mut x = 0u64;
    let end = loop {
        for _ in 0..10_000 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        if let Err(e) = cx.check_cancelled() {
            break Err(e);
        }
        if started.elapsed() > Duration::from_secs(60) {
            break Ok(x);
        }
    };
    SPINNING.fetch_sub(1, Ordering::SeqCst);
    STOPPED.fetch_add(1, Ordering::SeqCst);
    end
}

/// Spins on the blocking pool until cancelled
#[tool(blocking)]
async fn spin_blocking(#[ctx] cx: ToolContext) -> Result<u64, ToolError> {
    spin(&cx)
}

/// Spins until cancelled, not marked blocking
#[tool]
async fn spin_plain(#[ctx] cx: ToolContext) -> Result<u64, ToolError> {
    spin(&cx)
}

/// Says which process it ran in, not marked
#[tool]
async fn pid_here() -> u32 {
    std::process::id()
}

/// Answers at once
#[tool]
async fn quick() -> String {
    "quick".to_owned()
}

/// Dropped bodies.
static DROPPED: AtomicUsize = AtomicUsize::new(0);

struct CountDrop;
impl Drop for CountDrop {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

/// Waits forever, holding a guard
#[tool]
async fn waits_forever() -> u64 {
    let _guard = CountDrop;
    std::future::pending::<()>().await;
    0
}

/// Waits forever on the blocking pool, holding a guard
#[tool(blocking)]
async fn waits_forever_blocking() -> u64 {
    let _guard = CountDrop;
    std::future::pending::<()>().await;
    0
}

// ---- helpers --------------------------------------------------------------------------------

fn registry(policy: ExecutionPolicy) -> Registry {
    let registry = Registry::from_iter([
        overflow::tool(),
        abort_now::tool(),
        hog_memory::tool(),
        spin_isolated::tool(),
        where_am_i::tool(),
        leaves_work_behind::tool(),
        calls_nested::tool(),
        panics_isolated::tool(),
        suspends_isolated::tool(),
        spin_blocking::tool(),
        spin_plain::tool(),
        pid_here::tool(),
        quick::tool(),
        waits_forever::tool(),
        waits_forever_blocking::tool(),
    ]);
    registry.set_execution(policy);
    registry
}

fn limits(memory_mib: u64, cpu_seconds: u64) -> ProcessLimits {
    ProcessLimits {
        memory_bytes: Some(memory_mib << 20),
        cpu_seconds: Some(cpu_seconds),
        stack_bytes: 2 << 20,
    }
}

/// A runtime with two async workers that, when a test ends (or fails), is shut down without
/// waiting for whatever still runs on it.
struct Rt(Option<tokio::runtime::Runtime>);

impl std::ops::Deref for Rt {
    type Target = tokio::runtime::Runtime;
    fn deref(&self) -> &tokio::runtime::Runtime {
        self.0.as_ref().unwrap()
    }
}

impl Drop for Rt {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

fn runtime() -> Rt {
    Rt(Some(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap(),
    ))
}

/// Runs `fut` on `rt`, failing if it has not finished within `secs` (a hang, not a timing).
fn within<T: Send + 'static>(rt: &tokio::runtime::Runtime, secs: u64, fut: impl std::future::Future<Output = T> + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    rt.spawn(async move {
        let _ = tx.send(fut.await);
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .unwrap_or_else(|_| panic!("no answer within {secs} s"))
}

fn pid_alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// The server goes on: an isolated call and an in-process call both answer.
fn still_serves(rt: &tokio::runtime::Runtime, registry: &'static Registry) {
    let out = within(rt, 30, async move {
        registry.call("where-am-i", json!({"text": "again"}), CallOptions::default()).await
    })
    .expect("the next isolated call answers");
    assert_eq!(out.value()["text"], "again");
    let out = within(
        rt,
        10,
        async move { registry.call("quick", json!({}), CallOptions::default()).await },
    )
    .unwrap();
    assert_eq!(out.value(), json!("quick"));
}

fn leak(registry: Registry) -> &'static Registry {
    Box::leak(Box::new(registry))
}

// ---- the tests ------------------------------------------------------------------------------

fn isolated_call_runs_in_a_child_and_forwards_chunks() {
    let rt = runtime();
    let registry = leak(registry(ExecutionPolicy::default().process_limits(limits(1024, 30))));
    let (tx, rx) = mpsc::channel();
    let writer = Writer::new(move |chunk| {
        let _ = tx.send(chunk);
    });
    let out = within(&rt, 30, async move {
        registry
            .call("where-am-i", json!({"text": "hi"}), CallOptions::default().writer(writer))
            .await
    })
    .expect("the isolated call answers");
    let value = out.value();
    assert_eq!(value["text"], "hi");
    let child = value["pid"].as_u64().unwrap() as u32;
    assert_ne!(child, std::process::id(), "the tool ran in this process");
    assert!(!pid_alive(child), "the worker is gone after its call");
    assert_eq!(rx.try_recv().unwrap(), json!({"progress": "half"}));
}

fn work_left_behind_does_not_hold_the_answer_back() {
    let rt = runtime();
    let registry = leak(registry(ExecutionPolicy::default()));
    let out = within(&rt, 30, async move {
        registry.call("leaves-work-behind", json!({}), CallOptions::default()).await
    })
    .unwrap();
    assert_eq!(out.value(), json!(7));
}

fn a_call_inside_a_worker_runs_in_that_worker() {
    let rt = runtime();
    let registry = leak(registry(ExecutionPolicy::default()));
    let out = within(&rt, 30, async move {
        registry.call("calls-nested", json!({}), CallOptions::default()).await
    })
    .unwrap()
    .value();
    assert_eq!(out["outer"], out["inner"], "{out}");
    assert_ne!(out["outer"], json!(std::process::id()));
}

fn a_worker_that_never_answers_fails_the_call_saying_why() {
    let rt = runtime();
    let not_a_worker = WorkerCommand {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), "exit 3".into()],
    };
    let misconfigured = leak(registry(ExecutionPolicy::default().worker(not_a_worker)));
    let err = within(&rt, 30, async move {
        misconfigured.call("where-am-i", json!({"text": "x"}), CallOptions::default()).await
    })
    .unwrap_err();
    assert!(
        err.message()
            .contains("it exited with status 3 without answering (is `tool_core::isolate::worker_main()`"),
        "{}",
        err.message()
    );
    still_serves(&rt, leak(registry(ExecutionPolicy::default())));
}

fn stack_overflow_fails_the_call_only() {
    let rt = runtime();
    let registry = leak(registry(ExecutionPolicy::default().process_limits(limits(1024, 30))));
    let err = within(&rt, 30, async move {
        registry.call("overflow", json!({}), CallOptions::default()).await
    })
    .unwrap_err();
    assert!(
        err.message().contains("the tool's process died: stack overflow"),
        "{}",
        err.message()
    );
    assert_eq!(err.tool(), Some("overflow"));
    assert_eq!(err.details().unwrap()["process"]["reason"], "stack_overflow");
    still_serves(&rt, registry);
}

fn abort_fails_the_call_only() {
    let rt = runtime();
    let registry = leak(registry(ExecutionPolicy::default().process_limits(limits(1024, 30))));
    let err = within(&rt, 30, async move {
        registry.call("abort-now", json!({}), CallOptions::default()).await
    })
    .unwrap_err();
    assert!(
        err.message().contains("the tool's process died: it aborted (signal 6, SIGABRT)"),
        "{}",
        err.message()
    );
    still_serves(&rt, registry);
}

fn out_of_memory_fails_the_call_only() {
    let rt = runtime();
    let registry = leak(registry(ExecutionPolicy::default().process_limits(limits(512, 30))));
    let err = within(&rt, 60, async move {
        registry.call("hog-memory", json!({}), CallOptions::default()).await
    })
    .unwrap_err();
    assert!(
        err.message()
            .contains("the tool's process died: out of memory (the limit is 512 MiB)"),
        "{}",
        err.message()
    );
    assert_eq!(err.details().unwrap()["process"]["reason"], "out_of_memory");
    still_serves(&rt, registry);
}

fn cpu_time_limit_kills_a_spinning_call() {
    let rt = runtime();
    let registry = leak(registry(ExecutionPolicy::default().process_limits(limits(1024, 1))));
    let err = within(&rt, 60, async move {
        registry.call("spin-isolated", json!({}), CallOptions::default()).await
    })
    .unwrap_err();
    assert!(
        err.message()
            .contains("the tool's process died: it used up its CPU-time limit of 1 s"),
        "{}",
        err.message()
    );
    still_serves(&rt, registry);
}

fn a_panic_in_the_child_is_the_usual_panic_error() {
    let rt = runtime();
    let registry = leak(registry(ExecutionPolicy::default()));
    let err = within(&rt, 30, async move {
        registry.call("panics-isolated", json!({}), CallOptions::default()).await
    })
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Panic);
    assert!(err.message().contains("it panicked (deliberate)"), "{}", err.message());
}

fn a_suspension_crosses_the_boundary() {
    let rt = runtime();
    let registry = leak(registry(ExecutionPolicy::default()));
    let err = within(&rt, 30, async move {
        registry.call("suspends-isolated", json!({}), CallOptions::default()).await
    })
    .unwrap_err();
    assert!(err.message().contains("suspended itself"), "{}", err.message());
    assert_eq!(err.details(), Some(&json!({"question": "go on?"})));
}

/// Calls `spin-isolated` until its pid is announced, then ends the call with `stop`; the
/// error and the child's pid.
fn spin_then(rt: &tokio::runtime::Runtime, options: CallOptions, cancel: Option<CancellationToken>) -> (ToolError, u32) {
    let registry = leak(registry(ExecutionPolicy::default().process_limits(limits(1024, 60))));
    let (tx, rx) = mpsc::channel();
    let options = options.writer(Writer::new(move |chunk| {
        let _ = tx.send(chunk);
    }));
    let (done_tx, done_rx) = mpsc::channel();
    rt.spawn(async move {
        let _ = done_tx.send(registry.call("spin-isolated", json!({}), options).await);
    });
    let announced = rx.recv_timeout(Duration::from_secs(30)).expect("the worker announces its pid");
    let pid = announced["pid"].as_u64().unwrap() as u32;
    assert!(pid_alive(pid));
    if let Some(token) = cancel {
        token.cancel();
    }
    let err = done_rx.recv_timeout(Duration::from_secs(30)).expect("the call ends").unwrap_err();
    (err, pid)
}

fn cancelling_an_isolated_call_kills_its_process() {
    let rt = runtime();
    let token = CancellationToken::new();
    let (err, pid) = spin_then(&rt, CallOptions::default().cancellation(token.clone()), Some(token));
    assert_eq!(err.kind(), ErrorKind::Aborted);
    assert!(err.message().contains("its process was killed"), "{}", err.message());
    assert!(!pid_alive(pid), "the worker {pid} still exists after the cancellation");
}

fn a_timed_out_isolated_call_kills_its_process() {
    let rt = runtime();
    let (err, pid) = spin_then(&rt, CallOptions::default().timeout(Duration::from_millis(1500)), None);
    assert_eq!(err.kind(), ErrorKind::Aborted);
    assert!(
        err.message().contains("timed out after 1500 ms; its process was killed"),
        "{}",
        err.message()
    );
    assert!(!pid_alive(pid), "the worker {pid} still exists after the timeout");
}

fn spinning_blocking_tools_do_not_delay_an_async_call() {
    spinners_do_not_delay_an_async_call(ExecutionPolicy::default().blocking_threads(2), "spin-blocking");
}

fn with_blocking_tools_all_an_unmarked_spinner_does_not_delay_an_async_call() {
    // The quick call goes to the pool too: leave it a thread.
    let policy = ExecutionPolicy::default().blocking_threads(3).blocking_tools(BlockingTools::All);
    spinners_do_not_delay_an_async_call(policy, "spin-plain");
}

/// Two spinning calls of `id` and, while they spin, a quick async call that must answer.
fn spinners_do_not_delay_an_async_call(policy: ExecutionPolicy, id: &'static str) {
    let rt = runtime();
    // Two async workers, and two spinning bodies: on the workers they would hold both.
    let registry = leak(registry(policy));
    let token = CancellationToken::new();
    let (before_spin, before_stop) = (SPINNING.load(Ordering::SeqCst), STOPPED.load(Ordering::SeqCst));
    let mut spinners = Vec::new();
    for _ in 0..2 {
        let options = CallOptions::default().cancellation(token.clone());
        spinners.push(rt.spawn(async move { registry.call(id, json!({}), options).await }));
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while SPINNING.load(Ordering::SeqCst) < before_spin + 2 {
        assert!(Instant::now() < deadline, "the spinners did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = within(
        &rt,
        10,
        async move { registry.call("quick", json!({}), CallOptions::default()).await },
    )
    .unwrap();
    assert_eq!(out.value(), json!("quick"));
    assert_eq!(
        SPINNING.load(Ordering::SeqCst),
        before_spin + 2,
        "the spinners ended before the quick call"
    );
    assert!(spinners.iter().all(|s| !s.is_finished()));
    token.cancel();
    for spinner in spinners {
        let err = within(&rt, 10, spinner).unwrap().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Aborted);
    }
    // The work ended, not just the response: both bodies saw the cancellation and stopped.
    let deadline = Instant::now() + Duration::from_secs(10);
    while STOPPED.load(Ordering::SeqCst) < before_stop + 2 {
        assert!(Instant::now() < deadline, "the spinning bodies went on after the cancellation");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn dropping_a_blocking_call_stops_its_body() {
    let rt = runtime();
    let registry = leak(registry(ExecutionPolicy::default()));
    let (before_spin, before_stop) = (SPINNING.load(Ordering::SeqCst), STOPPED.load(Ordering::SeqCst));
    let call = rt.spawn(async move { registry.call("spin-blocking", json!({}), CallOptions::default()).await });
    let deadline = Instant::now() + Duration::from_secs(30);
    while SPINNING.load(Ordering::SeqCst) < before_spin + 1 {
        assert!(Instant::now() < deadline, "the spinner did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    // The caller goes away (a client that disconnected): the body sees it.
    call.abort();
    let deadline = Instant::now() + Duration::from_secs(10);
    while STOPPED.load(Ordering::SeqCst) < before_stop + 1 {
        assert!(Instant::now() < deadline, "the body went on after its caller went away");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn with_isolate_tools_all_every_linked_tool_runs_in_a_child() {
    let rt = runtime();
    let me = std::process::id();
    let here = DynamicTool::builder("pid-dynamic", "Says which process it ran in")
        .handler(|_, _| async { Ok(json!(std::process::id())) })
        .unwrap();
    let plain = leak(registry(ExecutionPolicy::default()));
    let all = leak(registry(ExecutionPolicy::default().isolate_tools(IsolateTools::All)));
    all.insert(here).unwrap();
    let pid = |registry: &'static Registry, id: &'static str| {
        within(&rt, 30, async move { registry.call(id, json!({}), CallOptions::default()).await })
            .unwrap()
            .value()
    };
    assert_eq!(pid(plain, "pid-here"), json!(me));
    let isolated = pid(all, "pid-here");
    assert!(isolated.as_u64().is_some_and(|p| p != u64::from(me)), "{isolated}");
    // A tool defined at run time cannot be found by a worker: it stays in process.
    assert_eq!(pid(all, "pid-dynamic"), json!(me));
}

fn cancellation_drops_an_async_body() {
    let rt = runtime();
    let registry = leak(registry(ExecutionPolicy::default()));
    for id in ["waits-forever", "waits-forever-blocking"] {
        let before = DROPPED.load(Ordering::SeqCst);
        let token = CancellationToken::new();
        let options = CallOptions::default().cancellation(token.clone());
        let call = rt.spawn(async move { registry.call(id, json!({}), options).await });
        std::thread::sleep(Duration::from_millis(200));
        assert!(!call.is_finished(), "{id} ended by itself");
        token.cancel();
        let err = within(&rt, 10, call).unwrap().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Aborted, "{id}");
        let deadline = Instant::now() + Duration::from_secs(10);
        while DROPPED.load(Ordering::SeqCst) < before + 1 {
            assert!(Instant::now() < deadline, "{id}: the body's future was not dropped");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

// ---- the harness ----------------------------------------------------------------------------

type Test = (&'static str, fn());

const TESTS: &[Test] = &[
    (
        "isolated_call_runs_in_a_child_and_forwards_chunks",
        isolated_call_runs_in_a_child_and_forwards_chunks,
    ),
    (
        "work_left_behind_does_not_hold_the_answer_back",
        work_left_behind_does_not_hold_the_answer_back,
    ),
    (
        "a_call_inside_a_worker_runs_in_that_worker",
        a_call_inside_a_worker_runs_in_that_worker,
    ),
    (
        "a_worker_that_never_answers_fails_the_call_saying_why",
        a_worker_that_never_answers_fails_the_call_saying_why,
    ),
    ("stack_overflow_fails_the_call_only", stack_overflow_fails_the_call_only),
    ("abort_fails_the_call_only", abort_fails_the_call_only),
    ("out_of_memory_fails_the_call_only", out_of_memory_fails_the_call_only),
    ("cpu_time_limit_kills_a_spinning_call", cpu_time_limit_kills_a_spinning_call),
    (
        "a_panic_in_the_child_is_the_usual_panic_error",
        a_panic_in_the_child_is_the_usual_panic_error,
    ),
    ("a_suspension_crosses_the_boundary", a_suspension_crosses_the_boundary),
    (
        "cancelling_an_isolated_call_kills_its_process",
        cancelling_an_isolated_call_kills_its_process,
    ),
    (
        "a_timed_out_isolated_call_kills_its_process",
        a_timed_out_isolated_call_kills_its_process,
    ),
    (
        "spinning_blocking_tools_do_not_delay_an_async_call",
        spinning_blocking_tools_do_not_delay_an_async_call,
    ),
    (
        "with_blocking_tools_all_an_unmarked_spinner_does_not_delay_an_async_call",
        with_blocking_tools_all_an_unmarked_spinner_does_not_delay_an_async_call,
    ),
    (
        "with_isolate_tools_all_every_linked_tool_runs_in_a_child",
        with_isolate_tools_all_every_linked_tool_runs_in_a_child,
    ),
    ("dropping_a_blocking_call_stops_its_body", dropping_a_blocking_call_stops_its_body),
    ("cancellation_drops_an_async_body", cancellation_drops_an_async_body),
];

/// This suite's tests, named `SUITE::TEST`. They run one at a time (a lock of their own): some
/// time a spinning body against an async call, and every one starts worker processes.
pub fn trials(suite: &str) -> Vec<libtest_mimic::Trial> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    crate::support::child_cli::trials_one_at_a_time(suite, TESTS, &ONE_AT_A_TIME)
}
