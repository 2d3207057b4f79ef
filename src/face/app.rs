//! What each command does: wiring CLI → dsl → engine → reports → exit code.
//!
//! The module root: dispatch and what several commands share; one file per command
//! under `app/`.

mod auth;
mod call;
mod eval;
mod eval_compare;
mod eval_expect;
mod eval_judge;
mod eval_report;
pub mod init;
mod list;
mod load;
mod load_html;
mod merge;
mod outputs;
mod pack;
mod progress;
pub mod record;
mod run;
mod snapshot;
mod validate;
mod watch;

use std::path::{Path, PathBuf};

use clap::Parser;

use crate::face::cli::{Cli, Command, Format, SchemaKind, UsageError, exit};
use crate::language::dsl;
use crate::protocol::era::Era;
use crate::results::report;
use crate::results::report::result::RunReport;
use crate::run::client::{ConnectErrorKind, Connection};

use call::call;
pub use list::checks_markdown;
use list::list;
use merge::merge;
pub use run::exit_code;
use run::run;
use snapshot::{diff, snapshot};
use validate::validate;

pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    exit::OK
                }
                _ => exit::INVALID_INPUT,
            };
        }
    };
    match cli.command {
        Command::Schema { kind } => {
            outln!(
                "{}",
                match kind {
                    SchemaKind::Scenario => schema_text(),
                    SchemaKind::Rules => rules_schema_text(),
                    SchemaKind::Config => config_schema_text(),
                    SchemaKind::Pack => pack_schema_text(),
                    SchemaKind::Evalset => evalset_schema_text(),
                }
            );
            exit::OK
        }
        Command::Report {
            command:
                crate::face::cli::ReportCommand::Merge {
                    files,
                    junit,
                    junit_flavor,
                    json,
                    html,
                    sarif,
                    sarif_source,
                },
        } => merge(
            &files,
            &ReportPaths {
                junit,
                junit_flavor: junit_flavor.unwrap_or_default(),
                json,
                html,
                sarif,
                sarif_source,
            },
        ),
        Command::Init(args) => runtime().block_on(crate::face::app::init::init(args)),
        Command::Snapshot(args) => runtime().block_on(snapshot(args)),
        Command::Diff(args) => diff(args),
        Command::Validate {
            paths,
            format,
            offline,
        } => validate(&paths, format, offline),
        Command::List {
            paths,
            markdown,
            format,
            offline,
        } => list(&paths, markdown, format, offline),
        Command::Pack { command } => pack::main(command),
        Command::Run(args) if args.watch => watch::watch(args),
        Command::Run(args) => run(args),
        Command::Load(args) => load::load(args),
        Command::Call(args) => runtime().block_on(call(args)),
        Command::Eval { command } => eval::main(command),
        Command::Auth { command } => auth::main(command),
        Command::Record(args) => record::record(args),
    }
}

/// The eval set schema as committed in `schema/evalset.schema.json`.
pub fn evalset_schema_text() -> String {
    serde_json::to_string_pretty(&crate::run::eval::set::schema()).expect("schema serializes")
}

/// The DSL schema as committed in `schema/scenario.schema.json`.
pub fn schema_text() -> String {
    serde_json::to_string_pretty(&dsl::scenario_schema()).expect("schema serializes")
}

/// The pack manifest schema as committed in `schema/pack.schema.json`.
pub fn pack_schema_text() -> String {
    serde_json::to_string_pretty(&dsl::pack_schema()).expect("schema serializes")
}

/// The project configuration schema as committed in `schema/config.schema.json`.
pub fn config_schema_text() -> String {
    let schema = schemars::schema_for!(crate::face::config::ConfigDoc);
    serde_json::to_string_pretty(&schema).expect("schema serializes")
}

/// The contract rules schema as committed in `schema/rules.schema.json`.
pub fn rules_schema_text() -> String {
    let schema = schemars::schema_for!(crate::language::contract_rules::RulesDoc);
    serde_json::to_string_pretty(&schema).expect("schema serializes")
}

/// A single-threaded runtime: one connection at a time is I/O-bound, and cross-thread
/// wake-ups would cost more than they give.
fn runtime() -> tokio::runtime::Runtime {
    runtime_for(1)
}

/// A runtime for `concurrency` connections at once: worker threads only when several
/// scenarios run in parallel.
pub(crate) fn runtime_for(concurrency: usize) -> tokio::runtime::Runtime {
    let mut builder = if concurrency <= 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(
            concurrency.min(
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1),
            ),
        );
        b
    };
    builder.enable_all().build().expect("tokio runtime")
}

pub(crate) fn usage(e: UsageError) -> i32 {
    errln!("error: {}", crate::ground::load_error::bounded(e.0));
    exit::INVALID_INPUT
}

