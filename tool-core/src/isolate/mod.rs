//! Where a tool's body runs: on the async workers, on a bounded blocking pool, or in a child
//! process of the same binary.
//!
//! Owns [`ExecutionPolicy`] (a registry's server-wide choice, see
//! [`Registry::set_execution`](crate::Registry::set_execution)), the blocking pool, process
//! isolation (the parent side that starts, feeds, watches and kills a worker, and the worker
//! side, [`worker_main`]) and the diagnosis of a worker that died. It never validates anything
//! (the call has been validated before it gets here) and never decides what a call means.
//!
//! # Three places
//!
//! | placement | chosen by | what a runaway body does |
//! |---|---|---|
//! | the async workers | default | an `async fn` that awaits is fine; one that computes for seconds holds a worker thread and delays every other call on it |
//! | the blocking pool | `#[tool(blocking)]`, [`DynamicToolBuilder::blocking`](crate::tool::DynamicToolBuilder::blocking), or [`BlockingTools::All`] | holds one of the pool's threads: never an async worker, so unrelated calls go on |
//! | a child process | `#[tool(isolate = "process")]` or [`IsolateTools::All`] | a stack overflow, abort, out-of-memory or CPU-time kill fails that call; the server lives on |
//!
//! **The blocking pool.** The body's future is created as usual, then driven to completion
//! with `Handle::block_on` inside `tokio::task::spawn_blocking`: the body runs on a blocking
//! thread (its timers and I/O still served by the runtime's drivers), and a semaphore of
//! [`ExecutionPolicy::blocking_threads`] permits bounds how many run at once; a call beyond
//! that waits for a permit without occupying a thread. So as many runaway bodies as the pool
//! has threads make later blocking calls wait (async calls never do); a timeout with process
//! isolation bounds them for good. Without the `runtime` feature (or
//! outside a Tokio runtime) a blocking body runs where the call is awaited.
//!
//! **Timeout and cancellation end the work, not just the response.** An async body's future
//! is dropped the moment the call is cancelled or times out (on the blocking pool too: it is
//! raced against the cancellation on its own thread, and dropping the call cancels it). Rust
//! has no way to stop a thread from outside, so a body that never awaits stops only where it
//! checks: [`ToolContext::check_cancelled`](crate::ToolContext::check_cancelled) (`cx.check_cancelled()?`
//! in the loop, one atomic load). The hard guarantee is process isolation: a cancelled or
//! timed-out isolated call's process is killed (`SIGKILL`) and reaped before the call ends.
//!
//! **Process isolation** (feature `isolate`, on by default). The call's validated input,
//! request context and identity go as JSON over the child's standard input; the child is this
//! binary again (`std::env::current_exe()`, argument [`WORKER_ARG`]) and must call
//! [`worker_main`] first thing in `main` (`tool_core::cli::run()` does). It finds the tool in
//! its own [`Registry::global`](crate::Registry::global) (the same `#[tool]`, checked by its
//! source location), sets its limits ([`ProcessLimits`]: `RLIMIT_AS`, `RLIMIT_CPU`, no core
//! files) and runs the body on a thread with a bounded stack. What crosses back: the output
//! (with its model output and display/transcript views), an error, a suspension, the writer's
//! chunks (as they come) and MCP log and progress messages. What does not: MCP elicitation
//! and sampling (they fail with a message saying so), changes to the workflow state, and
//! anything the body keeps in memory. Tools defined at run time ([`DynamicTool`](crate::DynamicTool))
//! cannot be isolated (the child could not find them): [`IsolateTools::All`] leaves them in
//! process. Output on the child's standard output is moved to its standard error, so a
//! `println!` in a tool cannot corrupt the exchange.

#[cfg(all(feature = "isolate", unix))]
mod death;
#[cfg(feature = "isolate")]
mod parent;
#[cfg(feature = "runtime")]
mod pool;
#[cfg(all(feature = "isolate", unix))]
mod rlimit;
#[cfg(feature = "isolate")]
mod wire;
#[cfg(feature = "isolate")]
mod worker;

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

use crate::spec::{Isolation, ToolSpec};

#[cfg(feature = "isolate")]
pub(crate) use parent::run_in_child;
#[cfg(feature = "runtime")]
pub(crate) use pool::run_on_pool;
#[cfg(feature = "isolate")]
#[cfg_attr(docsrs, doc(cfg(feature = "isolate")))]
pub use worker::worker_main;

/// The argument that makes a binary a tool worker (see [`worker_main`]).
pub const WORKER_ARG: &str = "__toolsmith_worker";

/// Set in a worker's environment. A process that has it but never entered worker mode (its
/// `main` does not call [`worker_main`]) refuses to start workers: the call fails saying so,
/// instead of the program starting itself again and again.
pub const WORKER_ENV: &str = "TOOLSMITH_WORKER";

/// Set once this process became a tool worker ([`worker_main`]): every call runs right there
/// (never a worker of a worker).
static IN_WORKER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Marks this process as a tool worker.
#[cfg(feature = "isolate")]
fn become_worker() {
    IN_WORKER.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Which tools' bodies run on the blocking pool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BlockingTools {
    /// Those marked `#[tool(blocking)]` (or built with `DynamicToolBuilder::blocking`).
    #[default]
    Marked,
    /// Every tool: no body ever runs on the async workers.
    All,
}

