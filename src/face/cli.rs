//! Command-line interface. Command and flag names are a contract with scripts outside
//! this repository: add, never rename.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::language::dsl::limits;
use crate::run::client::{DEFAULT_MAX_MESSAGE_BYTES, Target, TargetKind};

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
}

#[derive(Subcommand, Debug)]
pub enum EvalCommand {
    /// Run an eval set's tasks through a model (OpenAI-compatible or Anthropic) with the
    /// server's tools; write the results (JSON) and JUnit.
    Run(Box<EvalRunArgs>),
    /// Compare two eval results files task by task: buckets, success-rate delta with an
    /// exact paired test, cost deltas; exit 1 on a regression.
    Compare(Box<EvalCompareArgs>),
}

#[derive(Args, Debug)]
#[command(
    after_help = "Exit codes: 0 every trial succeeded (or a `capability` set), 1 a trial of a \
`regression` set failed, 2 invalid input (with --replay also: the recording does not match the \
server's tools or the set), 3 the model API key is missing or refused (or the \
server requires authentication), 4 the server or the model API could not be reached, 130 \
interrupted (partial results written). After exit 3 or 4 the trials that finished are written too, marked `aborted`."
)]
pub struct EvalRunArgs {
    /// The eval set file (`*.eval.yaml`).
    pub set: PathBuf,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Era: legacy, modern, auto or a revision.
    #[arg(long, value_name = "ERA", default_value = "auto")]
    pub era: String,
    /// The model profile (a key of the set's `models:`). Repeat it to run the set once per
    /// profile, one after the other, reported side by side.
    #[arg(long = "model", value_name = "PROFILE", required = true)]
    pub model: Vec<String>,
    /// Override the profile's base URL (of every `--model`).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Override the profile's model name (one `--model` only).
    #[arg(long, value_name = "NAME")]
    pub model_name: Option<String>,
    /// Override the profile's key: the environment variable holding it (every `--model`).
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// Record every model exchange (request and reply, per task, trial and turn, with the
    /// tool list's hash) in this folder, for `--replay`. Runs the whole set.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["replay", "affected_by"])]
    pub record: Option<PathBuf>,
    /// Answer from a recording (`--record DIR`) instead of the model: no key, no request,
    /// no cost. Exit 2 when the server's tools or the set no longer match it.
    #[arg(long, value_name = "DIR")]
    pub replay: Option<PathBuf>,
    /// Longest one model request may take (overrides the profile's `timeout`; default 120s).
    #[arg(long, value_name = "DURATION",
          value_parser = |s: &str| limits::duration(s, &limits::TIMEOUT))]
    pub model_timeout: Option<Duration>,
    /// Stop the run before its estimated model spend could pass this many USD (needs the
    /// profile's `price`); what finished is written, marked aborted, exit 1.
    #[arg(long, value_name = "USD", value_parser = parse_usd)]
    pub max_cost: Option<f64>,
    /// The model profile that grades `answer: {judge: …}` expectations (overrides the set's
    /// `judge:`); its requests count in `--max-cost`.
    #[arg(long, value_name = "PROFILE")]
    pub judge: Option<String>,
    /// Override the judge profile's base URL.
    #[arg(long, value_name = "URL")]
    pub judge_base_url: Option<String>,
    /// Run only the tasks a contract diff puts at risk (`mcpspec diff --format json` output).
    #[arg(long, value_name = "DIFF.json")]
    pub affected_by: Option<PathBuf>,
    /// How far `--affected-by` reaches: `wide` (default) keeps every tool-calling and
    /// noToolCall task when a description, title, tool or the instructions changed (a
    /// reworded tool can take prompts meant for another); `direct` keeps only the tasks that
    /// name a changed tool.
    #[arg(
        long,
        value_enum,
        value_name = "SCOPE",
        default_value = "wide",
        requires = "affected_by"
    )]
    pub affected_scope: crate::run::eval::affected::Scope,
    /// Write the results (JSON, `mcpspec-eval-results/1`) here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a JUnit XML report here (a testcase per task).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Trials run concurrently, each worker with its own server connection (default 1).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = |s: &str| limits::number(s, &limits::JOBS))]
    pub jobs: usize,
}

