//! `mcpspec load`: the scenarios `run` would select, run as a workload per the profile on
//! the command line; the numbers on the console, the budgets as JUnit test cases, the
//! summary and time series as JSON; the exit code from the budgets.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::face::cli::{LoadArgs, UsageError, exit};
use crate::language::dsl::workload::{PackWorkload, ProfileParts};
use crate::results::junit::{Flavor, Policy, TestCaseStatus, TestSuite};
use crate::run::engine::{self, RunConfig};
use crate::run::load::budget::{Budget, Limit, Scope, Verdict};
use crate::run::load::profile::{DEFAULT_DURATION, Length, Pace, Profile};
use crate::run::load::record::{SecondSummary, Summary};
use crate::run::load::{self, Ended, Work};

use super::{is_stdout, runtime_for, usage, write_reports_file};

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
    let mut asked = match super::run::Asked::parse(&run_args) {
        Ok(a) => a,
        Err(e) => return usage(e),
    };
    let mut loaded = match super::run::load(&run_args, &mut asked, config_params, &mut secrets) {
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
        return super::connect_failed(e, &secrets);
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

/// Shard `shard`'s part of the profile: the rate divided by N, the clients and the
/// iterations shared out (the first shards take one more of what does not divide evenly).
/// A shard left with no client or iteration is a usage error.
fn shard_parts(
    parts: &mut ProfileParts,
    shard: crate::face::select::Shard,
) -> Result<(), UsageError> {
    let n = shard.count;
    let share = |total: u64| total / n as u64 + u64::from((shard.index as u64) < total % n as u64);
    let slice = |pace: Pace| match pace {
        Pace::Rate(r) => Ok(Pace::Rate(r / n as f64)),
        Pace::Clients(c) => match share(c as u64) {
            0 => Err(UsageError(format!(
                "--shard {}/{n}: {c} client(s) leave this shard none (give at least {n} clients)",
                shard.index + 1
            ))),
            mine => Ok(Pace::Clients(mine as usize)),
        },
    };
    if parts.stages.is_empty() {
        parts.pace = Some(slice(parts.pace.unwrap_or(Pace::Clients(1)))?);
    }
    for stage in &mut parts.stages {
        stage.pace = slice(stage.pace)?;
    }
    if let Some(total) = parts.iterations {
        match share(total) {
            0 => {
                return Err(UsageError(format!(
                    "--shard {}/{n}: {total} iteration(s) leave this shard none",
                    shard.index + 1
                )));
            }
            mine => parts.iterations = Some(mine),
        }
    }
    Ok(())
}

/// Whether `text` is the JSON report of `mcpspec load` (not of `run`).
pub(super) fn is_load_report(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text)
        .is_ok_and(|v| v.get("series").is_some() && v.get("budgetRules").is_some())
}

