//! `mcpspec run`: load, select, run against the server, write the reports, and turn the
//! result into the exit code.

pub(super) mod scenarios;

use scenarios::{Asked, Loaded, load, select};

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde_json::Value;

use crate::face::cli::{RunArgs, UsageError, exit};
use crate::language::dsl::{self};
use crate::results::report::events::{Event, Events, Subscriber};
use crate::results::report::result::{RunReport, SuiteResult};
use crate::run::engine::{self, RunConfig};

use super::outputs::Outputs;
use crate::face::app::inputs::usage;
use crate::face::app::runtime::runtime_for;

/// Scenarios of a run that keep their compiled steps (see `ParamInputs::keep_compiled`).
pub(super) const KEEP_COMPILED: usize = 64;

pub(super) fn selection(args: &RunArgs) -> Result<Option<GlobSet>, UsageError> {
    if args.filters.is_empty() {
        return Ok(None);
    }
    let mut builder = GlobSetBuilder::new();
    for f in &args.filters {
        builder.add(Glob::new(f).map_err(|e| UsageError(format!("--filter `{f}`: {e}")))?);
    }
    builder
        .build()
        .map(Some)
        .map_err(|e| UsageError(format!("--filter: {e}")))
}

pub(super) fn run(mut args: RunArgs) -> i32 {
    let mut secrets = Vec::new();
    let (config_params, config_client, _) = match configure(&mut args, &mut secrets) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let sampler = match sampler(&args) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let mut asked = match Asked::parse(&args) {
        Ok(a) => a,
        Err(e) => return usage(e),
    };
    let loaded = match load(&args, &mut asked, config_params, &mut secrets) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let Loaded {
        target,
        params,
        mut selected,
        baseline,
    } = loaded;
    if let Err(code) = default_client(&mut selected, config_client.as_ref()) {
        return code;
    }
    let last_run_path = crate::face::last_run::path_for(args.config.as_deref());
    let last_run = crate::face::last_run::LastRun::load(&last_run_path);
    let (items, shard_info) = match select(&args, &asked, &selected, &last_run, &last_run_path) {
        Ok(s) => s,
        Err(code) => return code,
    };
    crate::ground::redact::remember(&secrets);
    let strict = args.strict;
    let config = RunConfig {
        target,
        params,
        // The JSON and HTML reports show every transcript; JUnit is written as the suites come.
        keep_passing_transcripts: args.json.is_some() || args.html.is_some(),
        wire_validate: args.wire_validate,
        fresh: args.fresh,
        snapshots: std::sync::Arc::new(crate::language::assert::golden::Snapshots::new(
            args.update_snapshots,
        )),
        tool_calls: Default::default(),
        eras: asked.eras,
        jobs: args.jobs.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        }),
    };
    let concurrency = config.jobs.min(items.len());
    let runtime = runtime_for(concurrency);
    let oauth = signed_in_oauth(&config.target);
    if let Some(auth) = &oauth
        && let Err(e) = runtime.block_on(auth.sign_in())
    {
        errln!(
            "error: {}",
            crate::ground::redact::known().redact(&e.to_string())
        );
        // The challenge is the MCP server's own answer: not reaching it is exit 4.
        return if e.step == crate::run::client::http::oauth::DiscoveryStep::Challenge {
            exit::UNREACHABLE
        } else {
            exit::AUTH_REQUIRED
        };
    }
    // The run's outputs, each a subscriber to its events.
    let mut out = Outputs::new(&args, items.len(), secrets, last_run, last_run_path);
    let Outputs {
        live,
        console,
        junit,
        files,
        last_run,
    } = &mut out;
    // The console and JUnit show the suites with the baseline's expected failures.
    let mut shown: Vec<&mut (dyn Subscriber + Send)> = vec![console];
    if let Some(junit) = junit {
        shown.push(junit);
    }
    let mut relabel = crate::face::baseline::Relabel::new(baseline.as_ref(), strict, shown);
    let events = Events::new(vec![live, &mut relabel, files, last_run]);
    let mut report = runtime.block_on(async {
        crate::ground::signals::install();
        // A signal stops the run, which still writes what finished (see `engine::run`).
        crate::ground::signals::defer_exit();
        engine::run(
            items,
            &config,
            crate::ground::signals::interrupted(),
            &events,
        )
        .await
    });
    report.shard = shard_info;
    if let Some(sampler) = &sampler {
        report.models = sampler.usage();
        match sampler.finish() {
            Ok(Some(line)) => errln!("{line}"),
            Ok(None) => {}
            Err(e) => errln!("error: {e}"),
        }
    }
    let applied = baseline
        .as_ref()
        .map(|b| apply_baseline(b, &mut report, strict));
    events.emit(&Event::RunFinished(&report));
    drop(events);
    drop(relabel);
    let failed = out.finish();
    // A token request refused mid-run ended the sign-in: one error, and the run's code.
    let sign_in_failure = oauth.as_ref().and_then(|auth| auth.failure());
    if let Some(e) = &sign_in_failure {
        errln!(
            "error: {}",
            crate::ground::redact::known().redact(&e.to_string())
        );
    }
    let code = match (crate::ground::signals::received(), failed) {
        // Anything started after the handler's kill (the run stopped right after it).
        (Some(signal), _) => {
            crate::ground::signals::kill_all();
            signal
        }
        (None, Some(code)) => code,
        (None, None) if sign_in_failure.is_some() => exit::AUTH_REQUIRED,
        (None, None) => exit_code(&report, applied.as_ref(), strict),
    };
    // The process ends next: its memory goes back to the system at once, so the results
    // and compiled steps of a large run are not freed one allocation at a time first.
    std::mem::forget(report);
    std::mem::forget(selected);
    code
}

