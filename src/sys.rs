//! The few system calls mcpspec makes itself, with safe signatures: non-blocking pipes,
//! signals to process groups and processes, the child-subreaper flag, reaping adopted
//! orphans. Every `unsafe` block of the crate is here.

use std::os::fd::{AsRawFd, BorrowedFd};

/// Put a pipe end in non-blocking mode (tokio hands child pipes over blocking).
pub fn set_nonblocking(fd: BorrowedFd<'_>) -> std::io::Result<()> {
    let raw = fd.as_raw_fd();
    // SAFETY: fcntl(2) on a descriptor the caller borrows (it stays open for the call);
    // no memory is involved.
    let flags = unsafe { libc::fcntl(raw, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(raw, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Send `sig` to every process of group `pgid` (errors, e.g. an empty group, ignored).
pub fn kill_group(pgid: i32, sig: i32) {
    if pgid > 0 {
        // SAFETY: kill(2) with a negative pid signals a group; no memory is involved.
        unsafe {
            libc::kill(-pgid, sig);
        }
    }
}

/// Send `sig` to one process (errors, e.g. a process already gone, ignored).
pub fn kill(pid: i32, sig: i32) {
    if pid > 0 {
        // SAFETY: kill(2) on a single positive pid; no memory is involved.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

/// Make this process the reaper of its orphaned descendants (Linux): a server's
/// grandchild that double-forks or calls `setsid()` is re-parented to mcpspec instead of
/// init, so it can still be found under mcpspec and stopped. False where unsupported.
pub fn become_subreaper() -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl(2) PR_SET_CHILD_SUBREAPER takes an integer flag; no memory.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Reap `pid` if it is an exited child of this process (never blocks). True once reaped
/// or when it is not (or no longer) a child.
pub fn reap(pid: i32) -> bool {
    let mut status = 0;
    // SAFETY: waitpid(2) with WNOHANG writes the status into a local integer.
    let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    r != 0
}

/// Register a descriptor-owning `File` with the tokio reactor.
pub fn register(
    file: std::fs::File,
    interest: tokio::io::Interest,
) -> std::io::Result<tokio::io::unix::AsyncFd<std::fs::File>> {
    // SAFETY: the `File` owns its descriptor, which stays open for as long as the
    // `AsyncFd` that owns the `File`, and always reports that same descriptor.
    unsafe {
        Ok(tokio::io::unix::AsyncFd::register_with_interest(
            file, interest,
        )?)
    }
}
