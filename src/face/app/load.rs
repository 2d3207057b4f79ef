//! `mcpspec load`: the scenarios `run` would select, run as a workload per the profile on
//! the command line; the numbers on the console, the budgets as JUnit test cases, the
//! summary and time series as JSON; the exit code from the budgets.

use std::time::Duration;

use serde::Serialize;

use crate::face::cli::{LoadArgs, UsageError, exit};
use crate::results::junit::{Policy, TestCaseStatus, TestSuite};
use crate::run::engine::{self, RunConfig};
use crate::run::load::budget::{Budget, Verdict};
use crate::run::load::profile::{DEFAULT_DURATION, Length, Pace, Profile};
use crate::run::load::record::{SecondSummary, Summary};
use crate::run::load::{self, Ended, Work};

use super::{is_stdout, runtime_for, usage, write_reports_file};

/// Iterations in flight at once, at most, of an open loop over HTTP without `--jobs`.
const HTTP_IN_FLIGHT: usize = 256;

/// A shortfall of the achieved rate beyond this fraction of the target is worth a warning.
const RATE_TOLERANCE: f64 = 0.02;

pub(super) fn load(args: LoadArgs) -> i32 {
    let mut run_args = args.as_run_args();
    let mut secrets = Vec::new();
    let (config_params, config_client) = match super::run::configure(&mut run_args, &mut secrets) {
        Ok(p) => p,
        Err(code) => return code,
    };
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
    let profile = profile(&args, loaded.target.is_http());
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
            Ok(steps) => work.push(Work {
                scenario: item.scenario,
                steps,
            }),
            Err(errors) => {
                errln!("{}", errors.render());
                return exit::INVALID_INPUT;
            }
        }
    }
    if let Pace::Clients(n) = profile.pace
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
    let started_at = engine::now_rfc3339();
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
        )
        .await
    });
    if let Some(e) = &measured.unreachable {
        return super::connect_failed(e, &secrets);
    }
    let summary = measured.recorder.summary(measured.measured);
    let verdicts: Vec<Verdict> = budgets(&args).iter().map(|b| b.judge(&summary)).collect();
    let report = LoadReport {
        mcpspec_version: env!("CARGO_PKG_VERSION"),
        target: config.target.describe(),
        transport: config.target.transport_name(),
        era: era.label.clone(),
        started_at,
        profile: profile.describe(),
        target_rate: match profile.pace {
            Pace::Rate(r) => Some(r),
            Pace::Clients(_) => None,
        },
        ended: EndedJson::of(&measured.ended),
        unfinished: measured.unfinished,
        warnings: warnings(&profile, &summary),
        summary,
        budgets: verdicts,
        series: measured.recorder.series(),
    };
    let console = crate::results::report::redact(&console(&report), &secrets);
    if is_stdout(args.json.as_deref()) {
        errln!("{console}");
    } else {
        outln!("{console}");
    }
    if let Some(path) = &args.junit
        && let Err(code) = write_reports_file(path, junit(&report))
    {
        return code;
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report).expect("the report serializes");
        let text = crate::results::report::redact(&text, &secrets);
        if is_stdout(Some(path)) {
            outln!("{text}");
        } else if let Err(code) = write_reports_file(path, text) {
            return code;
        }
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

/// The profile the flags ask for (clap refused values out of range and `--clients` with
/// `--rate`); its connections bounded as the transport needs.
fn profile(args: &LoadArgs, http: bool) -> Profile {
    let pace = match (args.rate, args.clients) {
        (Some(r), _) => Pace::Rate(r),
        (None, n) => Pace::Clients(n.unwrap_or(1)),
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let connections = match (pace, http) {
        // Over HTTP a client is a connection: every client has its own.
        (Pace::Clients(n), true) => n,
        (Pace::Rate(_), true) => args.jobs.unwrap_or(HTTP_IN_FLIGHT),
        (_, false) => args.jobs.unwrap_or(cores),
    };
    Profile {
        pace,
        length: match (args.iterations, args.duration) {
            (Some(n), _) => Length::Iterations(n),
            (None, d) => Length::Duration(d.unwrap_or(DEFAULT_DURATION)),
        },
        warmup: args.warmup.unwrap_or(Duration::ZERO),
        connections,
    }
}

/// The budgets the flags set; the error rate's is always there (default 0%: any error
/// breaks it, as any failure fails a run).
fn budgets(args: &LoadArgs) -> Vec<Budget> {
    let mut budgets = Vec::new();
    for (quantile, limit) in [(0.95, args.p95), (0.99, args.p99)] {
        if let Some(at_most) = limit {
            budgets.push(Budget::Percentile { quantile, at_most });
        }
    }
    budgets.push(Budget::ErrorRate(args.max_error_rate.unwrap_or(0.0)));
    if let Some(rps) = args.min_throughput {
        budgets.push(Budget::MinThroughput(rps));
    }
    budgets
}

/// What makes the numbers doubtful: an open loop that did not reach its rate.
fn warnings(profile: &Profile, summary: &Summary) -> Vec<String> {
    let Pace::Rate(target) = profile.pace else {
        return Vec::new();
    };
    let achieved = summary.iterations_per_second;
    if summary.measured_seconds > 0.0 && achieved < target * (1.0 - RATE_TOLERANCE) {
        vec![format!(
            "the achieved rate {achieved:.1}/s fell {:.1}% short of the target {target}/s: the load generator or the server is the bottleneck (see the iterations in flight, --jobs)",
            100.0 * (1.0 - achieved / target)
        )]
    } else {
        Vec::new()
    }
}

#[derive(Serialize)]
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

/// The JSON report of a load run.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LoadReport {
    mcpspec_version: &'static str,
    target: String,
    transport: &'static str,
    era: String,
    started_at: String,
    profile: String,
    /// Iterations a second asked for (open loop).
    target_rate: Option<f64>,
    ended: EndedJson,
    /// Iterations in flight at the end, or due and not started (open loop): unmeasured.
    unfinished: u64,
    summary: Summary,
    budgets: Vec<Verdict>,
    warnings: Vec<String>,
    /// One entry a second of the measured run.
    series: Vec<SecondSummary>,
}

impl LoadReport {
    /// Every budget held and the run went the profile's whole length.
    fn passed(&self) -> bool {
        !self.ended.early && self.budgets.iter().all(|b| b.passed)
    }
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
                .map_or(String::new(), |t| format!(" (target {t}/s)")),
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
    out.push("budgets:".into());
    for b in &r.budgets {
        out.push(format!(
            "  {} {} {}: measured {}",
            if b.passed { "✓" } else { "✗" },
            b.name,
            b.limit,
            b.measured
        ));
    }
    for w in &r.warnings {
        out.push(format!("warning: {w}"));
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
fn junit(r: &LoadReport) -> String {
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
        let name = format!("{} {}", b.name, b.limit);
        let status = if b.passed {
            TestCaseStatus::success()
        } else {
            policy.failure(
                "budget",
                &format!("{} {}: measured {}", b.name, b.limit, b.measured),
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
    )
}
