//! The last run's failures, for `mcpspec run --last-failed`: a small state file,
//! `.mcpspec/last-run.json`, next to the configuration file (`--config`'s folder, else the
//! current directory when it holds `./mcpspec.yaml`). Without a project configuration the
//! state goes under the user's cache folder, one file per working directory, so a run
//! from any folder never leaves a `.mcpspec/` behind.
//!
//! Every `run` updates it as pytest's cache does: items that ran this time replace what was
//! recorded for them (failed → listed with their failing checks, passed → removed), items
//! that did not run (another `--filter`, another shard, interrupted) keep their record. So
//! `--last-failed` after a partial rerun still remembers what has not been fixed yet.
//!
//! The granularity of a rerun is `scenario@era`: steps depend on the captures of the steps
//! before them, so a failing check is rerun with its whole scenario. The check ids are kept
//! to say what failed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::results::report::result::RunReport;

/// The `format` value of the state file; another one is ignored (treated as no record).
pub const FORMAT: &str = "mcpspec-last-run/1";

/// The state file, relative to the project folder.
pub const FILE: &str = ".mcpspec/last-run.json";

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LastRun {
    pub format: String,
    /// `scenario@era` → the ids of its checks (steps) that failed; an empty list when the
    /// suite could not run at all (setup error).
    pub failed: BTreeMap<String, Vec<String>>,
}

/// Where the state file of a run lives: next to `--config FILE`, else next to
/// `./mcpspec.yaml`, else under the cache folder (keyed by the working directory).
pub fn path_for(config: Option<&Path>) -> PathBuf {
    match config.and_then(Path::parent) {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(FILE),
        _ if config.is_some() || Path::new(crate::face::config::DEFAULT_FILE).is_file() => {
            PathBuf::from(FILE)
        }
        _ => outside_projects().unwrap_or_else(|| PathBuf::from(FILE)),
    }
}

/// The state file of a run outside any project: `<cache>/last-run/<digest of the working
/// directory>.json`.
fn outside_projects() -> Option<PathBuf> {
    let cache = crate::run::packs::cache::Cache::locate().ok()?;
    let cwd = std::env::current_dir().ok()?;
    let key = crate::results::report::result::stable_hash(
        cwd.as_os_str().as_encoded_bytes().iter().copied(),
    );
    Some(cache.root().join("last-run").join(format!("{key}.json")))
}

impl LastRun {
    /// The record at `path`; none (or one of another format, or unreadable) is empty.
    pub fn load(path: &Path) -> LastRun {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|t| serde_json::from_str::<LastRun>(&t).ok())
            .filter(|l| l.format == FORMAT)
            .unwrap_or_default()
    }

    /// Fold a finished run in: what ran is replaced, what did not run is kept.
    pub fn update(&mut self, report: &RunReport, strict: bool) {
        self.format = FORMAT.into();
        for suite in &report.suites {
            // Stopped by a signal before it finished: it did not run.
            if suite.setup_error_kind.as_deref() == Some("interrupted") {
                continue;
            }
            let checks: Vec<String> = suite
                .steps
                .iter()
                .filter(|s| crate::face::baseline::fails_run(&s.outcome, strict))
                .map(|s| s.name.clone())
                .collect();
            if suite.setup_error.is_some() || !checks.is_empty() {
                self.failed.insert(suite.id.clone(), checks);
            } else {
                self.failed.remove(&suite.id);
            }
        }
    }

    /// Which of `ids` (`scenario@era`, in run order) to run for `--last-failed`; `Err` with
    /// the reason when none of them failed last time (then everything runs, as pytest's
    /// `--lf` does).
    pub fn pick(&self, ids: &[String]) -> Result<Vec<bool>, String> {
        if self.failed.is_empty() {
            return Err("no failure recorded".into());
        }
        let keep: Vec<bool> = ids.iter().map(|id| self.failed.contains_key(id)).collect();
        if keep.iter().any(|k| *k) {
            Ok(keep)
        } else {
            Err(format!(
                "none of the {} recorded failure(s) is in this selection",
                self.failed.len()
            ))
        }
    }

    /// Write the record (creating `.mcpspec/`); a failure is reported, not fatal.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let mut text = serde_json::to_string_pretty(self).expect("JSON serializes");
        text.push('\n');
        // Two runs finishing together never leave a torn file.
        crate::ground::files::write_whole(path, text)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::outcome::Outcome;
    use crate::results::report::result::{EraInfo, StepResult, SuiteResult};
    use crate::results::report::testdata::{bare_step, bare_suite};

    fn suite(id: &str, failing: &[&str], passing: &[&str], kind: Option<&str>) -> SuiteResult {
        let step = bare_step;
        let mut steps: Vec<StepResult> = failing
            .iter()
            .map(|n| {
                step(
                    n,
                    Outcome::Failed {
                        failures: Vec::new(),
                    },
                )
            })
            .collect();
        steps.extend(passing.iter().map(|n| step(n, Outcome::Passed)));
        SuiteResult {
            era: EraInfo::default(),
            setup_error: kind.map(|k| format!("{k} error")),
            setup_error_kind: kind.map(String::from),
            ..bare_suite(id, steps)
        }
    }

    fn report(suites: Vec<SuiteResult>) -> RunReport {
        RunReport {
            mcpspec_version: String::new(),
            target: String::new(),
            transport: String::new(),
            started_at: String::new(),
            duration: Default::default(),
            summary: crate::results::report::result::Summary::from_suites(&suites),
            suites,
            stale_entries: Vec::new(),
            interrupted: None,
            shard: None,
            servers: None,
            models: Vec::new(),
        }
    }

    #[test]
    fn what_ran_is_replaced_what_did_not_is_kept() {
        let mut last = LastRun::default();
        last.update(
            &report(vec![
                suite("a@modern", &["x", "y"], &["z"], None),
                suite("b@modern", &[], &["z"], None),
                suite("c@legacy", &[], &[], Some("start")),
            ]),
            false,
        );
        let want: BTreeMap<String, Vec<String>> = [
            (
                "a@modern".to_string(),
                vec!["x".to_string(), "y".to_string()],
            ),
            ("c@legacy".to_string(), vec![]),
        ]
        .into();
        assert_eq!(last.failed, want);
        // A rerun of a alone that passes: a is removed, c stays; an interrupted suite keeps
        // its record.
        last.update(
            &report(vec![
                suite("a@modern", &[], &["x", "y", "z"], None),
                suite("c@legacy", &[], &[], Some("interrupted")),
            ]),
            false,
        );
        assert_eq!(last.failed.keys().collect::<Vec<_>>(), ["c@legacy"]);
    }

    #[test]
    fn round_trips_and_ignores_other_formats() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let mut last = LastRun::default();
        last.update(&report(vec![suite("a@modern", &["x"], &[], None)]), false);
        last.save(&path).unwrap();
        assert_eq!(LastRun::load(&path), last);
        std::fs::write(
            &path,
            r#"{"format":"mcpspec-last-run/9","failed":{"a@x":[]}}"#,
        )
        .unwrap();
        assert!(LastRun::load(&path).failed.is_empty());
        assert!(
            LastRun::load(&dir.path().join("none.json"))
                .failed
                .is_empty()
        );
        assert_eq!(
            path_for(Some(Path::new("proj/mcpspec.yaml"))),
            Path::new("proj").join(FILE)
        );
        assert_eq!(
            path_for(Some(Path::new("mcpspec.yaml"))),
            PathBuf::from(FILE)
        );
    }
}
