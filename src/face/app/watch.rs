//! `mcpspec run --watch`: run, then rerun whenever a watched file changes, until Ctrl-C.
//!
//! Watching is mtime/size polling (no notify crate: a few hundred files stat'ed four times a
//! second cost nothing next to a run, and polling works on every file system). A change to a
//! scenario file reruns the scenarios of that file; a change to anything else watched (the
//! configuration, the baseline, the stdio server's program, a `--watch-path`), or to a file
//! no scenario comes from (a `pack.yaml`, a schema file), reruns everything. Changes are
//! debounced: an editor's save or a build that writes in bursts gives one rerun.
//!
//! Between runs no server is alive (each run stops the servers it started), so Ctrl-C while
//! waiting exits at once (130); Ctrl-C during a run stops it as without --watch (reports
//! written) and ends the watch.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::face::cli::RunArgs;
use crate::face::select::canonical;

/// How often the watched files are stat'ed.
const POLL: Duration = Duration::from_millis(250);
/// A burst of writes ends when nothing changed for this long…
const QUIET: Duration = Duration::from_millis(300);
/// …or after this long in all.
const MAX_BURST: Duration = Duration::from_secs(3);
/// Files of these kinds under a scenario folder are watched (scenarios, packs, schemas).
const EXTENSIONS: &[&str] = &["yaml", "yml", "json"];

pub(super) fn watch(args: RunArgs) -> i32 {
    let mut next = args.clone();
    next.watch = false;
    loop {
        // Taken before the run: a file saved while it runs triggers the next one.
        let watched = Watched::of(&args);
        let before = watched.snapshot();
        let code = super::run(next.clone());
        if crate::ground::signals::received().is_some() {
            return code;
        }
        let Some(changed) = wait_for_change(&watched, before) else {
            // A signal while waiting exits in the handler; this is its fallback.
            return crate::ground::signals::received().unwrap_or(130);
        };
        // After the first run, --last-failed no longer narrows: the affected scenarios run.
        next.last_failed = false;
        next.only_files = if changed
            .iter()
            .any(|f| watched.whole_run.iter().any(|w| f.starts_with(w)))
        {
            Vec::new()
        } else {
            changed.iter().cloned().collect()
        };
        let shown: Vec<String> = changed.iter().map(|p| p.display().to_string()).collect();
        errln!("\n--watch: changed: {}; rerunning", shown.join(", "));
    }
}

/// What one watch cycle looks at.
struct Watched {
    /// Scenario files and folders (walked for [`EXTENSIONS`]).
    roots: Vec<PathBuf>,
    /// Files and folders whose change reruns everything.
    whole_run: BTreeSet<PathBuf>,
    /// Files mcpspec itself writes (reports, the --last-failed record): never a trigger.
    ignored: BTreeSet<PathBuf>,
}

impl Watched {
    /// From the arguments as the run sees them (with the configuration applied).
    fn of(args: &RunArgs) -> Watched {
        let mut applied = args.clone();
        let mut config_file = None;
        if let Ok(Some(config)) = crate::face::config::Config::find(args.config.as_deref()) {
            let name = applied.target_name.clone();
            let _ = config.apply(&mut applied, name.as_deref());
            config_file = Some(PathBuf::from(&config.file.name));
        }
        let roots = applied
            .paths
            .iter()
            .map(|p| crate::face::select::split_file_line(p).0)
            .filter(|p| p.exists())
            .map(|p| canonical(&p))
            .collect();
        let mut whole_run: BTreeSet<PathBuf> = BTreeSet::new();
        whole_run.extend(config_file.iter().map(|p| canonical(p)));
        whole_run.extend(applied.expected_failures.iter().map(|p| canonical(p)));
        whole_run.extend(applied.watch_paths.iter().map(|p| canonical(p)));
        if let Some(program) = applied
            .target
            .stdio
            .as_deref()
            .and_then(|cmd| crate::ground::platform::split_command(cmd).ok())
            .and_then(|words| words.into_iter().next())
            .and_then(|program| crate::ground::platform::find_program(&program))
        {
            whole_run.insert(canonical(&program));
        }
        let mut ignored: BTreeSet<PathBuf> =
            [&applied.junit, &applied.json, &applied.write_baseline]
                .into_iter()
                .flatten()
                .map(|p| absolute(p))
                .collect();
        ignored.insert(absolute(&crate::face::last_run::path_for(
            args.config.as_deref(),
        )));
        Watched {
            roots,
            whole_run,
            ignored,
        }
    }

