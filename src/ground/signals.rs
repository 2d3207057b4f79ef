//! Child process groups alive right now, so that Ctrl-C or SIGTERM on mcpspec takes
//! every server it started down with it; and the signal itself, for a run that writes its
//! reports before it exits.

pub mod tree;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

static GROUPS: LazyLock<Mutex<HashSet<i32>>> = LazyLock::new(|| Mutex::new(HashSet::new()));

/// The registry of server groups, locked. A server is spawned and registered under one
/// lock, so [`kill_all`] never finds a server it does not know to be a leader (it must not
/// reap one: only the server's transport may, after its own cleanup).
pub fn groups() -> std::sync::MutexGuard<'static, HashSet<i32>> {
    GROUPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Forget a group; only then may its leader be reaped.
pub fn unregister_group(pgid: i32) {
    groups().remove(&pgid);
}

/// SIGKILL every registered process group and every marked server process (on
/// interrupt). Under the registry's lock: a registered leader is not reaped yet, so its
/// group id is still its own.
pub fn kill_all() {
    let g = groups();
    for &p in g.iter() {
        crate::ground::platform::signal_group(p, crate::ground::platform::Stop::Kill);
    }
    crate::ground::platform::ServerCgroup::kill_all(&tree::cgroup_prefix());
    tree::kill_all_servers(&g);
}

/// Set by a run that writes its reports on interrupt (see [`defer_exit`]).
static DEFER: AtomicBool = AtomicBool::new(false);
/// The signal received: (exit code, name); `(0, "")` until then.
static RECEIVED: LazyLock<tokio::sync::watch::Sender<(i32, &'static str)>> =
    LazyLock::new(|| tokio::sync::watch::Sender::new((0, "")));

/// How long a run may take to write its reports after a signal before the process exits
/// anyway.
pub const GRACE: Duration = Duration::from_secs(2);

/// On a signal, let the run finish its reports (within [`GRACE`]) instead of exiting.
pub fn defer_exit() {
    DEFER.store(true, Ordering::SeqCst);
}

/// Undo [`defer_exit`]: nothing is running any more (`run --watch` between runs), so a
/// signal exits at once.
pub fn exit_at_once() {
    DEFER.store(false, Ordering::SeqCst);
}

/// The exit code of the signal received (130 SIGINT, 143 SIGTERM), if any.
pub fn received() -> Option<i32> {
    let (code, _) = *RECEIVED.borrow();
    (code != 0).then_some(code)
}

/// The name of the signal received (`SIGINT`), if any.
pub fn received_name() -> Option<&'static str> {
    let (code, name) = *RECEIVED.borrow();
    (code != 0).then_some(name)
}

/// Resolves with the signal's name once one is received.
pub async fn interrupted() -> String {
    let mut rx = RECEIVED.subscribe();
    match rx.wait_for(|(code, _)| *code != 0).await {
        Ok(got) => got.1.to_string(),
        Err(_) => std::future::pending().await,
    }
}

/// On SIGINT/SIGTERM (Ctrl-C/Ctrl-Break on Windows): kill the servers, then exit 130 / 143 — at once, or after the run
/// wrote its reports when it asked for that ([`defer_exit`]; a second signal, or
/// [`GRACE`] passing, exits at once).
pub fn install() {
    tokio::spawn(async {
        let Some(mut signals) = crate::ground::platform::Interrupts::new() else {
            return;
        };
        let (code, name) = signals.recv().await;
        // Before the kill: the run must see the signal before it sees servers die.
        RECEIVED.send_replace((code, name));
        kill_all();
        if !DEFER.load(Ordering::SeqCst) {
            errln!("mcpspec: interrupted; stopped all servers it started");
            std::process::exit(code);
        }
        errln!(
            "mcpspec: interrupted ({name}); stopped all servers it started, writing the reports"
        );
        std::thread::spawn(move || {
            std::thread::sleep(GRACE);
            kill_all();
            std::process::exit(code);
        });
        signals.recv().await;
        kill_all();
        std::process::exit(code);
    });
}
