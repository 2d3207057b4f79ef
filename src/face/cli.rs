//! Command-line interface. Command and flag names are a contract with scripts outside
//! this repository: add, never rename.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::language::dsl::limits;

mod eval;
mod load;
mod record;
mod target;

pub use eval::{EvalCommand, EvalCompareArgs, EvalExpectArgs, EvalReportArgs, EvalRunArgs};
pub use load::{CompareArgs, LoadArgs, LoadCommand, StdioMode};
pub use record::{ExpectMode, RecordArgs, Split};
pub(crate) use target::split_header;
pub use target::{DEFAULT_TIMEOUT, TargetArgs, UsageError};

/// Exit codes (aligned with the MCP Inspector CLI where they overlap).
pub mod exit {
    pub const OK: i32 = 0;
    /// A test failed, a breaking change was found, or a baseline entry is stale.
    pub const FAILED: i32 = 1;
    /// Invalid input: scenario, pack, rules, baseline, flags.
    pub const INVALID_INPUT: i32 = 2;
    /// The server requires authentication (HTTP 401/403) and none worked.
    pub const AUTH_REQUIRED: i32 = 3;
    /// The server could not be started or reached.
    pub const UNREACHABLE: i32 = 4;
    /// An eval run stopped by a limit before its end (`--max-cost`, `--max-duration`, the
    /// model API circuit breaker), or `eval compare` of such a partial run: the evidence is
    /// incomplete, whatever the trials that ran say.
    pub const INCOMPLETE: i32 = 5;
}

#[derive(Parser, Debug)]
#[command(
    name = "mcpspec",
    // `mcpspec 0.1.0 (commit 1a2b3c4d5e6f)`: Cargo.toml's version and the commit built.
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("MCPSPEC_COMMIT"), ")"),
    about = "Declarative test engine for MCP servers: YAML scenarios, both protocol eras, JUnit reports",
    after_help = "Exit codes: 0 passed (warnings allowed), 1 a test failed, 2 invalid input, 3 authentication required, 4 server could not be started or reached."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "parsed once per process and matched at once: its size costs nothing"
)]
pub enum Command {
    /// Run scenarios (files or folders) against a server.
    Run(RunArgs),
    /// Run scenarios as a workload (virtual clients or a fixed rate), judging every reply;
    /// latency percentiles, throughput and errors against budgets.
    Load(LoadArgs),
    /// Check scenarios and packs (imports, parameters, groups) without running them;
    /// errors as file:line:col with a snippet.
    Validate {
        /// Scenario files or folders, pack folders, built-in packs, mcpspec.yaml,
        /// baselines, contract rules (none: mcpspec.yaml, its `paths:` and baseline).
        paths: Vec<PathBuf>,
        /// Output format on stdout (`json`: one document, errors included; exit codes
        /// unchanged).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Never touch the network: remote packs come from the cache only.
        #[arg(long)]
        offline: bool,
    },
    /// List packs (version, parameters, groups), scenario and check (step) ids.
    List {
        /// Scenario files, folders or built-in packs (none: list the built-in packs).
        paths: Vec<PathBuf>,
        /// Print a Markdown table of the checks (id, level, rule) per scenario.
        #[arg(long, conflicts_with = "format")]
        markdown: bool,
        /// Output format on stdout (`json`: one document).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Never touch the network: remote packs come from the cache only.
        #[arg(long)]
        offline: bool,
    },
    /// Remote packs: re-resolve `mcpspec.lock`, or build a pack archive to publish.
    Pack {
        #[command(subcommand)]
        command: PackCommand,
    },
    /// Send one request and print the raw JSON-RPC response (debugging).
    Call(CallArgs),
    /// Work with result files (`--json` output).
    Report {
        #[command(subcommand)]
        command: ReportCommand,
    },
    /// Connect to a live server and write a starter project: mcpspec.yaml, a pack with a
    /// scenario per tool, prompt, resource and template, and a contract baseline.
    Init(InitArgs),
    /// Take a normalized contract snapshot of a server (one era, one profile).
    Snapshot(SnapshotArgs),
    /// Classify every change between two contract snapshots.
    Diff(DiffArgs),
    /// Print a JSON Schema: of the scenario DSL (default), contract rules files, the
    /// project configuration or pack manifests (`pack.yaml`).
    Schema {
        #[arg(value_enum, default_value_t = SchemaKind::Scenario)]
        kind: SchemaKind,
    },
    /// Evals: run an eval set through a model against the server, compare two runs.
    Eval {
        #[command(subcommand)]
        command: EvalCommand,
    },
    /// OAuth sign-in as a person: `login` (authorization code with PKCE), `logout`,
    /// `status` of the tokens cached for later runs.
    Auth {
        #[command(subcommand)]
        command: AuthCommand,
    },
    /// Stand between a real client and the server (stdio), forward every message unchanged,
    /// and write the session as scenarios: ids captured, volatile values matched, secrets
    /// never written.
    Record(RecordArgs),
}

