//! `mcpspec report merge`: the JSON results of a sharded run (or several runs) as one.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::face::cli::{UsageError, exit};
use crate::results::report::result::{RunReport, SuiteResult, SuiteTarget};
use crate::results::report::{self, console::ConsoleOptions};

use super::run::exit_code;
use crate::face::app::inputs::usage;
use crate::face::app::report_files::{ReportPaths, is_stdout, write_reports};

/// The reports given to `report merge`: the shards of each sharded run (several runs may
/// be merged, e.g. one per era), each exactly once, none missing; and no suite given twice
/// (which also covers results of unsharded runs).
pub(super) fn check_shards(files: &[PathBuf], reports: &[RunReport]) -> Result<(), String> {
    let name = |i: usize| files[i].display().to_string();
    // Run id → N and, for each K, the file that holds shard K; in order of appearance.
    let mut runs: Vec<(&str, usize, Vec<Option<usize>>)> = Vec::new();
    for (i, shard) in reports.iter().enumerate() {
        let Some(shard) = &shard.shard else {
            continue;
        };
        let at = match runs
            .iter()
            .position(|(id, n, _)| *id == shard.run_id && *n == shard.count)
        {
            Some(at) => at,
            None => {
                runs.push((shard.run_id.as_str(), shard.count, vec![None; shard.count]));
                runs.len() - 1
            }
        };
        match runs[at].2.get_mut(shard.index.wrapping_sub(1)) {
            Some(Some(earlier)) => {
                return Err(format!(
                    "shard {} of run {} is given twice: {} and {}",
                    shard.label(),
                    shard.run_id,
                    name(*earlier),
                    name(i)
                ));
            }
            Some(slot) => *slot = Some(i),
            None => return Err(format!("{}: invalid shard {}", name(i), shard.label())),
        }
    }
    for (id, n, seen) in &runs {
        let missing: Vec<String> = (1..=*n)
            .filter(|k| seen[k - 1].is_none())
            .map(|k| format!("{k}/{n}"))
            .collect();
        if !missing.is_empty() {
            let given: Vec<String> = seen.iter().flatten().map(|&i| name(i)).collect();
            return Err(format!(
                "missing shard{} {} of run {id} (given: {})",
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", "),
                given.join(", ")
            ));
        }
    }
    let mut suites: HashMap<(&str, usize), usize> = HashMap::new();
    for (i, report) in reports.iter().enumerate() {
        for suite in &report.suites {
            if let Some(earlier) = suites.insert((suite.id.as_str(), suite.ordinal), i) {
                return Err(format!(
                    "suite `{}` is in both {} and {}: a result is given twice",
                    suite.id,
                    name(earlier),
                    name(i)
                ));
            }
        }
    }
    Ok(())
}

/// Each value once, in first-seen order.
fn distinct<'a>(values: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// `mcpspec report merge`: shard results → one report, in the order of the full run.
pub(super) fn merge(files: &[PathBuf], paths: &ReportPaths) -> i32 {
    let json = paths.json.as_deref();
    if files
        .first()
        .and_then(|f| crate::ground::source::read_text(f).ok())
        .is_some_and(|t| super::load::merge::is_load_report(&t))
    {
        return super::load::merge::merge(
            files,
            json,
            paths.junit.as_deref(),
            paths.html.as_deref(),
            paths.junit_flavor,
        );
    }
    let mut reports = Vec::new();
    for f in files {
        let text = match crate::ground::source::read_text(f) {
            Ok(t) => t,
            Err(e) => return usage(UsageError(format!("{}: cannot read: {e}", f.display()))),
        };
        match serde_json::from_str::<RunReport>(&text) {
            Ok(r) => reports.push(r),
            Err(e) => {
                return usage(UsageError(format!(
                    "{}: not an mcpspec JSON result: {e}",
                    f.display()
                )));
            }
        }
    }
    let Some(first) = reports.first().cloned() else {
        return usage(UsageError("no result files".into()));
    };
    if let Err(e) = check_shards(files, &reports) {
        return usage(UsageError(e));
    }
    // Runs against different servers: each suite keeps its own target, the header names them all.
    let targets = distinct(reports.iter().map(|r| r.target.as_str()));
    let several = targets.len() > 1;
    let target = if several {
        format!("{} targets: {}", targets.len(), targets.join("; "))
    } else {
        first.target.clone()
    };
    let transport = distinct(reports.iter().map(|r| r.transport.as_str())).join(", ");
    let mut suites: Vec<SuiteResult> = reports
        .iter()
        .flat_map(|r| {
            r.suites.iter().cloned().map(|mut s| {
                if several && s.target.is_none() {
                    s.target = Some(SuiteTarget {
                        target: r.target.clone(),
                        transport: r.transport.clone(),
                    });
                }
                s
            })
        })
        .collect();
    suites.sort_by_key(|s| s.ordinal);
    let merged = RunReport {
        started_at: reports
            .iter()
            .map(|r| r.started_at.clone())
            .min()
            .unwrap_or_default(),
        duration: reports.iter().map(|r| r.duration).max().unwrap_or_default(),
        summary: crate::results::report::result::Summary::from_suites(&suites),
        stale_entries: reports
            .iter()
            .flat_map(|r| r.stale_entries.iter().cloned())
            .collect(),
        interrupted: reports.iter().find_map(|r| r.interrupted.clone()),
        servers: reports
            .iter()
            .filter_map(|r| r.servers.clone())
            .reduce(|mut all, one| {
                all.started += one.started;
                all.starting += one.starting;
                all.warm += one.warm;
                all.replaced.extend(one.replaced);
                all
            }),
        models: merged_models(&reports),
        suites,
        target,
        transport,
        ..first
    };
    let console = ConsoleOptions {
        color: false,
        verbose: false,
        secrets: Vec::new(),
        redaction: Default::default(),
    };
    let summary = report::console::render_summary(&merged, &console);
    if is_stdout(json) {
        err!("{summary}");
    } else {
        out!("{summary}");
    }
    if let Err(code) = write_reports(&merged, paths, &[]) {
        return code;
    }
    if !merged.stale_entries.is_empty() {
        return exit::FAILED;
    }
    exit_code(&merged, None, false)
}

/// The shards' model usage, summed per profile (in first-seen order).
fn merged_models(reports: &[RunReport]) -> Vec<crate::results::report::result::ModelUsage> {
    let mut all: Vec<crate::results::report::result::ModelUsage> = Vec::new();
    for one in reports.iter().flat_map(|r| &r.models) {
        match all.iter_mut().find(|m| m.profile == one.profile) {
            Some(m) => {
                m.requests += one.requests;
                m.input_tokens += one.input_tokens;
                m.output_tokens += one.output_tokens;
                m.cost_usd = match (m.cost_usd, one.cost_usd) {
                    (None, None) => None,
                    (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
                };
            }
            None => all.push(one.clone()),
        }
    }
    all
}