/// Which tools run in a child process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum IsolateTools {
    /// Those marked `#[tool(isolate = "process")]`.
    #[default]
    Marked,
    /// Every `#[tool]` linked into the binary (tools defined at run time stay in process).
    All,
}

/// The limits of a tool's child process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessLimits {
    /// Address space (`RLIMIT_AS`), in bytes; `None` for no limit.
    pub memory_bytes: Option<u64>,
    /// CPU time (`RLIMIT_CPU`), in seconds; `None` for no limit.
    pub cpu_seconds: Option<u64>,
    /// Stack of the thread the body runs on, in bytes.
    pub stack_bytes: usize,
}

impl Default for ProcessLimits {
    /// 2 GiB of address space, 60 s of CPU time, an 8 MiB stack.
    fn default() -> Self {
        ProcessLimits {
            memory_bytes: Some(2 << 30),
            cpu_seconds: Some(60),
            stack_bytes: 8 << 20,
        }
    }
}

/// The program (and leading arguments) that starts a worker; by default this binary with
/// [`WORKER_ARG`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerCommand {
    /// The program.
    pub program: PathBuf,
    /// Its arguments (the worker reads its request from standard input).
    pub args: Vec<OsString>,
}

impl WorkerCommand {
    /// This binary as a worker: `current_exe() __toolsmith_worker`.
    pub fn current_exe() -> std::io::Result<Self> {
        Ok(WorkerCommand {
            program: std::env::current_exe()?,
            args: vec![WORKER_ARG.into()],
        })
    }
}

/// Where a call's body runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// On the task that awaits the call.
    Inline,
    /// On the bounded blocking pool.
    Blocking,
    /// In a child process.
    Process,
}

/// How a registry runs tool bodies: which go to the blocking pool and how large it is, which
/// run in a child process and with which limits.
///
/// ```
/// use tool_core::isolate::{BlockingTools, ExecutionPolicy, IsolateTools};
/// use tool_core::Registry;
/// let registry = Registry::new();
/// registry.set_execution(
///     ExecutionPolicy::default().blocking_tools(BlockingTools::All).blocking_threads(4).isolate_tools(IsolateTools::Marked),
/// );
/// assert_eq!(registry.execution().threads(), 4);
/// ```
#[derive(Debug, Clone)]
pub struct ExecutionPolicy {
    blocking: BlockingTools,
    threads: usize,
    pool: Arc<Semaphore>,
    isolate: IsolateTools,
    limits: ProcessLimits,
    worker: Option<WorkerCommand>,
}

impl Default for ExecutionPolicy {
    /// Marked tools only; a pool as large as the machine's parallelism (at least 2); default
    /// process limits; this binary as the worker.
    fn default() -> Self {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).max(2);
        ExecutionPolicy {
            blocking: BlockingTools::Marked,
            threads,
            pool: Arc::new(Semaphore::new(threads)),
            isolate: IsolateTools::Marked,
            limits: ProcessLimits::default(),
            worker: None,
        }
    }
}

impl ExecutionPolicy {
    /// Which tools' bodies run on the blocking pool.
    pub fn blocking_tools(mut self, which: BlockingTools) -> Self {
        self.blocking = which;
        self
    }

    /// How many blocking bodies may run at once (at least 1); later calls wait for a thread.
    pub fn blocking_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self.pool = Arc::new(Semaphore::new(self.threads));
        self
    }

    /// Which tools run in a child process.
    pub fn isolate_tools(mut self, which: IsolateTools) -> Self {
        self.isolate = which;
        self
    }

    /// The limits of each child process.
    pub fn process_limits(mut self, limits: ProcessLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The command that starts a worker (default: [`WorkerCommand::current_exe`]).
    pub fn worker(mut self, command: WorkerCommand) -> Self {
        self.worker = Some(command);
        self
    }

    /// Which tools' bodies run on the blocking pool.
    pub fn blocking(&self) -> BlockingTools {
        self.blocking
    }

    /// Which tools run in a child process.
    pub fn isolation(&self) -> IsolateTools {
        self.isolate
    }

    /// The size of the blocking pool.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The limits of each child process.
    pub fn limits(&self) -> ProcessLimits {
        self.limits
    }

    /// Where a call of the tool described by `spec` runs.
    pub(crate) fn placement(&self, spec: &ToolSpec) -> Placement {
        // In a worker, calls a body makes of other tools run right there too.
        if IN_WORKER.load(std::sync::atomic::Ordering::Relaxed) {
            return Placement::Inline;
        }
        let linked = !spec.source.file.is_empty();
        if spec.policy.isolate == Isolation::Process || (self.isolate == IsolateTools::All && linked) {
            Placement::Process
        } else if spec.policy.blocking || self.blocking == BlockingTools::All {
            Placement::Blocking
        } else {
            Placement::Inline
        }
    }

    /// The blocking pool's permits.
    #[cfg(feature = "runtime")]
    pub(crate) fn pool(&self) -> &Arc<Semaphore> {
        &self.pool
    }

    /// The worker command in force.
    #[cfg(feature = "isolate")]
    pub(crate) fn worker_command(&self) -> std::io::Result<WorkerCommand> {
        match &self.worker {
            Some(c) => Ok(c.clone()),
            None => WorkerCommand::current_exe(),
        }
    }
}
