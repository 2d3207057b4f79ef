//! Fast loops against the example server: `run --last-failed` reruns only what failed last
//! time; `run --watch` reruns the affected scenarios when a file changes and stops cleanly
//! on Ctrl-C, with no server left behind.

mod common;

use std::path::Path;
use std::process::{Child, Command};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{Run, drain, example_server, mcpspec, process, processes_in, run_in};

const PASSES: &str = r#"
scenario: a
steps:
  - name: lists
    request: { method: tools/list }
    expect:
      - { path: "$.tools", type: array }
"#;

const FAILS: &str = r#"
scenario: b
steps:
  - name: wrong code
    request: { method: tools/call, params: { name: no_such_tool, arguments: {} } }
    expect:
      - error: { code: -32000 }
"#;

const FIXED: &str = r#"
scenario: b
steps:
  - name: wrong code
    request: { method: tools/call, params: { name: no_such_tool, arguments: {} } }
    expect:
      - error: { code: -32602 }
"#;

/// A scenario whose call takes 30 s: a run stays busy until it is interrupted.
const SLOW: &str = r#"
scenario: b
steps:
  - name: slow call
    request: { method: tools/call, params: { name: slow, arguments: { ms: 30000 } } }
    expect:
      - isError: false
"#;

/// A project folder: its `mcpspec.yaml` (no paths, no target: the flags give them) is where
/// the state file goes.
fn project(b: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mcpspec.yaml"), "timeout: 60s\n").unwrap();
    std::fs::write(dir.path().join("a.yaml"), PASSES).unwrap();
    std::fs::write(dir.path().join("b.yaml"), b).unwrap();
    dir
}

fn server() -> String {
    example_server().display().to_string()
}

fn run_here(dir: &Path, extra: &[&str]) -> Run {
    let server = server();
    let mut args = vec!["run", "a.yaml", "b.yaml", "--stdio", &server];
    args.extend(extra);
    run_in(dir, &args, &[])
}

/// Suite lines (`PASS  a@auto …`) of a console report, as `STATUS id`.
fn suites(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|l| l.starts_with("PASS ") || l.starts_with("FAIL ") || l.starts_with("ERROR "))
        .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn last_failed_reruns_only_what_failed() {
    let dir = project(FAILS);
    let first = run_here(dir.path(), &[]);
    assert_eq!(first.code, 1, "{first:?}");
    assert_eq!(suites(&first.stdout), ["PASS a@auto", "FAIL b@auto"]);
    let state = std::fs::read_to_string(dir.path().join(".mcpspec/last-run.json")).unwrap();
    assert!(
        state.contains("\"b@auto\"") && state.contains("wrong code"),
        "{state}"
    );

    // Only the failure reruns.
    let again = run_here(dir.path(), &["--last-failed"]);
    assert_eq!(again.code, 1, "{again:?}");
    assert_eq!(suites(&again.stdout), ["FAIL b@auto"], "{again:?}");
    assert!(again.stderr.contains("rerunning 1 item(s)"), "{again:?}");

    // Fixed: it reruns alone, passes, and the record is empty.
    std::fs::write(dir.path().join("b.yaml"), FIXED).unwrap();
    let fixed = run_here(dir.path(), &["--lf"]);
    assert_eq!(fixed.code, 0, "{fixed:?}");
    assert_eq!(suites(&fixed.stdout), ["PASS b@auto"], "{fixed:?}");

    // Nothing failed last time: everything runs, and it says so.
    let all = run_here(dir.path(), &["--last-failed"]);
    assert_eq!(all.code, 0, "{all:?}");
    assert_eq!(suites(&all.stdout), ["PASS a@auto", "PASS b@auto"]);
    assert!(
        all.stderr
            .contains("no failure recorded: running everything"),
        "{all:?}"
    );
}

/// A filtered run keeps the record of what it did not run.
#[test]
fn a_partial_run_keeps_the_other_failures() {
    let dir = project(FAILS);
    assert_eq!(run_here(dir.path(), &[]).code, 1);
    let only_a = run_here(dir.path(), &["--filter", "a"]);
    assert_eq!(only_a.code, 0, "{only_a:?}");
    let again = run_here(dir.path(), &["--last-failed"]);
    assert_eq!(suites(&again.stdout), ["FAIL b@auto"], "{again:?}");
}

/// `mcpspec run --watch` in `dir`, its stderr lines on a channel, stdout collected.
struct Watch {
    child: Child,
    lines: mpsc::Receiver<String>,
    stdout: std::thread::JoinHandle<String>,
    seen: Vec<String>,
}

impl Watch {
    fn start(dir: &Path, extra: &[&str]) -> Watch {
        let mut child = process::start(
            Command::new(mcpspec())
                .args(["run", "a.yaml", "b.yaml", "--stdio", &server(), "--watch"])
                .args(["--timeout", "60s"])
                .args(extra)
                .current_dir(dir),
        );
        let stdout = drain(child.stdout.take().unwrap());
        let (lines, _) = process::lines(child.stderr.take().unwrap());
        Watch {
            child,
            lines,
            stdout,
            seen: Vec::new(),
        }
    }