/// The run's model profiles (`--models`), answering `profile:` sampling answers from now
/// on, recorded or replayed (`--record-models`, `--replay-models`) within `--max-cost`.
fn sampler(
    args: &RunArgs,
) -> Result<Option<std::sync::Arc<crate::run::eval::sampling::ProfileSampler>>, i32> {
    let Some(path) = &args.models else {
        return Ok(None);
    };
    let profiles = crate::run::eval::sampling::load_profiles(path).map_err(|errors| {
        errln!("{}", errors.render());
        exit::INVALID_INPUT
    })?;
    let options = crate::run::eval::sampling::SamplerOptions {
        record: args.record_models.clone(),
        replay: args.replay_models.clone(),
        max_cost: args.max_cost,
    };
    let sampler = crate::run::eval::sampling::ProfileSampler::new(profiles, &options)
        .map_err(|e| usage(UsageError(e)))?;
    let sampler = std::sync::Arc::new(sampler);
    crate::run::client::answers::set_sampler(sampler.clone());
    Ok(Some(sampler))
}

/// The target's OAuth sign-in, when it has one.
fn signed_in_oauth(
    target: &crate::run::client::Target,
) -> Option<std::sync::Arc<crate::run::client::http::oauth::OAuth>> {
    match &target.kind {
        crate::run::client::TargetKind::Http { auth, .. } => auth.clone(),
        crate::run::client::TargetKind::Stdio { .. } => None,
    }
}

/// The baseline applied to the finished run: expected failures relabelled, stale entries
/// listed in the report.
fn apply_baseline(
    baseline: &crate::face::baseline::Baseline,
    report: &mut RunReport,
    strict: bool,
) -> crate::face::baseline::Applied {
    let applied = crate::face::baseline::apply(baseline, report, strict);
    report.stale_entries = applied
        .stale
        .iter()
        .map(|s| crate::results::report::result::StaleEntry {
            entry: s.entry.clone(),
            file: s.pos.shown_file().to_string(),
            line: s.pos.line,
            message: s.message.clone(),
        })
        .collect();
    applied
}

/// `mcpspec.yaml` applied to `args` (its `imports:` and `paths:` when the command line
/// names none); its parameter values.
/// mcpspec.yaml's parameter values and its `client:` (compiled).
type Configured = (
    Vec<(String, dsl::params::Given)>,
    Option<std::sync::Arc<dsl::ClientScript>>,
    // `load:` (its profile and budgets), for `mcpspec load`.
    (dsl::workload::ProfileParts, Vec<dsl::workload::Budget>),
);

/// mcpspec.yaml's `client:` as the default of each scenario (and so of its pack) that
/// declares none. A `roots` step whose client, so resolved, does not declare `roots` is
/// invalid input.
pub(super) fn default_client(
    selected: &mut [dsl::Scenario],
    client: Option<&std::sync::Arc<dsl::ClientScript>>,
) -> Result<(), i32> {
    if let Some(client) = client {
        for s in selected.iter_mut().filter(|s| s.client.is_none()) {
            s.client = Some(client.clone());
        }
    }
    let errors = crate::ground::load_error::LoadErrors(
        selected
            .iter()
            .filter_map(dsl::Scenario::roots_undeclared)
            .collect(),
    );
    if errors.0.is_empty() {
        return Ok(());
    }
    errln!("{}", errors.render());
    Err(exit::INVALID_INPUT)
}

pub(super) fn configure(args: &mut RunArgs, secrets: &mut Vec<String>) -> Result<Configured, i32> {
    let mut config_params = Vec::new();
    let mut config_client = None;
    let mut config_load = Default::default();
    match crate::face::config::Config::find(args.config.as_deref()) {
        Ok(Some(config)) => {
            let name = args.target_name.clone();
            // `imports:`, like `paths:`, run when the command line names nothing.
            let project_imports = args.paths.is_empty();
            if !project_imports {
                args.project_paths = config.paths();
            }
            let applied = config.apply(args, name.as_deref()).and_then(|()| {
                config_params = config.parameters(secrets)?;
                let known: Vec<String> = config_params.iter().map(|(n, _)| n.clone()).collect();
                config_client = config.client(&known)?;
                config_load = config.load_profile();
                Ok(())
            });
            if let Err(errors) = applied {
                errln!("{}", errors.render());
                return Err(exit::INVALID_INPUT);
            }
            if project_imports {
                args.paths
                    .extend(super::pack::project_paths(&config, args.offline)?);
            }
        }
        Ok(None) if args.target_name.is_some() => {
            return Err(usage(UsageError(format!(
                "--target needs a configuration file ({} or --config FILE)",
                crate::face::config::DEFAULT_FILE
            ))));
        }
        Ok(None) => {}
        Err(errors) => {
            errln!("{}", errors.render());
            return Err(exit::INVALID_INPUT);
        }
    }
    if args.paths.is_empty() {
        return Err(usage(UsageError(
            "nothing to run: give scenario files, folders or packs (or `paths:` in mcpspec.yaml)"
                .into(),
        )));
    }
    Ok((config_params, config_client, config_load))
}

