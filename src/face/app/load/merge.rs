//! `report merge` of load reports: the shards of one sharded run added up and judged again.

use std::time::Duration;

use super::render::{console, html, junit};
use super::{EndedJson, LoadReport, emit};
use crate::face::app::inputs::usage;
use crate::face::cli::{UsageError, exit};
use crate::language::dsl::workload::Pace;
use crate::results::junit::Flavor;

/// Whether `text` is the JSON report of `mcpspec load` (not of `run`).
pub(in crate::face::app) fn is_load_report(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text)
        .is_ok_and(|v| v.get("series").is_some() && v.get("budgetRules").is_some())
}

/// `mcpspec report merge` of load reports: the shards of one sharded load run, each once.
/// Their histograms add exactly, counts, errors and the series sum; the budgets are judged
/// again on the merged numbers.
pub(in crate::face::app) fn merge(
    files: &[std::path::PathBuf],
    json: Option<&std::path::Path>,
    junit_path: Option<&std::path::Path>,
    html_path: Option<&std::path::Path>,
    flavor: Flavor,
) -> i32 {
    let mut shards: Vec<LoadReport> = Vec::new();
    for f in files {
        let parsed = crate::ground::source::read_text(f)
            .map_err(|e| format!("cannot read: {e}"))
            .and_then(|t| {
                serde_json::from_str::<LoadReport>(&t)
                    .map_err(|e| format!("not an mcpspec load report: {e}"))
            });
        match parsed {
            Ok(r) => shards.push(r),
            Err(e) => return usage(UsageError(format!("{}: {e}", f.display()))),
        }
    }
    let n = shards.len();
    let mut seen = vec![false; n];
    for (f, r) in files.iter().zip(&shards) {
        match r.shard {
            Some(s) if s.count == n && !std::mem::replace(&mut seen[s.index - 1], true) => {}
            Some(s) => {
                return usage(UsageError(format!(
                    "{}: shard {}/{} does not fit: give each of the N shards' reports once ({n} given)",
                    f.display(),
                    s.index,
                    s.count
                )));
            }
            None => {
                return usage(UsageError(format!(
                    "{}: not a shard (a load report of `--shard K/N`)",
                    f.display()
                )));
            }
        }
    }
    shards.sort_by_key(|r| r.shard.map_or(0, |s| s.index));
    let mut recorder = crate::run::load::record::Recorder::default();
    for r in &shards {
        recorder.absorb(&r.summary, &r.series);
    }
    let first = &shards[0];
    // The shards ran side by side: the merged run lasted as long as the longest.
    let measured = shards
        .iter()
        .map(|r| r.summary.measured_seconds)
        .fold(0.0, f64::max);
    let mut stages = first.stages.clone();
    for (i, stage) in stages.iter_mut().enumerate() {
        stage.pace =
            shards
                .iter()
                .skip(1)
                .filter_map(|r| r.stages.get(i))
                .fold(stage.pace, |sum, other| match (sum, other.pace) {
                    (Pace::Rate(a), Pace::Rate(b)) => Pace::Rate(a + b),
                    (Pace::Clients(a), Pace::Clients(b)) => Pace::Clients(a + b),
                    (sum, _) => sum,
                });
    }
    let summary = recorder.summary(Duration::from_secs_f64(measured), &stages);
    let label = |r: &LoadReport| {
        r.shard
            .map_or(String::new(), |s| format!("shard {}/{}", s.index, s.count))
    };
    let early: Vec<&LoadReport> = shards.iter().filter(|r| r.ended.early).collect();
    let ended = EndedJson {
        at_seconds: shards
            .iter()
            .map(|r| r.ended.at_seconds)
            .fold(0.0, f64::max),
        why: if early.is_empty() {
            first.ended.why.clone()
        } else {
            early
                .iter()
                .map(|r| {
                    format!(
                        "{}: {} at {:.1}s",
                        label(r),
                        r.ended.why,
                        r.ended.at_seconds
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        },
        early: !early.is_empty(),
    };
    let report = LoadReport {
        mcpspec_version: first.mcpspec_version.clone(),
        target: first.target.clone(),
        transport: first.transport.clone(),
        shard: None,
        merged_shards: Some(n),
        budget_rules: first.budget_rules.clone(),
        stages,
        era: first.era.clone(),
        started_at: shards
            .iter()
            .map(|r| r.started_at.clone())
            .min()
            .unwrap_or_default(),
        profile: format!("{n} shards, each {}", first.profile),
        target_rate: shards.iter().map(|r| r.target_rate).sum(),
        ended,
        unfinished: shards.iter().map(|r| r.unfinished).sum(),
        budgets: first
            .budget_rules
            .iter()
            .map(|b| b.judge(&summary))
            .collect(),
        warnings: shards
            .iter()
            .flat_map(|r| r.warnings.iter().map(move |w| format!("{}: {w}", label(r))))
            .collect(),
        generator_cpu: None,
        summary,
        series: {
            // Each second's target: the shards' together.
            let mut series = recorder.series();
            for s in &mut series {
                s.target_rate = shards
                    .iter()
                    .filter_map(|r| r.series.get(s.second as usize)?.target_rate)
                    .reduce(|a, b| a + b);
            }
            series
        },
        sandboxed: shards.iter().any(|r| r.sandboxed),
        reached_out: {
            let mut tools: Vec<String> = Vec::new();
            for tool in shards.iter().flat_map(|r| &r.reached_out) {
                if !tools.contains(tool) {
                    tools.push(tool.clone());
                }
            }
            tools
        },
    };
    if let Err(code) = emit(
        &console(&report),
        json,
        junit_path.map(|p| (p, junit(&report, flavor))),
        html_path.map(|p| (p, html(&report, &[]))),
        &report,
        &[],
    ) {
        return code;
    }
    if report.passed() {
        exit::OK
    } else {
        exit::FAILED
    }
}
