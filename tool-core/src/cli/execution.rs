//! `serve`'s options for where tool bodies run: the blocking pool and process isolation.

use clap::ValueEnum;

use crate::isolate::{BlockingTools, ExecutionPolicy, IsolateTools, ProcessLimits};

/// Where the served tools' bodies run (see `tool_core::isolate`).
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Tool execution")]
pub(super) struct ExecutionArgs {
    /// Which tool bodies run on the bounded blocking pool.
    ///
    /// Instead of the async workers: those marked `#[tool(blocking)]`, or all (then a tool that
    /// awaits network I/O holds a pool thread while it waits: size the pool with
    /// --blocking-threads).
    #[arg(value_name = "WHICH", long, value_enum, default_value_t = BlockingArg::Marked)]
    blocking_tools: BlockingArg,
    /// How many blocking bodies run at once (default: the machine's parallelism, at least 2).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    blocking_threads: Option<u32>,
    /// Run every tool in a child process with resource limits.
    ///
    /// Every `#[tool]`, not only those marked `isolate = "process"`, runs in a child process of
    /// this binary: a crash, abort or out-of-memory fails only its call, and a cancelled or
    /// timed-out call's process is killed.
    #[arg(long)]
    isolate_tools: bool,
    /// Address space of an isolated tool's process, in MiB (0: no limit).
    #[arg(long, value_name = "MIB", default_value_t = 2048)]
    isolate_memory_mib: u64,
    /// CPU time of an isolated tool's process, in seconds (0: no limit).
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    isolate_cpu_seconds: u64,
    /// Stack of the thread an isolated tool runs on, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1024))]
    isolate_stack_mib: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum BlockingArg {
    /// Those marked `#[tool(blocking)]`.
    Marked,
    /// Every tool.
    All,
}

impl ExecutionArgs {
    /// The registry's policy these options ask for.
    pub(super) fn policy(&self) -> ExecutionPolicy {
        let mut policy = ExecutionPolicy::default()
            .blocking_tools(match self.blocking_tools {
                BlockingArg::Marked => BlockingTools::Marked,
                BlockingArg::All => BlockingTools::All,
            })
            .isolate_tools(if self.isolate_tools {
                IsolateTools::All
            } else {
                IsolateTools::Marked
            })
            .process_limits(ProcessLimits {
                memory_bytes: (self.isolate_memory_mib > 0).then(|| self.isolate_memory_mib.saturating_mul(1 << 20)),
                cpu_seconds: (self.isolate_cpu_seconds > 0).then_some(self.isolate_cpu_seconds),
                stack_bytes: self.isolate_stack_mib as usize * (1 << 20),
            });
        if let Some(n) = self.blocking_threads {
            policy = policy.blocking_threads(n as usize);
        }
        policy
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Args {
        #[command(flatten)]
        execution: ExecutionArgs,
    }

    fn policy(args: &[&str]) -> Result<ExecutionPolicy, clap::Error> {
        Args::try_parse_from(std::iter::once("serve").chain(args.iter().copied())).map(|a| a.execution.policy())
    }

    #[test]
    fn the_flags_make_the_policy() {
        let p = policy(&[]).unwrap();
        assert_eq!((p.blocking(), p.isolation()), (BlockingTools::Marked, IsolateTools::Marked));
        assert_eq!(p.limits(), ProcessLimits::default());
        let p = policy(&[
            "--blocking-tools",
            "all",
            "--blocking-threads",
            "3",
            "--isolate-tools",
            "--isolate-memory-mib",
            "0",
            "--isolate-cpu-seconds",
            "5",
            "--isolate-stack-mib",
            "2",
        ])
        .unwrap();
        assert_eq!(
            (p.blocking(), p.isolation(), p.threads()),
            (BlockingTools::All, IsolateTools::All, 3)
        );
        let limits = ProcessLimits {
            memory_bytes: None,
            cpu_seconds: Some(5),
            stack_bytes: 2 << 20,
        };
        assert_eq!(p.limits(), limits);
        for bad in [
            &["--blocking-threads", "0"][..],
            &["--blocking-tools", "some"],
            &["--isolate-stack-mib", "0"],
        ] {
            assert!(policy(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