#[derive(Args, Debug)]
pub struct EvalCompareArgs {
    /// Results file of the base run (`eval run --json`).
    pub base: PathBuf,
    /// Results file of the candidate run (default: BASE again, for two models of one
    /// several-models file: `--base-model A --candidate-model B`).
    pub candidate: Option<PathBuf>,
    /// From a several-models results file (`eval run --model A --model B`), compare the
    /// run of this profile (on both sides, unless a side names its own).
    #[arg(long, value_name = "PROFILE")]
    pub model: Option<String>,
    /// The base side's profile (two models on one server: `--base-model A
    /// --candidate-model B`).
    #[arg(long, value_name = "PROFILE")]
    pub base_model: Option<String>,
    /// The candidate side's profile.
    #[arg(long, value_name = "PROFILE")]
    pub candidate_model: Option<String>,
    /// A task passes when its success rate is at least this (`0.8` or `80%`).
    #[arg(long, value_name = "RATE", default_value = "0.8")]
    pub pass_rate: String,
    /// Largest accepted rise of a task's (and the total's) mean tool calls per trial, in
    /// percent (`25%`), or `off`.
    #[arg(long, value_name = "PCT", default_value = "25%")]
    pub max_calls_increase: String,
    /// Largest accepted rise of mean tokens (input + output) per trial, or `off`.
    #[arg(long, value_name = "PCT", default_value = "25%")]
    pub max_tokens_increase: String,
    /// Largest accepted rise of mean tool errors per trial, or `off` (any rise from 0 counts).
    #[arg(long, value_name = "PCT", default_value = "25%")]
    pub max_tool_errors_increase: String,
    /// Write the comparison as JSON here; `-`: to stdout (the table then goes to stderr).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a JUnit XML report here (a testcase per task).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// List every task, unchanged passing ones too.
    #[arg(long, short)]
    pub verbose: bool,
}

#[derive(Subcommand, Debug)]
pub enum ReportCommand {
    /// Combine the JSON results of shards into one report (input order restored).
    Merge {
        /// `--json` result files of the shards.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Write the merged JUnit XML here.
        #[arg(long, value_name = "FILE")]
        junit: Option<PathBuf>,
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
}

/// `--format` of the commands that print a result (`diff`, `validate`, `list`).
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

#[derive(Args, Debug, Clone)]
pub struct TargetArgs {
    /// Target: spawn this server command line over stdio.
    #[arg(long, value_name = "COMMAND LINE", conflicts_with = "url")]
    pub stdio: Option<String>,
    /// Target: Streamable HTTP endpoint URL.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// HTTP header sent with every request, `"Name: value"` (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// Name of an environment variable holding a bearer token (never printed).
    #[arg(long, value_name = "VAR")]
    pub bearer_env: Option<String>,
    /// Environment variable for the stdio server, `K=V` (repeatable).
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Working directory for the stdio server.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Per-request timeout, e.g. `500ms`, `30s` (default 30s; 1ms to 1day).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<Duration>,
    /// Largest message accepted from the server, in bytes (1024 to 1073741824).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_MESSAGE_BYTES,
          value_parser = |s: &str| limits::number(s, &limits::MESSAGE_BYTES))]
    pub max_message_size: usize,
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Scenario files, folders or built-in packs (default: `paths` of mcpspec.yaml).
    pub paths: Vec<PathBuf>,
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
    /// Write a baseline listing this run's failures to FILE (then exit as usual).
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
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

/// Per-request timeout when neither a flag nor the configuration sets one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

fn parse_duration(s: &str) -> Result<Duration, String> {
    limits::duration(s, &limits::TIMEOUT).map_err(|e| format!("{e} (expected e.g. `500ms`, `30s`)"))
}

/// A usage error (exit 2).
#[derive(Debug)]
pub struct UsageError(pub String);

