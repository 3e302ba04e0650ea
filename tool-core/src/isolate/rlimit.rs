//! What a worker does to itself before it runs a body (Unix): resource limits, no core files,
//! and standard output kept for the exchange alone.

use std::fs::File;
use std::io;
use std::os::fd::FromRawFd;

use super::ProcessLimits;

/// Sets `RLIMIT_AS` and `RLIMIT_CPU` (soft at the limit, hard one second later: `SIGXCPU`
/// first, `SIGKILL` if that is caught) and `RLIMIT_CORE` to zero.
pub(super) fn apply(limits: &ProcessLimits) -> io::Result<()> {
    set(libc::RLIMIT_CORE, 0, 0)?;
    if let Some(bytes) = limits.memory_bytes {
        set(libc::RLIMIT_AS, bytes, bytes)?;
    }
    if let Some(seconds) = limits.cpu_seconds {
        set(libc::RLIMIT_CPU, seconds, seconds.saturating_add(1))?;
    }
    Ok(())
}

#[cfg(target_os = "linux")]
type Resource = libc::__rlimit_resource_t;
#[cfg(not(target_os = "linux"))]
type Resource = libc::c_int;

fn set(resource: Resource, soft: u64, hard: u64) -> io::Result<()> {
    let clamp = |v: u64| libc::rlim_t::try_from(v).unwrap_or(libc::RLIM_INFINITY);
    let limit = libc::rlimit {
        rlim_cur: clamp(soft),
        rlim_max: clamp(hard),
    };
    // SAFETY: `limit` is a valid, initialised `rlimit` that outlives the call.
    if unsafe { libc::setrlimit(resource, &limit) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Takes standard output for the exchange: returns a handle on it, and points descriptor 1 at
/// standard error, so whatever the body prints cannot corrupt the answer.
pub(super) fn take_stdout() -> io::Result<File> {
    // SAFETY: `dup` and `dup2` only copy descriptors; 1 and 2 are open in a process whose
    // parent gave it pipes for both.
    let kept = unsafe { libc::dup(1) };
    if kept < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::dup2(2, 1) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `kept` is a fresh descriptor that nothing else owns.
    Ok(unsafe { File::from_raw_fd(kept) })
}