#[derive(Subcommand, Debug)]
pub enum AuthCommand {
    /// Sign in to a server: print the authorization URL (open it in a browser), wait for
    /// its redirect on a loopback port, and cache the tokens (file mode 0600) for later
    /// runs against that server, which refresh them when they expire.
    Login(AuthLoginArgs),
    /// Remove the cached sign-in of TARGET, or every one without TARGET (no token is left
    /// behind).
    Logout {
        /// A server URL, or a target of the configuration file.
        target: Option<String>,
        /// Project configuration file (default: ./mcpspec.yaml when it exists).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// List the cached sign-ins: server, authorization server, client, scopes, expiry
    /// (never the tokens).
    Status {
        /// Output format on stdout (`json`: one document).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
}

#[derive(Args, Debug)]
pub struct AuthLoginArgs {
    /// A server URL, or a target of the configuration file.
    pub target: String,
    /// The client id registered with the authorization server (default: the target's
    /// `auth: clientId`).
    #[arg(long, value_name = "ID")]
    pub client_id: Option<String>,
    /// A confidential client's secret, from this environment variable (default: a public
    /// client, no secret).
    #[arg(long, value_name = "VAR")]
    pub client_secret_env: Option<String>,
    /// Scope to ask for (default: the target's `auth: scope`, else the challenge's, else the
    /// server's metadata's).
    #[arg(long, value_name = "SCOPE")]
    pub scope: Option<String>,
    /// Open the authorization URL in the default browser too (it is always printed).
    #[arg(long)]
    pub open: bool,
    /// Per-request timeout of the discovery and token requests (default 30s).
    #[arg(long, value_name = "DURATION", value_parser = |s: &str| limits::duration(s, &limits::TIMEOUT))]
    pub timeout: Option<std::time::Duration>,
    /// How long to wait for the browser's redirect.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = |s: &str| limits::duration(s, &limits::TIMEOUT))]
    pub wait: std::time::Duration,
    /// Project configuration file (default: ./mcpspec.yaml when it exists).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum ReportCommand {
    /// Combine the JSON results of shards into one report (input order restored); the
    /// JSON reports of `load --shard K/N` merge into one load report (histograms added).
    Merge {
        /// `--json` result files of the shards.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Write the merged JUnit XML here.
        #[arg(long, value_name = "FILE")]
        junit: Option<PathBuf>,
        /// The JUnit report's shape: `default` (richer: GitLab, GitHub) or `jenkins` (strict:
        /// the Jenkins xUnit plugin's junit-10.xsd).
        #[arg(long, value_enum, value_name = "FLAVOR")]
        junit_flavor: Option<crate::results::junit::Flavor>,
        /// Write the merged JSON result here; `-`: to stdout (the summary then goes to
        /// stderr).
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Write the merged self-contained HTML report here.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// Write the merged security findings as SARIF 2.1.0 here.
        #[arg(long, value_name = "FILE")]
        sarif: Option<PathBuf>,
        /// The file SARIF results point at (default: the scenario file).
        #[arg(long, value_name = "PATH", requires = "sarif")]
        sarif_source: Option<String>,
    },
}

#[derive(Subcommand, Debug)]
pub enum PackCommand {
    /// Resolve the `git:` and `archive:` imports afresh (tags and branches to their
    /// current commits) and write `mcpspec.lock`.
    Update {
        /// Only this remote pack (by its name); the others keep their locked revisions.
        name: Option<String>,
        /// Pack folders or scenario paths whose imports to resolve (default: `paths:` of
        /// mcpspec.yaml).
        #[arg(long = "path", value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
    /// Validate a pack and write it as a reproducible `.tar.gz` (sorted entries, fixed
    /// mtimes), printing its sha256 for importers' `sha256:`.
    Build {
        /// The pack folder (holding `pack.yaml`).
        dir: PathBuf,
        /// The archive to write (default: NAME-VERSION.tar.gz in the working directory).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaKind {
    Scenario,
    Rules,
    Config,
    Pack,
    Evalset,
}

#[derive(Args, Debug)]
pub struct SnapshotArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Era: legacy, modern, auto or a revision.
    #[arg(long, value_name = "ERA", default_value = "auto")]
    pub era: String,
    /// Authorization profile name (recorded; the snapshot goes to OUT/NAME).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Folder to write the snapshot files into.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Writes into DIR: mcpspec.yaml (the target as `default`, the eras, \
report paths), tests/mcp/ (pack.yaml, one scenario per tool, prompt, resource and resource \
template, contract.yaml and the baseline snapshots under contract/ERA/) and .mcpspec/schema/ \
(the JSON Schemas the files' $schema lines point to). Only tools marked readOnlyHint: true are \
called. Secrets are never written: --bearer-env writes the variable's name; secret headers and \
env values are left out with a comment. Then, in DIR: `mcpspec validate tests/mcp` and \
`mcpspec run`."
)]
pub struct InitArgs {
    /// Project folder to write into (created if missing).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Era to connect in and write to the config (repeatable). Default: every era the
    /// server speaks (legacy and 2026-07-28 are each tried).
    #[arg(long = "era", value_name = "ERA")]
    pub eras: Vec<String>,
    /// Overwrite files that already exist.
    #[arg(long)]
    pub force: bool,
}

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// Baseline snapshot folder.
    pub baseline: PathBuf,
    /// Candidate snapshot folder.
    pub candidate: PathBuf,
    /// Contract rules (YAML): what fails, what is accepted.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also write a JUnit XML report (a testcase per change).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// The JUnit report's shape: `default` (richer: GitLab, GitHub) or `jenkins` (strict:
    /// the Jenkins xUnit plugin's junit-10.xsd).
    #[arg(long, value_enum, value_name = "FLAVOR")]
    pub junit_flavor: Option<crate::results::junit::Flavor>,
    /// Names of the two sides in the reports (default: the snapshots' file or folder names).
    #[arg(long, value_name = "BASE..CANDIDATE")]
    pub label: Option<String>,
}

/// `--format` of the commands that print a result (`diff`, `validate`, `list`).
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Scenario files, folders or built-in packs (default: `paths` of mcpspec.yaml).
    pub paths: Vec<PathBuf>,
    /// `paths:` of mcpspec.yaml when the command line names a subset instead: an
    /// expected-failures entry of a project scenario that is not run here is ignored.
    #[arg(skip)]
    pub project_paths: Vec<PathBuf>,
    /// Project configuration file (default: ./mcpspec.yaml when it exists).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A target named in the configuration file.
    #[arg(long = "target", value_name = "NAME")]
    pub target_name: Option<String>,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Era: legacy, modern, auto or a revision (YYYY-MM-DD). Repeat for a matrix.
    #[arg(long = "era", value_name = "ERA")]
    pub eras: Vec<String>,
    /// Write a JUnit XML report here.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// The JUnit report's shape: `default` (richer: GitLab, GitHub) or `jenkins` (strict:
    /// the Jenkins xUnit plugin's junit-10.xsd); default: `junitFlavor` of mcpspec.yaml.
    #[arg(long, value_enum, value_name = "FLAVOR")]
    pub junit_flavor: Option<crate::results::junit::Flavor>,
    /// Write the JSON result here; `-`: to stdout (the console report then goes to stderr).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a self-contained HTML report here (opens offline).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the security findings (suites tagged `security`) as SARIF 2.1.0 here, for
    /// GitHub code scanning.
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
    /// The file SARIF results point at (the server's entry source, relative to the
    /// repository root), so code scanning shows them on the server's code; default: the
    /// scenario file.
    #[arg(long, value_name = "PATH", requires = "sarif")]
    pub sarif_source: Option<String>,
    /// Run only scenarios whose tags match: a tag or an expression such as
    /// `smoke and not slow` (repeatable: any of them).
    #[arg(long = "tag", value_name = "EXPR")]
    pub tags: Vec<String>,
    /// A parameter available to every scenario as a template variable, `NAME=VALUE`
    /// (repeatable). `NAME=env:VAR` reads the environment variable and treats the value as a
    /// secret: it is redacted from every output (so is the value of any NAME ending in `_token`).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Run only shard K of N (deterministic partition of the selected scenario@era
    /// items; the shards together are exactly the full run).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Run only scenarios whose id or `id@era` matches this glob (repeatable).
    #[arg(long = "filter", value_name = "GLOB")]
    pub filters: Vec<String>,
    /// Scenarios run concurrently (over stdio, those that share a warm server process take
    /// turns on it; see `--fresh`). Default: CPU cores
    /// (1 to 1024).
    #[arg(long, value_name = "N", value_parser = |s: &str| limits::number(s, &limits::JOBS))]
    pub jobs: Option<usize>,
    /// Over stdio, every scenario on a server process of its own, started for it (as if
    /// each said `fresh: true`). Without it, scenarios that only read share a warm
    /// process per era, one after another.
    #[arg(long)]
    pub fresh: bool,
    /// Show passing steps and transcripts too.
    #[arg(long, short)]
    pub verbose: bool,
    /// Color: auto (TTY and no NO_COLOR), always, never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Baseline of known failures (the official conformance suite's format, plus
    /// `scenario@era` qualifiers): listed failures pass, stale entries fail.
    #[arg(long, value_name = "FILE")]
    pub expected_failures: Option<PathBuf>,
    /// Warnings (`level: should` failures) fail the run too.
    #[arg(long)]
    pub strict: bool,
    /// Never touch the network: remote packs come from the cache only.
    #[arg(long)]
    pub offline: bool,
    /// Validate every message the server sends against the message schema of its
    /// revision; a violation fails the step that received it.
    #[arg(long)]
    pub wire_validate: bool,
    /// Write a baseline listing this run's failures to FILE (then exit as usual). Refused
    /// when no scenario connected in some era (the server does not speak it), unless --force.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// With --write-baseline: write it even when no scenario connected in some era.
    #[arg(long, requires = "write_baseline")]
    pub force: bool,
    /// Rerun only the scenario@era items that failed last time (recorded by every run in
    /// .mcpspec/last-run.json next to the configuration file, else under the cache
    /// folder). No recorded failure among the selection: run everything.
    #[arg(long, visible_alias = "lf")]
    pub last_failed: bool,
    /// Run, then rerun the affected scenarios whenever a scenario file, the configuration,
    /// the baseline or the stdio server's program changes (polled); Ctrl-C stops.
    #[arg(long)]
    pub watch: bool,
    /// With --watch: also watch this file or folder (e.g. the server's sources); a change
    /// reruns everything (repeatable).
    #[arg(long = "watch-path", value_name = "PATH", requires = "watch")]
    pub watch_paths: Vec<PathBuf>,
    /// Set by --watch: rerun only the scenarios of these (changed) files.
    #[arg(skip)]
    pub only_files: Vec<PathBuf>,
    /// Write new and changed `snapshot` files instead of failing those steps.
    #[arg(long)]
    pub update_snapshots: bool,
    /// Model profiles for sampling answers that name one (`profile: NAME`): the `models:`
    /// of this YAML file (an eval set, or a file with only `models:`).
    #[arg(long, value_name = "FILE")]
    pub models: Option<PathBuf>,
    /// Record the model answers of `--models` sampling answers in this file (JSON; no key,
    /// secrets masked), for `--replay-models`.
    #[arg(
        long,
        value_name = "FILE",
        requires = "models",
        conflicts_with = "replay_models"
    )]
    pub record_models: Option<PathBuf>,
    /// Answer `--models` sampling answers from this recording (`--record-models`): no key,
    /// no network, no cost; a request it lacks errors its step.
    #[arg(long, value_name = "FILE", requires = "models")]
    pub replay_models: Option<PathBuf>,
    /// Stop asking the `--models` models once their estimated spend could pass this many USD
    /// (needs each profile's `price`): later sampling requests are answered an error and
    /// their steps error.
    #[arg(long, value_name = "USD", value_parser = eval::parse_usd, requires = "models")]
    pub max_cost: Option<f64>,
}

#[derive(Args, Debug)]
pub struct CallArgs {
    /// JSON-RPC method, e.g. tools/list.
    pub method: String,
    /// Params as JSON.
    #[arg(long, value_name = "JSON")]
    pub params: Option<String>,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Era: legacy, modern, auto or a revision.
    #[arg(long, value_name = "ERA", default_value = "auto")]
    pub era: String,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}