    /// Wait for the `n`th stderr line containing `text`.
    fn wait_for(&mut self, text: &str, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.seen.iter().filter(|l| l.contains(text)).count() < n {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(_) => {
                    let _ = self.child.kill();
                    panic!(
                        "no `{text}` (#{n}) on stderr; so far:\n{}",
                        self.seen.join("\n")
                    );
                }
            }
        }
    }

    /// SIGINT, then the exit code and stdout.
    fn interrupt(mut self) -> (Option<i32>, String, Vec<String>) {
        process::signal(self.child.id(), "INT");
        let deadline = Instant::now() + Duration::from_secs(15);
        let code = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status.code();
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("mcpspec --watch did not exit after SIGINT");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        self.seen.extend(self.lines.try_iter());
        (code, self.stdout.join().unwrap(), self.seen)
    }
}

fn assert_no_servers(dir: &Path) {
    // The servers run in the project folder (mcpspec's cwd): none may outlive mcpspec.
    if let Err(left) = process::processes_left_in(dir, Duration::from_secs(5)) {
        panic!("processes left running in {}: {left:?}", dir.display());
    }
}

/// Save a file so that its modification is seen even within one mtime tick.
fn save(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

#[test]
#[cfg(unix)] // SIGINT through `kill`
fn watch_reruns_the_changed_scenario_and_stops_on_sigint() {
    let dir = project(FIXED);
    let server_src = dir.path().join("server.py");
    std::fs::write(&server_src, "# v1\n").unwrap();
    let mut w = Watch::start(dir.path(), &["--watch-path", "server.py"]);
    w.wait_for("--watch: watching", 1);
    // Edit a.yaml (one more step: also a different size): only `a` reruns.
    save(
        &dir.path().join("a.yaml"),
        &format!("{PASSES}  - name: lists again\n    request: {{ method: tools/list }}\n"),
    );
    w.wait_for("--watch: watching", 2);
    assert!(
        w.seen
            .iter()
            .any(|l| l.contains("changed:") && l.contains("a.yaml")),
        "{:?}",
        w.seen
    );
    // A change to a --watch-path (the server's sources): everything reruns.
    save(&server_src, "# version 2\n");
    w.wait_for("--watch: watching", 3);
    // Ctrl-C while waiting: exits at once with 130.
    let (code, stdout, stderr) = w.interrupt();
    assert_eq!(code, Some(130), "stderr: {stderr:?}\nstdout: {stdout}");
    assert_eq!(
        suites(&stdout),
        [
            "PASS a@auto",
            "PASS b@auto",
            "PASS a@auto",
            "PASS a@auto",
            "PASS b@auto"
        ],
        "{stdout}"
    );
    assert!(
        stdout.contains("2 steps: 2 passed"),
        "the edited a.yaml ran: {stdout}"
    );
    assert_no_servers(dir.path());
}

#[test]
#[cfg(target_os = "linux")] // SIGINT through `kill`; leftover servers read from /proc
fn watch_interrupted_mid_run_leaves_no_server() {
    let dir = project(FIXED);
    let mut w = Watch::start(dir.path(), &[]);
    w.wait_for("--watch: watching", 1);
    save(&dir.path().join("b.yaml"), SLOW);
    w.wait_for("--watch: changed", 1);
    // Wait until the slow call's server runs, then Ctrl-C.
    // (mcpspec itself runs there too, with the server's path in its arguments.)
    let server = server();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !processes_in(dir.path())
        .iter()
        .any(|(_, cmd)| cmd.starts_with(&server))
    {
        assert!(Instant::now() < deadline, "the server never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    let (code, _stdout, stderr) = w.interrupt();
    assert_eq!(code, Some(130), "stderr: {stderr:?}");
    assert!(
        stderr.iter().any(|l| l.contains("interrupted")),
        "{stderr:?}"
    );
    assert_no_servers(dir.path());
}

/// Without a project configuration the state goes under the user's cache folder (one file
/// per working directory), not into whatever folder `run` is started from; `--last-failed`
/// finds it there.
#[test]
fn state_outside_a_project_goes_to_the_cache_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.yaml"), PASSES).unwrap();
    std::fs::write(dir.path().join("b.yaml"), FAILS).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let env = [("MCPSPEC_CACHE_DIR", cache.path().to_str().unwrap())];
    let server = server();
    let args = ["run", "a.yaml", "b.yaml", "--stdio", &server];
    let first = run_in(dir.path(), &args, &env);
    assert_eq!(first.code, 1, "{first:?}");
    assert!(
        !dir.path().join(".mcpspec").exists(),
        "state written into the working directory"
    );
    let states: Vec<_> = std::fs::read_dir(cache.path().join("last-run"))
        .unwrap()
        .collect();
    assert_eq!(states.len(), 1, "{states:?}");
    let mut again = args.to_vec();
    again.push("--last-failed");
    let second = run_in(dir.path(), &again, &env);
    assert_eq!(suites(&second.stdout), ["FAIL b@auto"], "{second:?}");
}
