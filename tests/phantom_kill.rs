//! The phantom SIGKILL (#27 §4). A server's pid is also its process-group id, and both
//! name it only until it is reaped: pids come round within seconds on a busy machine, so
//! a group kill or a `/proc` walk by a pid recorded earlier can hit whoever holds that
//! number now — another mcpspec's server, or any process of the machine.
//!
//! The stress here: several mcpspec processes at once, each running many scenarios at
//! `--jobs` above the core count, against servers that start slowly (a shell that sleeps,
//! then Python), Python alone, and ones that exit at once; beside them a
//! churn of short-lived *sentinel* processes that the runs did not start, each leading its
//! own process group (so a stale group kill reaches them) and some with a child (so a
//! stale `/proc` walk reaches that). Not one sentinel may die of SIGKILL, and no run may
//! report a server killed by a signal.
//!
//! `PHANTOM_MCPSPEC=/path/to/mcpspec` runs it against another build (an older one, to see
//! it fail). `PHANTOM_SECONDS` changes how long the runs are repeated (default 40).
// Linux only: /proc, strace, and sentinels started through `sh`.
#![cfg(target_os = "linux")]

mod common;

use std::fs;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use common::{mcpspec, repo_root};

/// mcpspec processes running at once.
const RUNS_AT_ONCE: usize = 4;
/// Scenario files per run (each one starts its own server).
const SCENARIOS: usize = 30;
/// Above the cores of any CI machine this runs on.
const JOBS: &str = "6";
/// Threads spawning sentinels.
const CHURN_THREADS: usize = 3;
const SIGKILL: i32 = 9;
/// Outer limit for one mcpspec run; one that reaches it hung.
const RUN_LIMIT: Duration = Duration::from_secs(120);

fn binary() -> PathBuf {
    std::env::var_os("PHANTOM_MCPSPEC").map_or_else(mcpspec, PathBuf::from)
}

