//! Why a worker ended without answering, in words a model can read: from its exit status and
//! the last lines it wrote to standard error (Unix).

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use serde_json::{Value, json};

use super::ProcessLimits;

/// The cause of a worker's death: a short phrase and a stable name, with the signal or code.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Death {
    /// What the model reads (`stack overflow`, `killed by signal 9 (SIGKILL)`, …).
    pub phrase: String,
    /// `stack_overflow`, `out_of_memory`, `cpu_time_limit`, `signal` or `exit`.
    pub reason: &'static str,
    /// The signal that ended it.
    pub signal: Option<i32>,
    /// Its exit code, when it exited.
    pub code: Option<i32>,
}

impl Death {
    /// The details a model (or an application) gets with the error.
    pub fn details(&self) -> Value {
        json!({"process": {"reason": self.reason, "signal": self.signal, "exit_code": self.code}})
    }
}

fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        _ => return None,
    })
}

/// Reads the cause from the status and the standard-error tail.
pub(super) fn diagnose(status: ExitStatus, stderr: &str, limits: &ProcessLimits) -> Death {
    let (signal, code) = (status.signal(), status.code());
    let death = |phrase: String, reason| Death {
        phrase,
        reason,
        signal,
        code,
    };
    if stderr.contains("has overflowed its stack") {
        let mib = limits.stack_bytes as f64 / f64::from(1 << 20);
        return death(format!("stack overflow (the stack is {mib} MiB)"), "stack_overflow");
    }
    if stderr.contains("memory allocation of") {
        let limit = limits
            .memory_bytes
            .map(|b| format!(" (the limit is {} MiB)", b >> 20))
            .unwrap_or_default();
        return death(format!("out of memory{limit}"), "out_of_memory");
    }
    match (signal, code) {
        (Some(libc::SIGXCPU), _) => {
            let limit = limits.cpu_seconds.map(|s| format!(" of {s} s")).unwrap_or_default();
            death(format!("it used up its CPU-time limit{limit}"), "cpu_time_limit")
        }
        (Some(libc::SIGABRT), _) => death("it aborted (signal 6, SIGABRT)".to_owned(), "signal"),
        (Some(libc::SIGSEGV), _) => death("segmentation fault (signal 11, SIGSEGV)".to_owned(), "signal"),
        (Some(s), _) => {
            let name = signal_name(s).map(|n| format!(" ({n})")).unwrap_or_default();
            death(format!("killed by signal {s}{name}"), "signal")
        }
        (None, Some(c)) => death(
            format!(
                "it exited with status {c} without answering (is `tool_core::isolate::worker_main()` the first thing its `main` does?)"
            ),
            "exit",
        ),
        (None, None) => death("it ended without answering".to_owned(), "exit"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signalled(signal: i32) -> ExitStatus {
        ExitStatus::from_raw(signal)
    }

    #[test]
    fn causes_are_named() {
        let limits = ProcessLimits::default();
        let overflow = "\nthread 'tool x' has overflowed its stack\nfatal runtime error: stack overflow\n";
        let d = diagnose(signalled(libc::SIGABRT), overflow, &limits);
        assert_eq!((d.reason, d.signal), ("stack_overflow", Some(libc::SIGABRT)));
        assert_eq!(d.phrase, "stack overflow (the stack is 8 MiB)");
        let d = diagnose(signalled(libc::SIGABRT), "memory allocation of 1048576 bytes failed\n", &limits);
        assert_eq!(d.phrase, "out of memory (the limit is 2048 MiB)");
        let d = diagnose(signalled(libc::SIGXCPU), "", &limits);
        assert_eq!(
            (d.reason, d.phrase.as_str()),
            ("cpu_time_limit", "it used up its CPU-time limit of 60 s")
        );
        assert_eq!(
            diagnose(signalled(libc::SIGKILL), "", &limits).phrase,
            "killed by signal 9 (SIGKILL)"
        );
        assert_eq!(
            diagnose(signalled(libc::SIGABRT), "", &limits).phrase,
            "it aborted (signal 6, SIGABRT)"
        );
        let exited = diagnose(ExitStatus::from_raw(3 << 8), "", &limits);
        assert_eq!((exited.reason, exited.code), ("exit", Some(3)));
        assert_eq!(exited.details()["process"]["exit_code"], 3);
    }
}
