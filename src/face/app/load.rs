//! `mcpspec load`: the scenarios `run` would select, run as a workload per the profile on
//! the command line; the numbers on the console, the budgets as JUnit test cases, the
//! summary and time series as JSON; the exit code from the budgets.

mod compare;
mod limit;
mod live;
pub(super) mod merge;
mod profile;
mod render;

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::face::cli::{LoadArgs, UsageError, exit};
use crate::language::dsl::workload::Budget;
use crate::language::dsl::workload::Pace;
use crate::run::engine::{self, RunConfig};
use crate::run::load::budget::Verdict;
use crate::run::load::profile::Profile;
use crate::run::load::record::summary::{SecondSummary, Summary};
use crate::run::load::{self, Ended, Work};

use crate::face::app::inputs::usage;
use crate::face::app::report_files::{is_stdout, write_reports_file};
use crate::face::app::runtime::runtime_for;

use compare::compare;
use limit::find_limit;
use live::LiveView;
use profile::{
    budgets, command_line, pack_profile, profile, scenario_profile, shard_parts, weights_hold,
};
use render::{console, html, junit};

/// Iterations in flight at once, at most, of an open loop over HTTP without `--jobs`.
const HTTP_IN_FLIGHT: usize = 256;

/// A shortfall of the achieved rate beyond this fraction of the target is worth a warning.
const RATE_TOLERANCE: f64 = 0.02;

pub(super) fn load(mut args: LoadArgs) -> i32 {
    if let Some(crate::face::cli::LoadCommand::Compare(c)) = &args.command {
        return compare(c);
    }
    let mut run_args = args.as_run_args();
    let mut secrets = Vec::new();
    let (config_params, config_client, (config_load, config_budgets)) =
        match super::run::configure(&mut run_args, &mut secrets) {
            Ok(p) => p,
            Err(code) => return code,
        };
    // With `junitFlavor` of mcpspec.yaml when the command line gives none.
    args.junit_flavor = run_args.junit_flavor;
    let mut asked = match super::run::scenarios::Asked::parse(&run_args) {
        Ok(a) => a,
        Err(e) => return usage(e),
    };
    let mut loaded =
        match super::run::scenarios::load(&run_args, &mut asked, config_params, &mut secrets) {
            Ok(l) => l,
            Err(code) => return code,
        };
    if let Err(code) = super::run::default_client(&mut loaded.selected, config_client.as_ref()) {
        return code;
    }
    let mut items = engine::plan(&loaded.selected, &asked.eras);
    if let Some(f) = &asked.filter {
        items.retain(|item| f.is_match(&item.scenario.id) || f.is_match(item.id()));
    }
    let Some(era) = items.first().map(|i| i.era.clone()) else {
        errln!("error: no scenario matches the selection (paths, --tag, --filter, --era)");
        return exit::INVALID_INPUT;
    };
    if let Some(other) = items.iter().find(|i| i.era.label != era.label) {
        return usage(UsageError(format!(
            "a load run runs in one era, and the scenarios ask for {} and {}: pass --era",
            era.label, other.era.label
        )));
    }
    let mut work = Vec::with_capacity(items.len());
    for item in &items {
        match item.scenario.compiled_steps() {
            Ok(steps) => work.push(Work::new(item.scenario, steps)),
            Err(errors) => {
                errln!("{}", errors.render());
                return exit::INVALID_INPUT;
            }
        }
    }
    if let Err(errors) = weights_hold(&work) {
        errln!("{}", errors.render());
        return exit::INVALID_INPUT;
    }
    let in_files = match scenario_profile(&work) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    let in_packs = match pack_profile(&work) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    let mut parts = command_line(&args).over(&in_files.over(&in_packs.over(&config_load)));
    if let Some(shard) = args.shard
        && let Err(e) = shard_parts(&mut parts, shard)
    {
        return usage(e);
    }
    let shared = args.stdio_mode == crate::face::cli::StdioMode::Shared;
    if shared && loaded.target.is_http() {
        return usage(UsageError(
            "--stdio-mode shared is for a --stdio target (over HTTP every client has its own connection)".into(),
        ));
    }
    let profile = profile(&args, loaded.target.is_http(), shared, parts);
    if let Some(n) = profile.most_clients()
        && n > profile.connections
    {
        errln!(
            "note: over stdio a client is a server process, at most --jobs of them: {n} clients run as {}",
            profile.connections
        );
    }
    crate::ground::redact::remember(&secrets);
    let config = RunConfig {
        target: loaded.target,
        params: loaded.params,
        keep_passing_transcripts: false,
        wire_validate: false,
        fresh: true,
        snapshots: std::sync::Arc::new(crate::language::assert::golden::Snapshots::new(false)),
        tool_calls: Default::default(),
        eras: asked.eras.clone(),
        jobs: profile.connections,
    };
    let budgets = budgets(&args, &config_budgets, &work);
    if args.find_limit {
        return find_limit(&args, &work, &era, &config, &profile, &budgets, &secrets);
    }
    let started_at = engine::now_rfc3339();
    let cpu_before = (
        std::time::Instant::now(),
        crate::ground::platform::process_cpu(),
    );
    let mut view = LiveView::new();
    let measured = runtime_for(1).block_on(async {
        crate::ground::signals::install();
        // A signal ends the run, which still reports what it measured.
        crate::ground::signals::defer_exit();
        load::run(
            &work,
            &era,
            &config,
            &profile,
            crate::ground::signals::interrupted(),
            |now| view.show(&now),
        )
        .await
    });
    view.clear();
    if let Some(e) = &measured.unreachable {
        return super::connect::connect_failed(e, &secrets);
    }
    let cpu = GeneratorCpu::since(cpu_before);
    let summary = measured
        .recorder
        .summary(measured.measured, &profile.stages);
    let verdicts: Vec<Verdict> = budgets.iter().map(|b| b.judge(&summary)).collect();
    let report = LoadReport {
        mcpspec_version: env!("CARGO_PKG_VERSION").into(),
        target: config.target.describe(),
        transport: config.target.transport_name().into(),
        shard: args.shard.map(|s| ShardJson {
            index: s.index + 1,
            count: s.count,
        }),
        merged_shards: None,
        budget_rules: budgets.clone(),
        stages: profile.stages.clone(),
        era: era.label.clone(),
        started_at,
        profile: profile.describe(),
        target_rate: target_rate(&profile),
        ended: EndedJson::of(&measured.ended),
        unfinished: measured.unfinished,
        warnings: warnings(&profile, &summary, cpu.as_ref()),
        generator_cpu: cpu,
        summary,
        budgets: verdicts,
        series: {
            let mut series = measured.recorder.series();
            for s in &mut series {
                s.target_rate = rate_of(profile.pace_at(Some(Duration::from_secs(s.second))));
            }
            series
        },
        sandboxed: config.target.sandboxed(),
        reached_out: measured.reached_out.clone(),
    };
    if let Err(code) = emit(
        &console(&report),
        args.json.as_deref(),
        args.junit
            .as_deref()
            .map(|p| (p, junit(&report, args.junit_flavor.unwrap_or_default()))),
        args.html.as_deref().map(|p| (p, html(&report, &secrets))),
        &report,
        &secrets,
    ) {
        return code;
    }
    if let Some(signal) = crate::ground::signals::received() {
        crate::ground::signals::kill_all();
        return signal;
    }
    if report.passed() {
        exit::OK
    } else {
        exit::FAILED
    }
}