/// 4 when the server could not be started/reached, 3 when authentication failed,
/// 1 when a test failed, else 0.
///
/// 4 only when no suite of the run ever reached the server: a connection that failed
/// after others got through is the server's failure (1), so the code of a run never
/// depends on which connection a flaky server dropped.
pub fn exit_code(
    report: &RunReport,
    applied: Option<&crate::face::baseline::Applied>,
    strict: bool,
) -> i32 {
    let kinds = |k: &str| {
        report
            .suites
            .iter()
            .any(|s: &SuiteResult| s.setup_error_kind.as_deref() == Some(k))
    };
    let reached = report.suites.iter().any(|s| {
        s.era.negotiated.is_some()
            || matches!(s.setup_error_kind.as_deref(), Some("auth" | "protocol"))
    });
    // A baseline may cover a connection failure; without one, it decides the code.
    let uncovered = applied.is_none_or(|a| a.unexpected > 0);
    if uncovered && !reached && (kinds("start") || kinds("unreachable")) {
        exit::UNREACHABLE
    } else if uncovered && kinds("auth") {
        exit::AUTH_REQUIRED
    } else if let Some(a) = applied {
        if a.is_ok() { exit::OK } else { exit::FAILED }
    } else if report.summary.is_green() && !(strict && report.summary.warnings > 0) {
        exit::OK
    } else {
        exit::FAILED
    }
}

/// `--set NAME=VALUE` parameters; `NAME=env:VAR` reads the environment and is a secret.
pub(super) fn parse_params(
    sets: &[String],
    secrets: &mut Vec<String>,
) -> Result<serde_json::Map<String, Value>, UsageError> {
    let mut params = serde_json::Map::new();
    for set in sets {
        // The value is never quoted (it may be a credential), nor text that may be one.
        let is_name = crate::language::dsl::is_variable_name;
        let Some((name, value)) = set.split_once('=') else {
            return Err(UsageError(if is_name(set) {
                format!("--set {set}: expected NAME=VALUE, got no `=`")
            } else {
                "--set: expected NAME=VALUE, got text without `=` (not shown: it may hold a credential)"
                    .into()
            }));
        };
        if !is_name(name) {
            let name = crate::ground::redact::excerpt(name);
            return Err(UsageError(format!(
                "--set {name}=…: `{name}` is not a variable name (letters, digits, `_`)"
            )));
        }
        let value = match value.strip_prefix("env:") {
            Some(var) => {
                let v = std::env::var(var).map_err(|_| {
                    UsageError(format!(
                        "--set {name}=env:{var}: the environment variable is not set"
                    ))
                })?;
                if !v.is_empty() {
                    secrets.push(v.clone());
                }
                v
            }
            None => value.to_string(),
        };
        // Secret-named values are credentials however they were given (the security
        // pack's `wrong_audience_token`, `expired_token`, `other_user_token`).
        if crate::ground::redact::is_secret_param(name) && !value.is_empty() {
            secrets.push(value.clone());
        }
        params.insert(name.to_string(), Value::String(value));
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::report::testdata::bare_suite;

    fn suite(negotiated: Option<&str>, kind: Option<&str>) -> SuiteResult {
        let mut suite = bare_suite("s@legacy", Vec::new());
        suite.era.negotiated = negotiated.map(str::to_string);
        suite.setup_error = kind.map(|k| format!("{k} error"));
        suite.setup_error_kind = kind.map(str::to_string);
        suite
    }

    fn report(suites: Vec<SuiteResult>) -> RunReport {
        RunReport {
            mcpspec_version: String::new(),
            target: String::new(),
            transport: "http".into(),
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

    /// 4 only for a target no suite reached: a connection that failed after others got
    /// through is a failure of the server (1), whichever connection it was.
    #[test]
    fn unreachable_only_when_never_reached() {
        let never = report(vec![
            suite(None, Some("unreachable")),
            suite(None, Some("unreachable")),
        ]);
        assert_eq!(exit_code(&never, None, false), exit::UNREACHABLE);
        for reached in [
            suite(Some("2025-11-25"), None),
            suite(None, Some("protocol")),
        ] {
            let later = report(vec![reached, suite(None, Some("unreachable"))]);
            assert_eq!(exit_code(&later, None, false), exit::FAILED);
        }
    }
}
