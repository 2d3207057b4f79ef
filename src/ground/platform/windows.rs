//! Windows: no process groups to signal, no SIGTERM, no zombies. A process handle held
//! open keeps the pid from being reused (Windows' zombie), so the server's handle is held
//! until its cleanup is done; the kill is `taskkill /T /F` (the server and the
//! descendants Windows records under it), then `TerminateProcess` through the handle.
//! See the contract in [`crate::ground::platform`].
//!
//! Not compiled on the machines mcpspec is developed on: the release workflow's Windows
//! job builds it and runs the test suite.

use std::os::windows::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{BeforeExec, Spawned, Stop};

/// `CREATE_NEW_PROCESS_GROUP` (winbase.h): the console's Ctrl-C reaches mcpspec, not the
/// server, as a process group does on Unix.
const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;

/// Kill process `pid` and its tree. Term sends nothing: Windows has no such request; the
/// server was asked to exit by the close of its stdin. Only while its handle is held by
/// this process (the pid cannot name another process then).
pub fn signal_group(pid: i32, stop: Stop) {
    if pid <= 0 || stop == Stop::Term {
        return;
    }
    let _ = Command::new("taskkill")
        .args(["/T", "/F", "/PID", &pid.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// A server process, its handle held until [`Server::reap`].
#[derive(Clone, Debug)]
pub struct Server {
    pid: i32,
    child: Arc<Mutex<Option<Child>>>,
}

impl Server {
    /// Start `cmd` (stdio already piped by the caller) in a new process group.
    /// `_before`: nothing to do before the start here (see `fallback::BeforeExec`).
    pub fn spawn(cmd: &mut Command, _before: BeforeExec) -> std::io::Result<Spawned> {
        let mut child = cmd.creation_flags(CREATE_NEW_PROCESS_GROUP).spawn()?;
        let pid = child.id() as i32;
        let (stdin, stdout, stderr) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take());
        Ok(Spawned {
            server: Server {
                pid,
                child: Arc::new(Mutex::new(Some(child))),
            },
            stdin,
            stdout,
            stderr,
        })
    }

    /// A server that never ran (tests).
    #[cfg(test)]
    pub fn for_tests() -> Server {
        Server {
            pid: 0,
            child: Arc::new(Mutex::new(None)),
        }
    }

    pub fn id(&self) -> i32 {
        self.pid
    }

    fn child(&self) -> std::sync::MutexGuard<'_, Option<Child>> {
        self.child.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Kill it and its tree ([`Stop::Term`]: nothing). Only before [`Server::reap`]. The
    /// tree only while it runs: `taskkill` no longer finds an exited process.
    pub fn signal(&self, stop: Stop) {
        if stop != Stop::Kill {
            return;
        }
        let running = matches!(self.child().as_mut().map(Child::try_wait), Some(Ok(None)));
        if running {
            signal_group(self.pid, stop);
        }
        if let Some(child) = self.child().as_mut() {
            let _ = child.kill();
        }
    }

    /// Wait for it to exit, keeping its handle (polled every 50 ms). `None` once reaped.
    pub async fn exited(&self) -> Option<ExitStatus> {
        loop {
            let state = self.child().as_mut().map(Child::try_wait);
            match state {
                Some(Ok(Some(status))) => return Some(status),
                Some(Ok(None)) => {}
                Some(Err(_)) | None => return None,
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Close its handle (its pid may be reused from then on).
    pub fn reap(&self) {
        self.child().take();
    }

    /// Closing the handle names only this process: same as [`Server::reap`].
    pub fn reap_if_pinned(&self) {
        self.reap();
    }
}

/// No probe of a pipe's pending bytes on Windows (`of` gives `None`): a report's stderr
/// tail is what the stderr thread has kept so far (see the contract).
pub struct PipeProbe;

impl PipeProbe {
    pub fn of(_pipe: &std::process::ChildStderr) -> Option<PipeProbe> {
        None
    }

    pub fn pending(&self) -> Option<usize> {
        None
    }
}

/// Ctrl-C and Ctrl-Break, received by mcpspec.
pub struct Interrupts {
    c: tokio::signal::windows::CtrlC,
    brk: tokio::signal::windows::CtrlBreak,
}

impl Interrupts {
    /// Listen from now on (in a runtime); `None` if the handlers cannot be installed.
    pub fn new() -> Option<Interrupts> {
        Some(Interrupts {
            c: tokio::signal::windows::ctrl_c().ok()?,
            brk: tokio::signal::windows::ctrl_break().ok()?,
        })
    }

    /// The next one: (exit code, name).
    pub async fn recv(&mut self) -> (i32, &'static str) {
        tokio::select! {
            _ = self.c.recv() => (130, "Ctrl-C"),
            _ = self.brk.recv() => (143, "Ctrl-Break"),
        }
    }
}

/// Windows ends a process with an exit code, never a signal.
pub fn signal_of(_status: ExitStatus) -> Option<i32> {
    None
}

pub fn is_stop_signal(_stop: Stop, _sig: i32) -> bool {
    false
}

pub fn signal_name(_sig: i32) -> &'static str {
    "a signal"
}

/// A `--stdio` command line as words (see [`super::split_windows_command`]).
pub fn split_command(line: &str) -> Result<Vec<String>, String> {
    super::split_windows_command(line)
}

/// The command that runs `program`: a name without extension is looked up with
/// `PATHEXT` (`npx` is `npx.cmd`), which `CreateProcess` alone would not do.
pub fn command(program: &str) -> Command {
    match std::path::Path::new(program).extension() {
        None => {
            let found: std::path::PathBuf =
                super::find_program(program).unwrap_or_else(|| program.into());
            Command::new(found)
        }
        Some(_) => Command::new(program),
    }
}

/// The extensions a program name may stand for: none when it has one, else `PATHEXT`'s.
pub(super) fn program_extensions(program: &std::path::Path) -> Vec<String> {
    if program.extension().is_some() {
        return vec![String::new()];
    }
    let pathext = std::env::var("PATHEXT").unwrap_or_else(|_| ".COM;.EXE;.BAT;.CMD".into());
    pathext
        .split(';')
        .filter(|e| !e.is_empty())
        .map(|e| e.to_ascii_lowercase())
        .collect()
}

/// Windows does not tell pipes and devices apart through `FileType`.
pub fn special_file_kind(_kind: &std::fs::FileType) -> &'static str {
    "special file"
}

/// No signal kills a process on Windows (tests).
#[cfg(test)]
pub fn killed_by(_stop: Stop) -> Option<ExitStatus> {
    None
}

/// The status of a process that exited with `code` (tests).
#[cfg(test)]
pub fn exited_with(code: i32) -> ExitStatus {
    use std::os::windows::process::ExitStatusExt;
    ExitStatus::from_raw(code as u32)
}

/// The CPU time this process has used: not measured on Windows.
pub fn process_cpu() -> Option<(std::time::Duration, std::time::Duration)> {
    None
}
