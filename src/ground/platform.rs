//! Every platform difference of mcpspec, and every `unsafe` block of the crate (two: the
//! child's one `pre_exec`, and `getrusage`, which rustix lacks): nothing outside this
//! module names an operating system, `libc`, `std::os::*` or `/proc`.
//! One of three implementations is compiled (build.rs sets the cfg):
//!
//! - **Linux** (`cfg(mcpspec_linux)`): POSIX as below, plus pidfds, the child-subreaper
//!   flag and `/proc` (`platform/linux.rs`; `platform/fallback.rs` elsewhere).
//! - **Other Unix** (macOS, the BSDs; and Linux built with `MCPSPEC_PORTABLE=1` or
//!   `--cfg mcpspec_portable`, which is how the fallback is tested on Linux): POSIX only.
//! - **Windows**.
//!
//! # Contract
//! - [`Server::spawn`] starts a server with piped stdio in a group of its own. Unix: a new
//!   process group whose id is the server's pid. Windows: `CREATE_NEW_PROCESS_GROUP`
//!   (the console's Ctrl-C does not reach it; it is not a unit of killing there).
//!   Linux: the server also gets SIGKILL when mcpspec dies, even by SIGKILL
//!   (`PR_SET_PDEATHSIG`, set by a spawner thread that lives as long as mcpspec).
//!   Elsewhere nothing ties them: a server that ignores the end of its stdin outlives
//!   a mcpspec killed outright.
//! - [`signal_group`] / [`Server::signal`] stop the server and its group, and only while
//!   the server is not reaped (until then its id names it and nobody else). Unix: SIGTERM
//!   or SIGKILL to the process group. Windows: [`Stop::Term`] sends nothing (there is no
//!   such signal; closing stdin is the graceful request there); [`Stop::Kill`] runs
//!   `taskkill /T /F` on the server (it and the descendants Windows records under it),
//!   then terminates it through its handle, which keeps the pid from being reused.
//! - [`Server::exited`] sees the exit status *without* reaping. Linux: the pidfd turns
//!   readable. Other Unix: `waitid(WNOWAIT)` on each SIGCHLD and every 100 ms. Windows:
//!   the handle is polled every 50 ms (a handle held open is Windows' zombie).
//! - [`ServerCgroup`]: a cgroup (v2) per server, killed whole (`cgroup.kill`). Linux,
//!   where mcpspec may make one; elsewhere (and with `MCPSPEC_NO_CGROUPS=1`) `create`
//!   gives `None` and the walk below is all there is.
//! - [`BeforeExec`]: what the server's process does between `fork` and `exec`, one
//!   `pre_exec` for all of it (Linux; nothing elsewhere): enter its cgroup, `--sandbox`
//!   ([`BeforeExec::sandbox`]: user, network and mount namespaces of its own: loopback
//!   only, every mount read-only but a private tmpfs HOME; needs unprivileged user
//!   namespaces and `mount_setattr`, 5.12; elsewhere, or where the kernel refuses,
//!   [`sandbox_unavailable`] says why and nothing runs unsandboxed), then the tie to
//!   mcpspec's life.
//! - [`Pinned`], [`children`], [`parent_of`], [`environ`], [`become_subreaper`]: the
//!   whole-tree cleanup (`signals::tree`). Linux only. Elsewhere `Pinned::open` fails and
//!   the walks find nothing, so a server's cleanup is the group kill alone. **Weaker
//!   there:** a descendant that leaves the server's group (`setsid`, a daemonizing
//!   double fork) outlives the run on other Unix; on Windows, one whose parent exited
//!   before the kill is not found by `taskkill /T`.
//! - [`PipeWriter`] / [`PipeReader`]: the server's stdin and stdout, never blocking the
//!   runtime. `try_write` takes what fits now, `write` waits until the server takes some,
//!   `read` waits for output. tokio's own child pipes: Unix, `O_NONBLOCK` pipes on its
//!   reactor; Windows, its pipe threads (a write is taken into tokio's buffer at once; a server that
//!   never reads holds one blocking thread until it is killed).
//! - [`PipeProbe`]: how many bytes wait unread in the server's stderr pipe. Unix: a
//!   duplicated descriptor and `FIONREAD`. Windows: none (`of` gives `None`), so a report's
//!   stderr tail may miss lines the server wrote just before its last reply.
//! - [`Interrupts`]: what stops a run. Unix: SIGINT (exit 130) and SIGTERM (143).
//!   Windows: Ctrl-C (130) and Ctrl-Break (143).
//! - [`signal_of`], [`signal_name`]: the signal that ended a process (Unix); none on
//!   Windows, where a killed process has an exit code only.
//! - [`split_command`]: a `--stdio` command line into words. Unix: POSIX shell quoting.
//!   Windows: words split at blanks, `"…"` groups, backslashes are literal (paths).
//! - [`command`], [`find_program`]: the program of a stdio server. Unix: as `execvp`
//!   finds it. Windows: a name without extension is looked up on `PATH` with each
//!   `PATHEXT` extension first, so `npx` runs `npx.cmd` as it would in a console.
//! - [`process_cpu`]: the CPU time mcpspec itself used (user, system). Unix:
//!   `getrusage(RUSAGE_SELF)`. Windows: none.
//! - [`special_file_kind`]: FIFOs, devices and sockets are named on Unix; elsewhere
//!   they are all a "special file".
#![allow(
    unsafe_code,
    reason = "the one home of the crate's system calls; `unsafe_code` is denied everywhere else (Cargo.toml [lints])"
)]

