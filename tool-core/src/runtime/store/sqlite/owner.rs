//! Whether the process that claimed a call is still alive (so a running call whose process died is
//! told apart as interrupted), and what identifies this process in a claim.

/// Whether the process that claimed a call is still running. No pid (or one that cannot be a
/// process id) means nobody holds the call.
pub(super) fn owner_alive(pid: Option<i64>, start: Option<&str>) -> bool {
    let pid = pid.and_then(|p| u32::try_from(p).ok()).filter(|&p| p > 0);
    pid.is_some_and(|pid| process_alive(pid, start))
}

/// A process's state letter and start time (clock ticks after boot, which tells it from a later
/// process given the same pid), from `/proc/<pid>/stat`.
#[cfg(target_os = "linux")]
pub(super) fn process_stat(pid: u32) -> Option<(char, String)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count fields after the last `)`.
    let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_whitespace();
    let state = fields.next()?.chars().next()?;
    Some((state, fields.nth(18)?.to_owned()))
}

#[cfg(not(target_os = "linux"))]
pub(super) fn process_stat(_pid: u32) -> Option<(char, String)> {
    None
}

#[cfg(target_os = "linux")]
fn process_alive(pid: u32, start: Option<&str>) -> bool {
    match process_stat(pid) {
        // Without procfs nothing can be told: holding the call beats running it twice.
        None => !std::path::Path::new("/proc/self").exists(),
        Some(('Z' | 'X' | 'x', _)) => false,
        Some((_, now)) => start.is_none_or(|s| s == now),
    }
}

#[cfg(all(unix, not(target_os = "linux")))]
fn process_alive(pid: u32, _start: Option<&str>) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    // SAFETY: signal 0 sends nothing; it only asks whether the process exists.
    let status = unsafe { libc::kill(pid, 0) };
    status == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Elsewhere liveness cannot be checked: a claim is held until released (never run twice).
#[cfg(not(unix))]
fn process_alive(_pid: u32, _start: Option<&str>) -> bool {
    true
}