fn repeat_for() -> Duration {
    let secs = std::env::var("PHANTOM_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    Duration::from_secs(secs)
}

/// What the sentinel churn saw.
#[derive(Default)]
struct Churn {
    started: AtomicUsize,
    /// Sentinels (or their children) that died of a signal nobody here sent.
    killed: AtomicUsize,
}

/// Sentinels spawned at once by one churn thread (then all waited for).
const BATCH: usize = 16;

/// Spawn sentinels until `stop`: each leads its own process group and lives a moment to a
/// few hundred milliseconds (a `sh` that runs `sleep`, so it has a child too); each is
/// waited for here and must exit normally.
fn churn(stop: Arc<AtomicBool>, seen: Arc<Churn>, seed: usize) {
    let mut n = seed;
    while !stop.load(Ordering::Relaxed) {
        let mut batch = Vec::with_capacity(BATCH);
        for _ in 0..BATCH {
            n = n.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            // Mostly very short lives (they cycle the pids), some longer ones (exposure).
            let script = match (n >> 16) % 8 {
                0 => "sleep 0.3; exit 0",
                1 | 2 => "sleep 0.05; exit 0",
                _ => "exit 0",
            };
            let child = Command::new("sh")
                .args(["-c", script])
                .process_group(0)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            if let Ok(child) = child {
                seen.started.fetch_add(1, Ordering::Relaxed);
                batch.push((child, script));
            }
        }
        if batch.is_empty() {
            thread::sleep(Duration::from_millis(5));
        }
        for (mut child, script) in batch {
            let Ok(status) = child.wait() else { continue };
            // `sh` exits with 128 + n when its `sleep` child was killed by signal n.
            if status.signal().is_some() || status.code() == Some(128 + SIGKILL) {
                eprintln!("sentinel {} died: {status:?} ({script})", child.id());
                seen.killed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// A directory of `count` scenarios, two requests each.
fn scenarios(dir: &Path, count: usize) {
    for i in 0..count {
        let text = format!(
            "scenario: churn-{i:03}\nsteps:\n  - name: lists tools\n    request: {{ method: tools/list }}\n  - name: pings\n    request: {{ method: ping }}\n"
        );
        fs::write(dir.join(format!("churn-{i:03}.yaml")), text).expect("scenario file");
    }
}

struct RunResult {
    target: &'static str,
    code: i32,
    output: String,
}

fn run(kind: &'static str, target: &str, scenarios: &Path) -> RunResult {
    let work = tempfile::tempdir().expect("tempdir");
    let json = work.path().join("result.json");
    let junit = work.path().join("result.xml");
    let mut child = Command::new(binary())
        .arg("run")
        .arg(scenarios)
        .args(["--stdio", target, "--era", "legacy", "--timeout", "30s"])
        .args(["--jobs", JOBS, "--json"])
        .arg(&json)
        .arg("--junit")
        .arg(&junit)
        .current_dir(repo_root())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mcpspec starts");
    let stdout = common::drain(child.stdout.take().expect("stdout"));
    let stderr = common::drain(child.stderr.take().expect("stderr"));
    let code = common::wait_limited(&mut child, RUN_LIMIT)
        .unwrap_or_else(|| panic!("mcpspec hung: still running after {RUN_LIMIT:?} ({kind})"));
    let mut output = format!(
        "{}\n{}",
        stdout.join().expect("stdout"),
        stderr.join().expect("stderr")
    );
    // The reports carry the same messages as the console, and more detail.
    for report in [&json, &junit] {
        output.push_str(&fs::read_to_string(report).unwrap_or_default());
    }
    RunResult {
        target: kind,
        code,
        output,
    }
}

#[test]
fn no_process_the_runs_did_not_start_is_ever_killed() {
    let dir = tempfile::tempdir().expect("tempdir");
    scenarios(dir.path(), SCENARIOS);
    let python = format!(
        "sh -c 'sleep 0.2; exec python3 {} correct'",
        repo_root().join("tests/hostile/server.py").display()
    );
    let plain = format!(
        "python3 {} correct",
        repo_root().join("tests/hostile/server.py").display()
    );
    let targets: [(&'static str, String); RUNS_AT_ONCE] = [
        ("slow python", python.clone()),
        ("python", plain),
        ("exits at once", "sh -c 'exit 0'".into()),
        ("slow python", python),
    ];

    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Churn::default());
    let churners: Vec<_> = (0..CHURN_THREADS)
        .map(|i| {
            let (stop, seen) = (stop.clone(), seen.clone());
            thread::spawn(move || churn(stop, seen, i + 1))
        })
        .collect();

    let started = Instant::now();
    let mut results = Vec::new();
    let mut rounds = 0;
    while rounds == 0 || started.elapsed() < repeat_for() {
        rounds += 1;
        let runs: Vec<_> = targets
            .iter()
            .map(|(kind, target)| {
                let (kind, target, dir) = (*kind, target.clone(), dir.path().to_path_buf());
                thread::spawn(move || run(kind, &target, &dir))
            })
            .collect();
        results.extend(runs.into_iter().map(|r| r.join().expect("run thread")));
    }
    stop.store(true, Ordering::Relaxed);
    for c in churners {
        c.join().expect("churn thread");
    }
    let servers = results.len() * SCENARIOS;
    eprintln!(
        "{rounds} rounds, {} mcpspec runs, {servers} scenarios (a server each), {} sentinels, {:?}",
        results.len(),
        seen.started.load(Ordering::Relaxed),
        started.elapsed()
    );

    let killed = seen.killed.load(Ordering::Relaxed);
    assert_eq!(killed, 0, "{killed} sentinel processes were killed");
    for r in &results {
        for needle in ["signal: 9", "signal 9", "SIGKILL", "killed by signal"] {
            assert!(
                !r.output.contains(needle),
                "`{needle}` in the output of a run against the {}:\n{}",
                r.target,
                r.output
            );
        }
        // The servers that work must pass every scenario: a phantom kill fails one.
        let want = if r.target == "exits at once" { 4 } else { 0 };
        assert_eq!(r.code, want, "{} run:\n{}", r.target, r.output);
    }
}

/// The order of the system calls, which needs no luck: under `strace -f`, no process
/// group and no pid is signalled after the process that held it was reaped (main's code
/// traced `wait4(P) = P`, then `kill(-P, SIGKILL)`: on a busy machine that reaches whoever
/// got P since). Skipped where `strace` cannot run.
#[test]
fn no_group_or_pid_is_signalled_after_its_reap() {
    let can_trace = Command::new("strace")
        .args(["-o", "/dev/null", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !can_trace {
        eprintln!("skipped: strace cannot run here");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = dir.path().join("scenarios");
    fs::create_dir(&cases).expect("scenario dir");
    scenarios(&cases, 8);
    let python = format!(
        "python3 {} setsid-child",
        repo_root().join("tests/hostile/server.py").display()
    );
    for target in [python.as_str(), "sh -c 'exit 0'"] {
        let trace = dir.path().join("trace");
        let out = Command::new("strace")
            .args(["-f", "-qq", "-e", "signal=none", "-e"])
            .arg("trace=kill,wait4,waitid,clone,clone3,fork,vfork")
            .arg("-o")
            .arg(&trace)
            .arg(binary())
            .arg("run")
            .arg(&cases)
            .args(["--stdio", target, "--era", "legacy", "--timeout", "30s"])
            .args(["--jobs", "4"])
            .current_dir(repo_root())
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .output()
            .expect("strace runs mcpspec");
        let text = fs::read_to_string(&trace).expect("the trace");
        let stale = stale_signals(&text);
        assert!(
            stale.is_empty(),
            "signals sent after the reap of their target ({target}):\n{}\n--- mcpspec:\n{}{}",
            stale.join("\n"),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The `kill(…)` lines of an `strace -f` trace whose target (a pid, or a group id) was
/// reaped earlier and not handed to a new process since.
fn stale_signals(trace: &str) -> Vec<String> {
    let mut reaped = std::collections::HashSet::new();
    let mut stale = Vec::new();
    for line in trace.lines() {
        let call = line.split_once(' ').map_or(line, |(_, c)| c).trim_start();
        let result = call
            .rsplit_once(" = ")
            .and_then(|(_, r)| r.split_whitespace().next()?.parse::<i64>().ok());
        if let Some(rest) = call.strip_prefix("kill(") {
            let target = rest
                .split([',', ' '])
                .next()
                .and_then(|t| t.parse::<i64>().ok());
            if let Some(t) = target
                && t.abs() > 1
                && reaped.contains(&t.abs())
            {
                stale.push(line.to_string());
            }
        } else if call.contains("wait4") {
            if let Some(pid) = result.filter(|&p| p > 0) {
                reaped.insert(pid);
            }
        } else if call.contains("waitid") && !call.contains("WNOWAIT") && result == Some(0) {
            let pid = call
                .split_once("si_pid=")
                .and_then(|(_, r)| r.split([',', '}']).next()?.parse::<i64>().ok());
            if let Some(pid) = pid.filter(|&p| p > 0) {
                reaped.insert(pid);
            }
        } else if ["clone", "fork", "vfork"]
            .iter()
            .any(|c| call.contains(&format!("{c}(")) || call.contains(&format!("{c} resumed")))
        {
            // A new process: its pid is live again.
            if let Some(pid) = result.filter(|&p| p > 0) {
                reaped.remove(&pid);
            }
        }
    }
    stale
}