#[cfg(not(mcpspec_linux))]
mod fallback;
#[cfg(not(mcpspec_linux))]
use fallback as tree_impl;
#[cfg(mcpspec_linux)]
mod linux;
#[cfg(mcpspec_linux)]
use linux as tree_impl;

mod pipes;
#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as os;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as os;

pub use os::{
    Interrupts, PipeProbe, Server, command, is_stop_signal, process_cpu, signal_group, signal_name,
    signal_of, special_file_kind, split_command,
};
pub use pipes::{PipeReader, PipeWriter};
pub use tree_impl::{
    BeforeExec, Pinned, ServerCgroup, become_subreaper, children, environ, parent_of,
    sandbox_unavailable,
};

#[cfg(test)]
pub use os::{exited_with, killed_by};

/// What [`Server::spawn`] hands over: the server and its stdio.
pub struct Spawned {
    pub server: Server,
    pub stdin: Option<std::process::ChildStdin>,
    pub stdout: Option<std::process::ChildStdout>,
    pub stderr: Option<std::process::ChildStderr>,
}

/// How a server is asked to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Asked to exit (SIGTERM; nothing on Windows).
    Term,
    /// Killed (SIGKILL; `taskkill /F` and `TerminateProcess` on Windows).
    Kill,
}

/// The file a stdio command's program names: a path as given (it has a folder part), or
/// the first match on `PATH`; on Windows each `PATHEXT` extension is tried too.
pub fn find_program(program: &str) -> Option<std::path::PathBuf> {
    let given = std::path::Path::new(program);
    let with_ext = |p: &std::path::Path| {
        os::program_extensions(p)
            .into_iter()
            .map(|ext| {
                let mut name = p.as_os_str().to_owned();
                name.push(ext);
                std::path::PathBuf::from(name)
            })
            .find(|c| c.is_file())
    };
    if given.components().count() > 1 {
        return with_ext(given);
    }
    std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).find_map(|dir| with_ext(&dir.join(given))))
}

/// A `--stdio` command line as words: split at blanks, `"…"` groups (`\"` is a quote
/// inside), backslashes are literal so that `C:\srv\server.exe` stays a path.
#[cfg(any(windows, test))]
fn split_windows_command(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'"') => {
                chars.next();
                word.get_or_insert_with(String::new).push('"');
            }
            '"' => {
                quoted = !quoted;
                word.get_or_insert_with(String::new);
            }
            c if c.is_whitespace() && !quoted => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    if quoted {
        return Err("missing closing quote".into());
    }
    words.extend(word);
    Ok(words)
}

/// The CPU time of the calling thread, for tests that bound the work something costs: a
/// busy machine does not stretch it as it stretches wall time (a linear-time guard took
/// 80 s of wall clock beside two busy loops and a build). Off Unix, wall time since the
/// first call.
#[cfg(test)]
pub fn thread_cpu() -> std::time::Duration {
    #[cfg(unix)]
    {
        use rustix::time::{ClockId, DynamicClockId, clock_gettime_dynamic};
        if let Ok(ts) = clock_gettime_dynamic(DynamicClockId::Known(ClockId::ThreadCPUTime)) {
            return std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
        }
    }
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_command_lines_keep_backslashes_and_group_quotes() {
        let words = |l: &str| split_windows_command(l).unwrap();
        assert_eq!(
            words(r"C:\srv\server.exe --flag  x"),
            [r"C:\srv\server.exe", "--flag", "x"]
        );
        assert_eq!(
            words(r#""C:\Program Files\srv\s.exe" --name "a b" """#),
            [r"C:\Program Files\srv\s.exe", "--name", "a b", ""]
        );
        assert_eq!(words(r#"node -e \"x\""#), ["node", "-e", "\"x\""]);
        assert!(split_windows_command(r#"node "unclosed"#).is_err());
    }

    #[test]
    fn a_program_given_as_a_path_is_found_only_if_it_is_a_file() {
        let me = std::env::current_exe().unwrap();
        assert_eq!(find_program(me.to_str().unwrap()), Some(me.clone()));
        let missing = me.with_file_name("no-such-program-here");
        assert_eq!(find_program(missing.to_str().unwrap()), None);
    }
}
