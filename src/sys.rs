//! The few system calls mcpspec makes itself, with safe signatures: non-blocking pipes,
//! signals to process groups and to pinned processes, seeing a child's exit without
//! reaping it, the child-subreaper flag, reaping. Every `unsafe` block of the crate is
//! here, and so is every platform difference.

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
/// Only while the group's leader is an unreaped child of this process (see the contract
/// below): after the reap the number may lead a stranger's group.
pub fn kill_group(pgid: i32, sig: i32) {
    if pgid > 0 {
        // SAFETY: kill(2) with a negative pid signals a group; no memory is involved.
        unsafe {
            libc::kill(-pgid, sig);
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

// ---------------------------------------------------------------------------
// Processes that cannot be mistaken for another.
//
// Contract: a pid or process-group id names *our* process only while that process is
// not reaped; once reaped, the kernel may hand the number to anyone (pid_max can be
// 32768). So mcpspec (1) never reaps a server before its group and tree are cleaned up
// ([`exit_status_unreaped`] sees the exit and leaves a zombie that holds both numbers),
// and (2) signals any other process — one found in `/proc` — only through a
// [`Pinned`] handle, which reaches the process it was opened on or nothing.
// Linux: a pidfd (`pidfd_open`, `pidfd_send_signal`, `waitid(P_PIDFD)`, kernel ≥ 5.3).
// Elsewhere (and on older kernels) `Pinned::open` fails and callers signal only the
// server's own group, which rule (1) keeps safe; there is no `/proc` walk there anyway.

/// One process pinned by a pidfd (Linux): every signal reaches it or nothing, even after
/// its pid is reused.
#[derive(Debug)]
pub struct Pinned {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::OwnedFd,
    pid: i32,
}

impl Pinned {
    /// Pin the process that has `pid` now. Verify afterwards that it is the one you meant
    /// (read `/proc/<pid>` *after* this call, then check [`Pinned::alive`]: a process
    /// still alive at that point had that pid all along).
    pub fn open(pid: i32) -> std::io::Result<Pinned> {
        if pid <= 0 {
            return Err(std::io::Error::from(std::io::ErrorKind::InvalidInput));
        }
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::FromRawFd;
            // SAFETY: pidfd_open(2) takes two integers and returns a new descriptor (or -1).
            let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: the descriptor was just created and is owned by nothing else.
            let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) };
            Ok(Pinned { fd, pid })
        }
        #[cfg(not(target_os = "linux"))]
        {
            Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
        }
    }

    /// The pid it had when pinned.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Send `sig` to the pinned process (0: only check). False once it is reaped.
    pub fn signal(&self, sig: i32) -> bool {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: pidfd_send_signal(2) on a descriptor we own, with a null siginfo.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    self.fd.as_raw_fd(),
                    sig,
                    std::ptr::null::<libc::siginfo_t>(),
                    0,
                )
            };
            r == 0
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = sig;
            false
        }
    }

    /// Not reaped yet (a zombie counts): its pid still names it.
    pub fn alive(&self) -> bool {
        self.signal(0)
    }

    /// Reap it if it is an exited child of this process (never blocks). True once reaped
    /// or when it is not (or no longer) a child.
    pub fn reap(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: waitid(2) writes into a zeroed local siginfo_t.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: as above; P_PIDFD names exactly the pinned process.
            let r = unsafe {
                libc::waitid(
                    libc::P_PIDFD,
                    self.fd.as_raw_fd() as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOHANG,
                )
            };
            // With WNOHANG and no exited child, waitid returns 0 and leaves si_pid 0.
            r != 0 || info_pid(&info) != 0
        }
        #[cfg(not(target_os = "linux"))]
        {
            true
        }
    }

    /// The descriptor, readable once the process has exited (Linux).
    #[cfg(target_os = "linux")]
    pub fn exit_fd(&self) -> std::io::Result<std::fs::File> {
        Ok(std::fs::File::from(self.fd.try_clone()?))
    }
}

#[cfg(target_os = "linux")]
fn info_pid(info: &libc::siginfo_t) -> i32 {
    // SAFETY: reading the pid of a siginfo_t filled in by waitid(2) (or zeroed).
    unsafe { info.si_pid() }
}

#[cfg(target_os = "linux")]
fn info_status(info: &libc::siginfo_t) -> i32 {
    // SAFETY: reading the status of a siginfo_t filled in by waitid(2).
    unsafe { info.si_status() }
}

#[cfg(not(target_os = "linux"))]
fn info_pid(info: &libc::siginfo_t) -> i32 {
    info.si_pid
}

#[cfg(not(target_os = "linux"))]
fn info_status(info: &libc::siginfo_t) -> i32 {
    info.si_status
}

/// The exit status of child `pid` once it has exited, *without reaping it* (`waitid` with
/// `WNOWAIT`, POSIX): the zombie keeps its pid and process-group id ours until
/// [`reap`]. `Ok(None)` while it runs; an error if it is not (or no longer) our child.
pub fn exit_status_unreaped(pid: i32) -> std::io::Result<Option<std::process::ExitStatus>> {
    use std::os::unix::process::ExitStatusExt;
    // SAFETY: waitid(2) writes into a zeroed local siginfo_t.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if info_pid(&info) == 0 {
        return Ok(None);
    }
    // Back to a wait(2) status word, which `ExitStatus` is made of.
    let status = info_status(&info);
    let raw = match info.si_code {
        libc::CLD_EXITED => (status & 0xff) << 8,
        libc::CLD_DUMPED => (status & 0x7f) | 0x80,
        _ => status & 0x7f,
    };
    Ok(Some(std::process::ExitStatus::from_raw(raw)))
}