/// `mcpspec report merge` of load reports: the shards of one sharded load run, each once.
/// Their histograms add exactly, counts, errors and the series sum; the budgets are judged
/// again on the merged numbers.
pub(super) fn merge(
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

/// The parts of the profile the flags set (clap refused values out of range, `--clients`
/// with `--rate` and `--duration` with `--iterations`).
fn command_line(args: &LoadArgs) -> ProfileParts {
    ProfileParts {
        pace: match (args.rate, args.clients) {
            (Some(r), _) => Some(Pace::Rate(r)),
            (None, n) => n.map(Pace::Clients),
        },
        duration: args.duration,
        iterations: args.iterations,
        warmup: args.warmup,
        ..ProfileParts::default()
    }
}

/// The profile of the scenarios' `load:` blocks: one, or the same in each; two that differ
/// are a usage error naming both.
fn scenario_profile(work: &[Work<'_>]) -> Result<ProfileParts, UsageError> {
    let mut found: Option<(&str, &ProfileParts)> = None;
    for w in work {
        let Some(load) = &w.scenario.load else {
            continue;
        };
        if load.profile.is_empty() {
            continue;
        }
        match found {
            None => found = Some((&w.scenario.id, &load.profile)),
            Some((first, p)) if *p != load.profile => {
                return Err(UsageError(format!(
                    "the scenarios `{first}` and `{}` ask for different load profiles: give the profile in one of them (or mcpspec.yaml, or on the command line), and only `weight` and `each` in the others",
                    w.scenario.id
                )));
            }
            Some(_) => {}
        }
    }
    Ok(found.map(|(_, p)| p.clone()).unwrap_or_default())
}

/// The profile of the packs' `load:` blocks: of the packs nearest the command line (an
/// importing pack's wins over those it imports); two of them that differ are a usage
/// error naming both.
fn pack_profile(work: &[Work<'_>]) -> Result<ProfileParts, UsageError> {
    let packs: Vec<&PackWorkload> = packs_of(work).filter(|p| !p.profile.is_empty()).collect();
    let Some(depth) = packs.iter().map(|p| p.depth).min() else {
        return Ok(ProfileParts::default());
    };
    let mut nearest = packs.iter().filter(|p| p.depth == depth);
    let first = nearest.next().expect("a pack at the least depth");
    if let Some(other) = nearest.find(|p| p.profile != first.profile) {
        return Err(UsageError(format!(
            "the packs `{}` and `{}` ask for different load profiles: give the profile in one of them (or mcpspec.yaml, or on the command line)",
            first.pack, other.pack
        )));
    }
    Ok(first.profile.clone())
}

/// The `load:` blocks of the packs of the workload's scenarios, each once.
fn packs_of<'a>(work: &'a [Work<'_>]) -> impl Iterator<Item = &'a PackWorkload> + Clone {
    let mut seen = std::collections::HashSet::new();
    let packs: Vec<&'a PackWorkload> = work
        .iter()
        .filter_map(|w| w.scenario.pack_load.as_deref())
        .filter(|p| seen.insert(p.pack.clone()))
        .collect();
    packs.into_iter()
}

/// The weights of the mix leave something to run: told at the first weight written.
fn weights_hold(work: &[Work<'_>]) -> Result<(), crate::language::dsl::LoadErrors> {
    if work.iter().map(|w| w.weight).sum::<f64>() > 0.0 {
        return Ok(());
    }
    let pos = work
        .iter()
        .find_map(|w| w.scenario.load.as_ref().map(|l| l.weight_pos.clone()))
        .unwrap_or_else(|| work[0].scenario.pos.clone());
    Err(crate::language::dsl::LoadError::at(
        pos,
        "the weights of the workload's scenarios sum to 0: nothing would run",
    )
    .with_help("give at least one scenario of the run a weight above 0 (the default is 1)")
    .into())
}

/// The profile: `parts` completed with the defaults, its connections bounded as the
/// transport needs.
fn profile(args: &LoadArgs, http: bool, shared: bool, parts: ProfileParts) -> Profile {
    let pace = parts
        .stages
        .first()
        .map(|s| s.pace)
        .or(parts.pace)
        .unwrap_or(Pace::Clients(1));
    let length = if parts.stages.is_empty() {
        match (parts.iterations, parts.duration) {
            (Some(n), _) => Length::Iterations(n),
            (None, d) => Length::Duration(d.unwrap_or(DEFAULT_DURATION)),
        }
    } else {
        Length::Duration(parts.stages.iter().map(|s| s.duration).sum())
    };
    let mut profile = Profile {
        pace,
        length,
        warmup: parts.warmup.unwrap_or(Duration::ZERO),
        connections: 1,
        ramp: parts.ramp,
        stages: parts.stages,
        think: parts.think.unwrap_or(Duration::ZERO),
        shared_process: shared,
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    profile.connections = match (pace, http) {
        // Over HTTP a client is a connection: every client has its own; so on a shared
        // stdio process, where a client is a connection on it.
        (Pace::Clients(_), true) => profile.most_clients().unwrap_or(1),
        (Pace::Clients(_), false) if shared => profile.most_clients().unwrap_or(1),
        (Pace::Rate(_), true) => args.jobs.unwrap_or(HTTP_IN_FLIGHT),
        (Pace::Rate(_), false) if shared => args.jobs.unwrap_or(HTTP_IN_FLIGHT),
        (_, false) => args.jobs.unwrap_or(cores),
    };
    profile
}

/// The budgets: the flags' (of the run), `mcpspec.yaml`'s, the packs', the scenarios'.
/// The run's error rate always has one (default 0%: any error breaks it, as any failure
/// fails a run) unless a file gives it.
fn budgets(args: &LoadArgs, config: &[Budget], work: &[Work<'_>]) -> Vec<Budget> {
    let run = |limit| Budget {
        scope: Scope::Run,
        limit,
    };
    let mut budgets = Vec::new();
    for (quantile, limit) in [(0.95, args.p95), (0.99, args.p99)] {
        if let Some(at_most) = limit {
            budgets.push(run(Limit::Percentile { quantile, at_most }));
        }
    }
    let in_files = config
        .iter()
        .chain(packs_of(work).flat_map(|p| &p.budgets))
        .chain(
            work.iter()
                .filter_map(|w| w.scenario.load.as_ref())
                .flat_map(|l| &l.budgets),
        );
    let run_error_rate =
        |b: &Budget| b.scope == Scope::Run && matches!(b.limit, Limit::ErrorRate(_));
    match args.max_error_rate {
        Some(pct) => budgets.push(run(Limit::ErrorRate(pct))),
        None if !in_files.clone().any(run_error_rate) => budgets.push(run(Limit::ErrorRate(0.0))),
        None => {}
    }
    if let Some(rps) = args.min_throughput {
        budgets.push(run(Limit::MinThroughput(rps)));
    }
    budgets.extend(in_files.cloned());
    budgets
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
    stages: Vec<crate::run::load::profile::Stage>,
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

fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), |ms| format!("{ms:.1}ms"))
}

fn console(r: &LoadReport) -> String {
    let s = &r.summary;
    let mut out = vec![
        format!("load: {} (era {})", r.target, r.era),
        format!("profile: {}", r.profile),
        format!(
            "ended: {} at {:.1}s{}",
            r.ended.why,
            r.ended.at_seconds,
            if r.ended.early {
                " (early: the numbers are those measured up to then)"
            } else {
                ""
            }
        ),
        format!(
            "iterations: {} ({} failed) in {:.1}s: {:.1}/s{}; requests: {}, {:.1}/s",
            s.iterations,
            s.failed_iterations,
            s.measured_seconds,
            s.iterations_per_second,
            r.target_rate
                .map_or(String::new(), |t| if r.stages.is_empty() {
                    format!(" (target {t}/s)")
                } else {
                    format!(" (target up to {t}/s, by stage below)")
                }),
            s.requests,
            s.requests_per_second
        ),
        format!(
            "latency: p50 {}  p90 {}  p95 {}  p99 {}  max {}",
            ms(s.latency.p50_ms),
            ms(s.latency.p90_ms),
            ms(s.latency.p95_ms),
            ms(s.latency.p99_ms),
            ms(s.latency.max_ms)
        ),
    ];
    if let Some(cpu) = &r.generator_cpu {
        out.push(format!(
            "generator CPU: {:.0}% of one core ({:.1}s user, {:.1}s system)",
            cpu.percent, cpu.user_seconds, cpu.system_seconds
        ));
    }
    if s.skipped_iterations > 0 {
        out.push(format!(
            "skipped: {} iteration(s) ran no step ({}), not in the numbers",
            s.skipped_iterations,
            s.skip_reason.as_deref().unwrap_or("")
        ));
    }
    if r.unfinished > 0 {
        out.push(format!(
            "unfinished: {} iteration(s) in flight or due and not started when the run ended (not in the numbers)",
            r.unfinished
        ));
    }
    if s.errors.is_empty() {
        out.push("errors: none".into());
    } else {
        out.push("errors:".into());
        for (kind, n) in &s.errors {
            let first = s.first_errors.get(kind).map_or("", String::as_str);
            out.push(format!("  {kind}: {n} (first: {first})"));
        }
    }
    out.push("steps:".into());
    for step in &s.steps {
        out.push(format!(
            "  {} / {}: {} requests, {} errors, p50 {}  p99 {}  max {}",
            step.scenario,
            step.step,
            step.requests,
            step.errors,
            ms(step.latency.p50_ms),
            ms(step.latency.p99_ms),
            ms(step.latency.max_ms)
        ));
    }
    if !s.stages.is_empty() {
        out.push("load steps:".into());
        for st in &s.stages {
            out.push(format!(
                "  {}. {} for {:.0}s: {} iterations, {:.1}/s, {} failed ({:.2}%), p50 {}  p99 {}",
                st.stage,
                st.pace,
                st.seconds,
                st.iterations,
                st.iterations_per_second,
                st.failed_iterations,
                st.error_rate,
                ms(st.latency.p50_ms),
                ms(st.latency.p99_ms)
            ));
        }
    }
    out.push("budgets:".into());
    for b in &r.budgets {
        out.push(format!(
            "  {} {}: measured {}",
            if b.passed { "✓" } else { "✗" },
            b.title(),
            b.measured
        ));
    }
    for w in &r.warnings {
        out.push(format!("warning: {w}"));
    }
    if r.sandboxed {
        let note = crate::results::report::console::sandbox_note(&r.reached_out);
        out.push(note.trim_end().to_string());
    }
    let broke = r.budgets.iter().filter(|b| !b.passed).count();
    out.push(match (broke, r.ended.early) {
        (0, false) => format!("result: passed ({} budgets held)", r.budgets.len()),
        (0, true) => "result: failed (the run ended early)".into(),
        (n, _) => format!("result: failed ({n} of {} budgets broke)", r.budgets.len()),
    });
    out.join("\n")
}

/// A test case per budget (with the measured value), and one that the run went its length.
fn junit(r: &LoadReport, flavor: Flavor) -> String {
    let policy = Policy::known();
    let mut suite = TestSuite::new(policy.text(&format!("load {}", r.profile)));
    let classname = "mcpspec.load";
    let mut completed = if r.ended.early {
        policy.case(
            "completed",
            classname,
            policy.error("ended-early", &r.ended.why, None),
        )
    } else {
        policy.case("completed", classname, TestCaseStatus::success())
    };
    policy.system_out(&mut completed, &r.ended.why);
    suite.add_test_case(completed);
    for b in &r.budgets {
        let name = b.title();
        let status = if b.passed {
            TestCaseStatus::success()
        } else {
            policy.failure(
                "budget",
                &format!("{}: measured {}", b.title(), b.measured),
                None,
            )
        };
        let mut case = policy.case(&name, classname, status);
        case.add_property(policy.property("measured", &b.measured));
        policy.system_out(&mut case, &format!("measured {}", b.measured));
        suite.add_test_case(case);
    }
    crate::results::junit::document(
        "mcpspec load",
        Some(&r.started_at),
        Some(Duration::from_secs_f64(r.ended.at_seconds)),
        [suite],
        flavor,
    )
}

/// The HTML page of a load run (or of merged shards).
fn html(r: &LoadReport, secrets: &[String]) -> String {
    super::load_html::to_html(
        &super::load_html::LoadPage {
            target: &r.target,
            transport: &r.transport,
            era: &r.era,
            started_at: &r.started_at,
            mcpspec_version: &r.mcpspec_version,
            profile: &r.profile,
            target_rate: r.target_rate,
            shards: r
                .shard
                .map(|s| format!("shard {}/{}", s.index, s.count))
                .or(r.merged_shards.map(|n| format!("merged from {n} shards"))),
            ended_why: &r.ended.why,
            ended_at: r.ended.at_seconds,
            ended_early: r.ended.early,
            unfinished: r.unfinished,
            summary: &r.summary,
            budgets: &r.budgets,
            warnings: &r.warnings,
            stages: &r.stages,
            series: &r.series,
            generator_cpu: r.generator_cpu.as_ref().map(|cpu| {
                format!(
                    "{:.0}% of one core ({:.1}s user, {:.1}s system)",
                    cpu.percent, cpu.user_seconds, cpu.system_seconds
                )
            }),
            passed: r.passed(),
        },
        secrets,
    )
}

/// The live line of a load run on a terminal (stderr, not in CI; nothing elsewhere):
/// redrawn once a second with the rate, the errors and p50/p99 so far.
struct LiveView {
    on: bool,
    shown: bool,
}

impl LiveView {
    fn new() -> LiveView {
        LiveView {
            on: super::progress::on_terminal(),
            shown: false,
        }
    }

    fn show(&mut self, now: &load::Live) {
        if !self.on {
            return;
        }
        err!("\r\x1b[2K{}", live_line(now));
        self.shown = true;
    }

    /// Clear the line before the report.
    fn clear(&mut self) {
        if std::mem::take(&mut self.shown) {
            err!("\r\x1b[2K");
        }
    }
}

/// `[12s] 49/s, 583 iterations, 0 failed (0.00%), p50 3.1ms p99 9.8ms, 2 in flight`.
fn live_line(now: &load::Live) -> String {
    let s = &now.so_far;
    let seconds = now.elapsed.as_secs();
    if now.warming {
        return format!("[{seconds}s] warming up, {} in flight", now.in_flight);
    }
    let rate = 100.0 * s.failed as f64 / (s.iterations.max(1)) as f64;
    format!(
        "[{seconds}s] {}/s, {} iterations, {} failed ({rate:.2}%), p50 {} p99 {}, {} in flight",
        s.last_second,
        s.iterations,
        s.failed,
        ms(s.p50_ms),
        ms(s.p99_ms),
        now.in_flight
    )
}

/// Steps of `--find-limit`, at most: the rate doubles each time, so 12 reach 2048 times
/// the first.
const FIND_LIMIT_STEPS: u32 = 12;

/// One step of `--find-limit`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LimitStep {
    rate: f64,
    iterations: u64,
    iterations_per_second: f64,
    error_rate: f64,
    p50_ms: Option<f64>,
    p99_ms: Option<f64>,
    budgets: Vec<Verdict>,
    held: bool,
    /// Why the step ended early (an interrupt, a server gone), if it did.
    ended_early: Option<String>,
}

impl LimitStep {
    /// The budgets it broke (with what was measured), and why it ended early.
    fn broke(&self) -> Vec<String> {
        self.budgets
            .iter()
            .filter(|b| !b.passed)
            .map(|b| format!("{}: measured {}", b.title(), b.measured))
            .chain(self.ended_early.clone())
            .collect()
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LimitReport {
    mcpspec_version: &'static str,
    target: String,
    era: String,
    started_at: String,
    /// The last rate whose every budget held; `None`: not even the first.
    last_held: Option<f64>,
    /// The rate at which a budget broke; `None`: none broke up to the last step.
    broke_at: Option<f64>,
    steps: Vec<LimitStep>,
}

/// `--find-limit`: the open loop's rate doubled step by step until a budget breaks (or the
/// run ends early); the last rate that held, and the step table. Exit 0 when a rate held,
/// 1 when not even the first did.
fn find_limit(
    args: &LoadArgs,
    work: &[Work<'_>],
    era: &crate::protocol::era::Era,
    config: &RunConfig,
    profile: &Profile,
    budgets: &[Budget],
    secrets: &[String],
) -> i32 {
    let Pace::Rate(first) = profile.pace else {
        return usage(UsageError(
            "--find-limit steps an open loop's rate up: give --rate".into(),
        ));
    };
    let started_at = engine::now_rfc3339();
    let mut steps = Vec::new();
    let mut unreachable = None;
    let mut view = LiveView::new();
    runtime_for(1).block_on(async {
        crate::ground::signals::install();
        crate::ground::signals::defer_exit();
        for i in 0..FIND_LIMIT_STEPS {
            let rate = first * f64::from(1u32 << i);
            let mut step_profile = profile.clone();
            step_profile.pace = Pace::Rate(rate);
            step_profile.stages.clear();
            step_profile.ramp = None;
            if i > 0 {
                step_profile.warmup = Duration::ZERO;
            }
            let measured = load::run(
                work,
                era,
                config,
                &step_profile,
                crate::ground::signals::interrupted(),
                |now| view.show(&now),
            )
            .await;
            view.clear();
            if let Some(e) = measured.unreachable {
                unreachable = Some(e);
                return;
            }
            let summary = measured.recorder.summary(measured.measured, &[]);
            let verdicts: Vec<Verdict> = budgets.iter().map(|b| b.judge(&summary)).collect();
            let early = measured.ended.early.then(|| measured.ended.why.clone());
            let held = early.is_none() && verdicts.iter().all(|v| v.passed);
            steps.push(LimitStep {
                rate,
                iterations: summary.iterations,
                iterations_per_second: summary.iterations_per_second,
                error_rate: summary.error_rate,
                p50_ms: summary.latency.p50_ms,
                p99_ms: summary.latency.p99_ms,
                budgets: verdicts,
                held,
                ended_early: early,
            });
            if !held {
                return;
            }
        }
    });
    if let Some(e) = &unreachable {
        return super::connect_failed(e, secrets);
    }
    let last_held = steps.iter().take_while(|s| s.held).last().map(|s| s.rate);
    let broke_at = steps.iter().find(|s| !s.held).map(|s| s.rate);
    let report = LimitReport {
        mcpspec_version: env!("CARGO_PKG_VERSION"),
        target: config.target.describe(),
        era: era.label.clone(),
        started_at,
        last_held,
        broke_at,
        steps,
    };
    let mut out = vec![
        format!("load: {} (era {})", report.target, report.era),
        format!(
            "find limit: from {first}/s, doubling, {} a step",
            profile.describe_length()
        ),
        "steps:".to_string(),
    ];
    for s in &report.steps {
        let broke = s.broke();
        out.push(format!(
            "  {} {}/s: {} iterations, {:.1}/s, {:.2}% failed, p50 {}  p99 {}{}",
            if s.held { "✓" } else { "✗" },
            s.rate,
            s.iterations,
            s.iterations_per_second,
            s.error_rate,
            ms(s.p50_ms),
            ms(s.p99_ms),
            if broke.is_empty() {
                String::new()
            } else {
                format!(" — broke: {}", broke.join("; "))
            }
        ));
    }
    out.push(match (report.last_held, report.broke_at) {
        (Some(held), Some(broke)) => format!("limit: {held}/s held, {broke}/s broke a budget"),
        (Some(held), None) => format!("limit: not reached — every step held, up to {held}/s"),
        (None, _) => format!("limit: below {first}/s — the first step broke a budget"),
    });
    if let Err(code) = emit(
        &out.join("\n"),
        args.json.as_deref(),
        args.junit.as_deref().map(|p| {
            (
                p,
                limit_junit(&report, args.junit_flavor.unwrap_or_default()),
            )
        }),
        args.html.as_deref().map(|p| {
            let search = out[1].trim_start_matches("find limit: ").to_string();
            let limit = out[out.len() - 1].trim_start_matches("limit: ").to_string();
            (p, limit_html(&report, search, limit, secrets))
        }),
        &report,
        secrets,
    ) {
        return code;
    }
    if let Some(signal) = crate::ground::signals::received() {
        crate::ground::signals::kill_all();
        return signal;
    }
    if report.last_held.is_some() {
        exit::OK
    } else {
        exit::FAILED
    }
}

/// The HTML page of `--find-limit`: its step table.
fn limit_html(r: &LimitReport, search: String, limit: String, secrets: &[String]) -> String {
    super::load_html::limit_to_html(
        &super::load_html::LimitPage {
            target: &r.target,
            era: &r.era,
            started_at: &r.started_at,
            mcpspec_version: r.mcpspec_version,
            search,
            limit,
            held: r.last_held.is_some(),
            rows: r
                .steps
                .iter()
                .map(|s| super::load_html::LimitRow {
                    rate: s.rate,
                    iterations: s.iterations,
                    per_second: s.iterations_per_second,
                    error_rate: s.error_rate,
                    p50_ms: s.p50_ms,
                    p99_ms: s.p99_ms,
                    held: s.held,
                    broke: s.broke(),
                })
                .collect(),
        },
        secrets,
    )
}

/// A test case per step of `--find-limit`: held, or the budgets it broke.
fn limit_junit(r: &LimitReport, flavor: Flavor) -> String {
    let policy = Policy::known();
    let mut suite = TestSuite::new(policy.text("load --find-limit"));
    for s in &r.steps {
        let status = if s.held {
            TestCaseStatus::success()
        } else {
            policy.failure("budget", &s.broke().join("; "), None)
        };
        suite.add_test_case(policy.case(
            &format!("rate {}/s", s.rate),
            "mcpspec.load.limit",
            status,
        ));
    }
    crate::results::junit::document("mcpspec load", Some(&r.started_at), None, [suite], flavor)
}

/// `mcpspec load compare BASE CANDIDATE`.
fn compare(args: &crate::face::cli::CompareArgs) -> i32 {
    let read = |p: &std::path::Path| -> Result<serde_json::Value, String> {
        let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", p.display()))
    };
    let tolerance = args.tolerance.unwrap_or(10.0);
    let error_tolerance = args.error_tolerance.unwrap_or(0.0);
    let changes = match read(&args.base).and_then(|b| {
        let c = read(&args.candidate)?;
        load::compare::compare(&b, &c, tolerance, error_tolerance)
    }) {
        Ok(c) => c,
        Err(e) => {
            errln!("error: {e}");
            return exit::INVALID_INPUT;
        }
    };
    let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:+.1}%"));
    let mut out = vec![format!(
        "compare: {} → {} (tolerance {tolerance}% on p50/p99 when significant at p < {}, {error_tolerance} points on error rates)",
        args.base.display(),
        args.candidate.display(),
        load::compare::ALPHA
    )];
    for c in &changes {
        out.push(format!(
            "  {} {}: p50 {} → {} ({}), p99 {} → {} ({}), errors {:.2}% → {:.2}%, p = {}{}",
            if c.regressed { "✗" } else { "✓" },
            c.name,
            ms(c.base_p50_ms),
            ms(c.candidate_p50_ms),
            pct(c.p50_change),
            ms(c.base_p99_ms),
            ms(c.candidate_p99_ms),
            pct(c.p99_change),
            c.base_error_rate,
            c.candidate_error_rate,
            c.p_value.map_or("-".into(), |p| format!("{p:.4}")),
            if c.why.is_empty() {
                String::new()
            } else {
                format!(" — regressed: {}", c.why.join("; "))
            }
        ));
    }
    let regressed = changes.iter().filter(|c| c.regressed).count();
    out.push(if regressed == 0 {
        "result: no regression".into()
    } else {
        format!("result: {regressed} regression(s)")
    });
    let junit = args.junit.as_deref().map(|path| {
        let policy = Policy::known();
        let mut suite = TestSuite::new(policy.text("load compare"));
        for c in &changes {
            let status = if c.regressed {
                policy.failure("regression", &c.why.join("; "), None)
            } else {
                TestCaseStatus::success()
            };
            suite.add_test_case(policy.case(&c.name, "mcpspec.load.compare", status));
        }
        let xml = crate::results::junit::document(
            "mcpspec load compare",
            None,
            None,
            [suite],
            args.junit_flavor.unwrap_or_default(),
        );
        (path, xml)
    });
    let report = serde_json::json!({ "changes": changes });
    if let Err(code) = emit(
        &out.join("\n"),
        args.json.as_deref(),
        junit,
        None,
        &report,
        &[],
    ) {
        return code;
    }
    if regressed == 0 {
        exit::OK
    } else {
        exit::FAILED
    }
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

    #[test]
    fn a_shard_takes_its_share_of_the_profile() {
        let shard = |k: usize, n: usize| crate::face::select::Shard {
            index: k - 1,
            count: n,
        };
        let mut parts = ProfileParts {
            pace: Some(Pace::Rate(30.0)),
            iterations: Some(10),
            ..ProfileParts::default()
        };
        shard_parts(&mut parts, shard(1, 3)).unwrap();
        assert_eq!(
            (parts.pace, parts.iterations),
            (Some(Pace::Rate(10.0)), Some(4))
        );
        let clients = |k| {
            let mut parts = ProfileParts {
                pace: Some(Pace::Clients(5)),
                ..ProfileParts::default()
            };
            shard_parts(&mut parts, shard(k, 3)).map(|()| parts.pace)
        };
        assert_eq!(clients(2).unwrap(), Some(Pace::Clients(2)));
        assert_eq!(clients(3).unwrap(), Some(Pace::Clients(1)));
        let mut one = ProfileParts::default();
        assert!(
            shard_parts(&mut one, shard(2, 2))
                .unwrap_err()
                .0
                .contains("leave this shard none")
        );
    }
}