    /// Every watched file with its modification time and size.
    fn snapshot(&self) -> BTreeMap<PathBuf, (Option<SystemTime>, u64)> {
        let mut files = BTreeMap::new();
        for root in &self.roots {
            walk(root, &mut |p| {
                let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
                if EXTENSIONS.contains(&ext) && !self.ignored.contains(p) {
                    stat_into(p, &mut files);
                }
            });
        }
        for p in &self.whole_run {
            walk(p, &mut |f| stat_into(f, &mut files));
        }
        files
    }
}

/// Block until a watched file changes (then wait out the burst); `None` on a signal.
fn wait_for_change(
    watched: &Watched,
    mut before: BTreeMap<PathBuf, (Option<SystemTime>, u64)>,
) -> Option<BTreeSet<PathBuf>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    rt.block_on(async {
        // Nothing runs while waiting: a signal exits at once (the handler stops any server
        // left and exits 130 / 143).
        crate::ground::signals::exit_at_once();
        crate::ground::signals::install();
        // Let the handler task register before saying we are watching.
        tokio::task::yield_now().await;
        errln!(
            "--watch: watching {} file(s) for changes (Ctrl-C to stop)",
            before.len()
        );
        let poll = async {
            let mut changed = BTreeSet::new();
            let mut burst: Option<(Instant, Instant)> = None;
            loop {
                tokio::time::sleep(if burst.is_some() { POLL / 2 } else { POLL }).await;
                let now = watched.snapshot();
                let diff = differences(&before, &now);
                before = now;
                let t = Instant::now();
                if !diff.is_empty() {
                    changed.extend(diff);
                    burst = Some((burst.map_or(t, |(start, _)| start), t));
                } else if let Some((start, last)) = burst
                    && (t - last >= QUIET || t - start >= MAX_BURST)
                {
                    return changed;
                }
            }
        };
        tokio::select! {
            changed = poll => Some(changed),
            _ = crate::ground::signals::interrupted() => None,
        }
    })
}

fn differences(
    a: &BTreeMap<PathBuf, (Option<SystemTime>, u64)>,
    b: &BTreeMap<PathBuf, (Option<SystemTime>, u64)>,
) -> BTreeSet<PathBuf> {
    let mut changed: BTreeSet<PathBuf> = a
        .iter()
        .filter(|(p, v)| b.get(*p) != Some(v))
        .map(|(p, _)| p.clone())
        .collect();
    changed.extend(b.keys().filter(|p| !a.contains_key(*p)).cloned());
    changed
}

fn stat_into(p: &Path, files: &mut BTreeMap<PathBuf, (Option<SystemTime>, u64)>) {
    if let Ok(m) = std::fs::metadata(p) {
        files.insert(p.to_path_buf(), (m.modified().ok(), m.len()));
    }
}

/// Call `f` on `root` if it is a file, or on every file below it, skipping hidden entries
/// (`.git`, `.mcpspec`) and build folders.
fn walk(root: &Path, f: &mut dyn FnMut(&Path)) {
    let Ok(meta) = std::fs::metadata(root) else {
        return;
    };
    if meta.is_file() {
        f(root);
        return;
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" || name == "node_modules" {
            continue;
        }
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk(&path, f),
            Ok(t) if t.is_file() || t.is_symlink() => f(&path),
            _ => {}
        }
    }
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p)
        .map(|p| canonical(&p))
        .unwrap_or_else(|_| p.to_path_buf())
}