/// The generator's busy share of its one thread beyond which it, not the server, may be
/// what limits the load.
const CPU_SATURATED: f64 = 90.0;

/// The CPU time mcpspec used over the run (warm-up included): the generator runs on one
/// thread, so `percent` is of one core.
#[derive(Serialize, Deserialize, Clone, Copy)]
#[serde(rename_all = "camelCase")]
struct GeneratorCpu {
    user_seconds: f64,
    system_seconds: f64,
    wall_seconds: f64,
    /// (user + system) / wall, in percent of one core.
    percent: f64,
}

impl GeneratorCpu {
    fn since(
        (wall, before): (std::time::Instant, Option<(Duration, Duration)>),
    ) -> Option<GeneratorCpu> {
        let (u0, s0) = before?;
        let (u1, s1) = crate::ground::platform::process_cpu()?;
        let wall = wall.elapsed().as_secs_f64().max(1e-9);
        let (user, system) = (
            u1.saturating_sub(u0).as_secs_f64(),
            s1.saturating_sub(s0).as_secs_f64(),
        );
        Some(GeneratorCpu {
            user_seconds: user,
            system_seconds: system,
            wall_seconds: wall,
            percent: 100.0 * (user + system) / wall,
        })
    }
}

/// What makes the numbers doubtful: an open loop that did not reach its rate, a load
/// generator whose CPU was saturated.
fn warnings(profile: &Profile, summary: &Summary, cpu: Option<&GeneratorCpu>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(cpu) = cpu.filter(|c| c.percent >= CPU_SATURATED) {
        out.push(format!(
            "the load generator was busy {:.0}% of its thread ({:.1}s user + {:.1}s system in {:.1}s): mcpspec, not the server, may be the bottleneck (run fewer clients or a lower rate per machine, or shard the load: --shard K/N)",
            cpu.percent, cpu.user_seconds, cpu.system_seconds, cpu.wall_seconds
        ));
    }
    // A ramp or steps change the target; the stage table shows each stage's rate.
    let (Pace::Rate(target), None, true) = (profile.pace, profile.ramp, profile.stages.is_empty())
    else {
        return out;
    };
    let achieved = summary.iterations_per_second;
    if summary.measured_seconds > 0.0 && achieved < target * (1.0 - RATE_TOLERANCE) {
        out.push(format!(
            "the achieved rate {achieved:.1}/s fell {:.1}% short of the target {target}/s: the load generator or the server is the bottleneck (see the iterations in flight, --jobs)",
            100.0 * (1.0 - achieved / target)
        ));
    }
    out
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct EndedJson {
    at_seconds: f64,
    why: String,
    early: bool,
}

impl EndedJson {
    fn of(e: &Ended) -> EndedJson {
        EndedJson {
            at_seconds: e.at.as_secs_f64(),
            why: e.why.clone(),
            early: e.early,
        }
    }
}

/// Shard K of N (K from 1).
#[derive(Serialize, Deserialize, Clone, Copy)]
struct ShardJson {
    index: usize,
    count: usize,
}

/// The JSON report of a load run.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LoadReport {
    mcpspec_version: String,
    target: String,
    transport: String,
    /// The shard of a sharded run (`--shard`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    shard: Option<ShardJson>,
    /// Merged from this many shards (`report merge`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    merged_shards: Option<usize>,
    /// The budgets as given, so a merge judges them again on the merged numbers.
    #[serde(default)]
    budget_rules: Vec<Budget>,
    /// The stages of a stepped load as this run paced them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    stages: Vec<crate::language::dsl::workload::Stage>,
    era: String,
    started_at: String,
    profile: String,
    /// Iterations a second asked for (open loop); of a stepped load, the highest stage's
    /// (each stage's is in `summary.stages`, each second's in `series`).
    target_rate: Option<f64>,
    ended: EndedJson,
    /// Iterations in flight at the end, or due and not started (open loop): unmeasured.
    unfinished: u64,
    summary: Summary,
    budgets: Vec<Verdict>,
    warnings: Vec<String>,
    /// mcpspec's own CPU use over the run (not on Windows; not of a merge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    generator_cpu: Option<GeneratorCpu>,
    /// One entry a second of the measured run.
    series: Vec<SecondSummary>,
    /// `--sandbox`: the server ran sandboxed (stdio).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    sandboxed: bool,
    /// Under `--sandbox`, the tools whose answers show a failed connection (they tried to
    /// reach out), each with the first such answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    reached_out: Vec<String>,
}