/// Load for `validate` and `list`: no parameter values are needed (required parameters
/// may stay unset), but everything else is checked. `validate` only counts the steps, so
/// it drops them once checked (`release_steps`).
pub(crate) fn load(
    paths: &[PathBuf],
    release_steps: bool,
    format: Format,
    offline: bool,
) -> Result<dsl::load::LoadedSet, i32> {
    let sources = pack::sources(offline).map_err(|errors| invalid(&errors, format))?;
    let mut inputs = dsl::pack::ParamInputs {
        release_steps,
        remote: Some(sources.clone()),
        ..Default::default()
    };
    project_parameters(&mut inputs);
    dsl::load::load_all(paths, &inputs)
        .map_err(|errors| pack::unreachable_or(&sources, invalid(&errors, format)))
}

/// `parameters:` of mcpspec.yaml (in the working directory) as `validate` and `list` see
/// them: template variables of every scenario, as in `run`, but no value needed (an
/// `env:VAR` not set is a name only). A broken configuration is left to `validate` of it.
pub(crate) fn project_parameters(inputs: &mut dsl::pack::ParamInputs) {
    if let Ok(Some(config)) = crate::face::config::Config::find(None) {
        let (given, unvalued) = config.parameters_to_validate();
        inputs.given = given.into_iter().collect();
        inputs.unvalued = unvalued;
    }
}

/// Report input errors (exit 2): rendered on stderr, or with `--format json` as the
/// document on stdout (`{"ok": false, "errors": [...]}`), so a script reads one stream.
pub(crate) fn invalid(errors: &dsl::LoadErrors, format: Format) -> i32 {
    match format {
        Format::Text => errln!("{}", errors.render()),
        Format::Json => {
            let doc = serde_json::json!({ "ok": false, "errors": errors.to_json() });
            outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
    }
    exit::INVALID_INPUT
}

/// A report path of `-`: stdout.
pub(crate) fn is_stdout(path: Option<&Path>) -> bool {
    path.is_some_and(|p| p.as_os_str() == "-")
}

fn connect_exit(kind: ConnectErrorKind) -> i32 {
    match kind {
        ConnectErrorKind::Start | ConnectErrorKind::Unreachable => exit::UNREACHABLE,
        ConnectErrorKind::Auth => exit::AUTH_REQUIRED,
        ConnectErrorKind::Protocol => exit::FAILED,
    }
}

pub(crate) async fn open(
    args: &crate::face::cli::TargetArgs,
    era: &str,
) -> Result<(Connection, Vec<String>), i32> {
    let (target, secrets) = args.to_target().map_err(usage)?;
    let era = Era::parse(era).map_err(|e| usage(UsageError(format!("--era: {e}"))))?;
    crate::ground::signals::install();
    match Connection::open(&target, &era.label, &era.request).await {
        Ok(c) => Ok((c, secrets)),
        Err(e) => Err(connect_failed(&e, &secrets)),
    }
}

/// Print why a connection failed (redacted, with the server's last stderr lines); the
/// exit code that goes with it.
pub(crate) fn connect_failed(e: &crate::run::client::ConnectError, secrets: &[String]) -> i32 {
    errln!(
        "error: {}",
        crate::ground::redact::for_terminal(&e.message, secrets)
    );
    if let Some(tail) = &e.stderr_tail {
        errln!(
            "server stderr (last lines):\n{}",
            crate::ground::redact::for_terminal(tail, secrets)
        );
    }
    connect_exit(e.kind)
}

pub(crate) fn write_reports_file(path: &Path, text: String) -> Result<(), i32> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = std::fs::create_dir_all(dir);
    }
    std::fs::write(path, text).map_err(|e| {
        errln!("error: cannot write {}: {e}", path.display());
        exit::INVALID_INPUT
    })
}

/// Where a run's (or a merge's) report files go.
pub(crate) struct ReportPaths {
    pub junit: Option<PathBuf>,
    pub junit_flavor: crate::results::junit::Flavor,
    pub json: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub sarif: Option<PathBuf>,
    pub sarif_source: Option<String>,
}

pub(crate) fn write_reports(
    report: &RunReport,
    paths: &ReportPaths,
    secrets: &[String],
) -> Result<(), i32> {
    if let Some(path) = &paths.junit {
        write_reports_file(
            path,
            report::junit::to_junit(report, secrets, paths.junit_flavor),
        )?;
    }
    if let Some(path) = &paths.html {
        write_reports_file(path, report::html::to_html(report, secrets))?;
    }
    if let Some(path) = &paths.sarif {
        let sarif = report::sarif::to_sarif(report, secrets, paths.sarif_source.as_deref());
        write_reports_file(path, sarif)?;
    }
    if let Some(path) = &paths.json {
        if is_stdout(Some(path)) {
            outln!("{}", report::json::to_json(report, secrets).trim_end());
        } else {
            write_reports_file(path, report::json::to_json(report, secrets))?;
        }
    }
    Ok(())
}
