//! One process harness for the tests that run mcpspec against misbehaving servers: spawn
//! with drained pipes, wait with an outer limit, and check that no process is left in a
//! server's working directory (killing leftovers, so a failing test leaves no junk).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::{drain, processes_in};

/// A running process whose stdout and stderr are read to their end on threads.
pub struct Spawned {
    pub child: Child,
    pub started: Instant,
    pub stdout: JoinHandle<String>,
    pub stderr: JoinHandle<String>,
}

/// What a finished process left.
#[derive(Debug)]
pub struct Finished {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub wall: Duration,
}

/// Start `command` with NO_COLOR, no stdin and both outputs piped (the caller reads them).
pub fn start(command: &mut Command) -> Child {
    command
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the process starts")
}

/// [`start`], with both outputs drained.
pub fn spawn(command: &mut Command) -> Spawned {
    let mut child = start(command);
    let started = Instant::now();
    let stdout = drain(child.stdout.take().expect("stdout"));
    let stderr = drain(child.stderr.take().expect("stderr"));
    Spawned {
        child,
        started,
        stdout,
        stderr,
    }
}

impl Spawned {
    /// Wait for the exit; `None` (after killing it) if it outlives `limit`.
    pub fn wait(self, limit: Duration) -> Option<Finished> {
        self.wait_watching(limit, |_| {})
    }

    /// [`Spawned::wait`], calling `tick` with the pid every few milliseconds meanwhile
    /// (to sample `/proc/PID/status`, say).
    pub fn wait_watching(mut self, limit: Duration, mut tick: impl FnMut(u32)) -> Option<Finished> {
        let pid = self.child.id();
        let code = loop {
            tick(pid);
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                break status.code().unwrap_or(-1);
            }
            if self.started.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        Some(Finished {
            code,
            wall: self.started.elapsed(),
            stdout: self.stdout.join().expect("stdout reader"),
            stderr: self.stderr.join().expect("stderr reader"),
        })
    }
}

/// Send `signal` (`INT`, `TERM`, `KILL`) to `pid`.
pub fn signal(pid: u32, signal: &str) {
    let sent = Command::new("kill")
        .args([format!("-{signal}"), pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success(), "kill -{signal} {pid} failed");
}

/// Kill every process whose working directory is `dir`.
pub fn kill_processes_in(dir: &Path) {
    for (pid, _) in processes_in(dir) {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
}

/// Wait up to `limit` for no process to keep `dir` as its working directory. What is
/// still there then is killed and returned.
pub fn processes_left_in(dir: &Path, limit: Duration) -> Result<(), Vec<(u32, String)>> {
    let deadline = Instant::now() + limit;
    loop {
        let left = processes_in(dir);
        if left.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            kill_processes_in(dir);
            return Err(left);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Read `pipe` line by line on a thread: each line goes to the receiver as it comes (to
/// wait for a progress line), and the whole text is the thread's result.
pub fn lines(
    pipe: impl std::io::Read + Send + 'static,
) -> (std::sync::mpsc::Receiver<String>, JoinHandle<String>) {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
            let _ = tx.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    (rx, reader)
}