impl LoadReport {
    /// Every budget held and the run went the profile's whole length.
    fn passed(&self) -> bool {
        !self.ended.early && self.budgets.iter().all(|b| b.passed)
    }
}

/// Iterations a second `pace` asks for (open loop).
fn rate_of(pace: Pace) -> Option<f64> {
    match pace {
        Pace::Rate(r) => Some(r),
        Pace::Clients(_) => None,
    }
}

/// The run's target rate: its pace's, or of a stepped load the highest stage's.
fn target_rate(profile: &Profile) -> Option<f64> {
    if profile.stages.is_empty() {
        return rate_of(profile.pace);
    }
    profile
        .stages
        .iter()
        .filter_map(|s| rate_of(s.pace))
        .reduce(f64::max)
}

/// Write what a load command made, each redacted: the console text (on stderr when the
/// JSON goes to stdout), the JUnit report `(path, xml)`, the HTML page `(path, html)`
/// (redacted as it was made) and the JSON `report`; the exit code of a file that could not
/// be written.
fn emit(
    console: &str,
    json_path: Option<&std::path::Path>,
    junit: Option<(&std::path::Path, String)>,
    html: Option<(&std::path::Path, String)>,
    report: &impl Serialize,
    secrets: &[String],
) -> Result<(), i32> {
    let console = crate::ground::redact::for_terminal(console, secrets);
    if is_stdout(json_path) {
        errln!("{console}");
    } else {
        outln!("{console}");
    }
    if let Some((path, xml)) = junit {
        write_reports_file(path, xml)?;
    }
    if let Some((path, page)) = html {
        write_reports_file(path, page)?;
    }
    if let Some(path) = json_path {
        let text = serde_json::to_string_pretty(report).expect("the report serializes");
        let text = crate::ground::redact::for_terminal(&text, secrets);
        if is_stdout(Some(path)) {
            outln!("{text}");
        } else {
            write_reports_file(path, text)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::load::profile::Length;

    fn cpu(percent: f64) -> GeneratorCpu {
        GeneratorCpu {
            user_seconds: percent / 100.0 * 9.0,
            system_seconds: percent / 100.0,
            wall_seconds: 10.0,
            percent,
        }
    }

    #[test]
    fn a_saturated_generator_is_warned_of_and_a_busy_one_is_not() {
        let profile = Profile::plain(
            Pace::Clients(4),
            Length::Duration(Duration::from_secs(10)),
            4,
        );
        let summary =
            crate::run::load::record::Recorder::default().summary(Duration::from_secs(10), &[]);
        let saturated = warnings(&profile, &summary, Some(&cpu(97.0)));
        assert_eq!(saturated.len(), 1, "{saturated:?}");
        assert!(
            saturated[0].contains("busy 97% of its thread"),
            "{saturated:?}"
        );
        assert!(warnings(&profile, &summary, Some(&cpu(40.0))).is_empty());
        assert!(warnings(&profile, &summary, None).is_empty());
    }
}