/// A target URL is absolute http(s): `127.0.0.1:8080/mcp` is a usage mistake (exit 2) told
/// with its fix, not a connection failure (exit 4, "relative URL without a base").
fn check_url(url: &str) -> Result<(), UsageError> {
    let fix = |why: &str| {
        let bare = url.split_once("://").map_or(url, |(_, rest)| rest);
        UsageError(format!(
            "the target URL `{url}` {why}: add http:// (or https:// for TLS), e.g. `--url http://{bare}`"
        ))
    };
    if !url.contains("://") {
        return Err(fix("has no scheme"));
    }
    match reqwest::Url::parse(url) {
        Err(e) => Err(UsageError(format!(
            "the target URL `{url}` is not a URL: {e}"
        ))),
        Ok(u) if !matches!(u.scheme(), "http" | "https") => Err(fix(&format!(
            "has the scheme `{}:`, not http or https",
            u.scheme()
        ))),
        Ok(_) => Ok(()),
    }
}

impl TargetArgs {
    /// Build the target; also returns the secrets it holds (to redact from all output).
    pub fn to_target(&self) -> Result<(Target, Vec<String>), UsageError> {
        let mut secrets = Vec::new();
        let kind = match (&self.stdio, &self.url) {
            (Some(cmd), None) => {
                let words = crate::ground::platform::split_command(cmd).map_err(|e| {
                    UsageError(format!("--stdio: cannot split the command line: {e}"))
                })?;
                let Some((program, args)) = words.split_first() else {
                    return Err(UsageError("--stdio: the command line is empty".into()));
                };
                let env = self
                    .env
                    .iter()
                    .map(|kv| {
                        kv.split_once('=')
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                            .ok_or_else(|| UsageError(format!("--env `{kv}`: expected K=V")))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                TargetKind::Stdio {
                    program: program.clone(),
                    args: args.to_vec(),
                    env,
                    cwd: self.cwd.clone(),
                }
            }
            (None, Some(url)) => {
                check_url(url)?;
                let headers = self
                    .headers
                    .iter()
                    .map(|h| {
                        h.split_once(':')
                            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                            .filter(|(k, _)| !k.is_empty())
                            .ok_or_else(|| {
                                UsageError(format!("--header `{h}`: expected \"Name: value\""))
                            })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                for (k, v) in &headers {
                    if is_sensitive_header(k) && !v.is_empty() {
                        secrets.push(v.clone());
                        // `Scheme credentials` (any scheme, any case): the credential alone too.
                        if let Some((_, credential)) = v.split_once(char::is_whitespace) {
                            let credential = credential.trim();
                            if !credential.is_empty() {
                                secrets.push(credential.to_string());
                            }
                        }
                    }
                }
                let bearer = match &self.bearer_env {
                    Some(var) => {
                        let token = std::env::var(var).map_err(|_| {
                            UsageError(format!(
                                "--bearer-env {var}: the environment variable is not set"
                            ))
                        })?;
                        if token.is_empty() {
                            return Err(UsageError(format!(
                                "--bearer-env {var}: the variable is empty"
                            )));
                        }
                        secrets.push(token.clone());
                        Some(token)
                    }
                    None => None,
                };
                TargetKind::Http {
                    url: url.clone(),
                    headers,
                    bearer,
                }
            }
            (None, None) => {
                return Err(UsageError(
                    "no target: pass --stdio \"<command line>\" or --url <URL>".into(),
                ));
            }
            (Some(_), Some(_)) => return Err(UsageError("give --stdio or --url, not both".into())),
        };
        if !self.headers.is_empty() && matches!(kind, TargetKind::Stdio { .. }) {
            return Err(UsageError("--header applies to --url targets".into()));
        }
        for (k, v) in self.env.iter().filter_map(|kv| kv.split_once('=')) {
            if is_sensitive_name(k) && !v.is_empty() {
                secrets.push(v.to_string());
            }
        }
        // Known to every excerpt cut from here on (see `crate::ground::redact`).
        crate::ground::redact::remember(&secrets);
        Ok((
            Target {
                kind,
                timeout: self.timeout.unwrap_or(DEFAULT_TIMEOUT),
                max_message_bytes: self.max_message_size,
                wire_validation: false,
            },
            secrets,
        ))
    }
}

pub(crate) use crate::ground::redact::{is_sensitive_header, is_sensitive_name};

/// A spending cap in USD: a finite number, 0 or more (`0.50`, `$2`).
fn parse_usd(s: &str) -> Result<f64, String> {
    match s.trim().trim_start_matches('$').parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("`{s}`: expected an amount in USD such as `0.50`")),
    }
}
