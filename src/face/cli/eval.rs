//! The `eval` subcommands' arguments: running an eval set through a model, comparing two
//! results files, capturing expectations from one, rendering one as HTML.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::TargetArgs;
use crate::language::dsl::limits;

#[derive(Subcommand, Debug)]
pub enum EvalCommand {
    /// Run an eval set's tasks through a model (OpenAI-compatible or Anthropic) with the
    /// server's tools; write the results (JSON) and JUnit.
    Run(Box<EvalRunArgs>),
    /// Compare two eval results files task by task: buckets, success-rate delta with an
    /// exact paired test, judge-score and cost deltas; exit 1 on a regression, 5 when a side
    /// is a partial run (unless --allow-partial).
    Compare(Box<EvalCompareArgs>),
    /// Write the tool calls a run's model made as `calls:`/`args:` expectations, for review
    /// (capture mode).
    Expect(EvalExpectArgs),
    /// Write the HTML report of a results file (the page `eval run --html` writes): per task
    /// its trials, tool calls, answers, judge verdicts and spend.
    Report(EvalReportArgs),
}

#[derive(Args, Debug)]
pub struct EvalReportArgs {
    /// Results file of a run (`eval run --json`; a several-models file gives a section per
    /// model).
    pub results: PathBuf,
    /// Write the HTML page here.
    #[arg(long, value_name = "FILE")]
    pub html: PathBuf,
}

#[derive(Args, Debug)]
pub struct EvalExpectArgs {
    /// Results file of a run (`eval run --json`).
    pub results: PathBuf,
    /// From a several-models results file, the run of this profile.
    #[arg(long, value_name = "PROFILE")]
    pub model: Option<String>,
    /// Write the expectations here instead of to stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Exit codes: 0 every trial succeeded (or a `capability` set), 1 a trial of a \
`regression` set failed, 5 the run was stopped by --max-cost, --max-duration or the circuit \
breaker (--max-api-failures): partial results written, 2 invalid input (with --replay also: the recording does not match the \
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
    /// profile's `price`; a reply without `usage` is costed from its size, marked
    /// estimated); what finished is written, marked aborted, exit 5.
    #[arg(long, value_name = "USD", value_parser = parse_usd)]
    pub max_cost: Option<f64>,
    /// Longest the whole command may take (every `--model`): then it stops, cuts the trials
    /// in flight, writes what finished (marked aborted) and exits 5; `off`: no limit.
    #[arg(long, value_name = "DURATION", default_value = "1h",
          value_parser = parse_max_duration)]
    pub max_duration: MaxDuration,
    /// The circuit breaker: this many model requests failing in a row (after their
    /// retries: timeouts, 5xx, 429) stop the run, written and marked aborted, exit 5;
    /// `off` (or 0): never.
    #[arg(long, value_name = "N", default_value = "5", value_parser = parse_failures)]
    pub max_api_failures: MaxFailures,
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
    pub affected_scope: crate::run::eval::affected::AffectedScope,
    /// Write the results (JSON, `mcpspec-eval-results/1`) here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a JUnit XML report here (a testcase per task).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// The JUnit report's shape: `default` (richer: GitLab, GitHub) or `jenkins` (strict:
    /// the Jenkins xUnit plugin's junit-10.xsd).
    #[arg(long, value_enum, value_name = "FLAVOR")]
    pub junit_flavor: Option<crate::results::junit::Flavor>,
    /// Write a self-contained HTML report here: per task its trials, the tool calls with
    /// their arguments, the final answer, the judge's score and reason, the spend.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
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
    /// The JUnit report's shape: `default` (richer: GitLab, GitHub) or `jenkins` (strict:
    /// the Jenkins xUnit plugin's junit-10.xsd).
    #[arg(long, value_enum, value_name = "FLAVOR")]
    pub junit_flavor: Option<crate::results::junit::Flavor>,
    /// Write the comparison as a self-contained HTML page here: the verdict, the counts, the
    /// tasks by bucket (regressions, judge-score changes, improvements, missing, unchanged),
    /// each run's spend.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write a Markdown summary here (verdict, counts per bucket, regressions, judge-score
    /// changes, cost): for a CI step summary or a pull-request comment.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Append the Markdown summary to the file `$GITHUB_STEP_SUMMARY` names (GitHub
    /// Actions); a warning when the variable is not set.
    #[arg(long)]
    pub step_summary: bool,
    /// List every task, unchanged passing ones too.
    #[arg(long, short)]
    pub verbose: bool,
    /// Compare a partial run (stopped by `--max-cost`, `--max-duration`, the circuit
    /// breaker, Ctrl-C, or with tasks that never ran) anyway. Without it such a comparison
    /// exits 5 and names the tasks never judged: a partial candidate never clears the gate.
    #[arg(long)]
    pub allow_partial: bool,
    /// Largest accepted drop of a task's mean judge score (0 to 1, paired tasks with judged
    /// answers on both sides), or `off`.
    #[arg(long, value_name = "SCORE", default_value = "0.1")]
    pub max_judge_drop: String,
}

/// `--max-duration`: a duration, or none (`off`).
#[derive(Debug, Clone, Copy)]
pub struct MaxDuration(pub Option<Duration>);

/// `--max-api-failures`: a count, or none (`off`, 0).
#[derive(Debug, Clone, Copy)]
pub struct MaxFailures(pub Option<u32>);

fn parse_max_duration(s: &str) -> Result<MaxDuration, String> {
    if s.trim().eq_ignore_ascii_case("off") {
        return Ok(MaxDuration(None));
    }
    limits::duration(s, &limits::TIMEOUT).map(|d| MaxDuration(Some(d)))
}

fn parse_failures(s: &str) -> Result<MaxFailures, String> {
    if s.trim().eq_ignore_ascii_case("off") {
        return Ok(MaxFailures(None));
    }
    match s.trim().parse::<u32>() {
        Ok(0) => Ok(MaxFailures(None)),
        Ok(n) => Ok(MaxFailures(Some(n))),
        Err(_) => Err(format!("`{s}`: expected a whole number, or `off`")),
    }
}

/// A spending cap in USD: a finite number, 0 or more (`0.50`, `$2`).
pub(super) fn parse_usd(s: &str) -> Result<f64, String> {
    match s.trim().trim_start_matches('$').parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("`{s}`: expected an amount in USD such as `0.50`")),
    }
}
