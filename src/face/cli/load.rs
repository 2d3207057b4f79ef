//! `mcpspec load`: the arguments of a load run — what `run` takes to find scenarios and a
//! target, and the load profile and budgets. Out-of-range profile values are usage errors
//! (exit 2) told by clap at the flag.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::{ColorChoice, RunArgs, TargetArgs};
use crate::language::dsl::limits;

use limits::{CLIENTS, LOAD_DURATION};

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Profile: --clients N (closed loop: N virtual clients, each starting its next \
iteration when the last ended) or --rate R (open loop: R iterations a second whatever the server \
does; latency counts from each iteration's scheduled start). Length: --duration D or --iterations \
N (default 10s). Every reply is judged by the scenario's expectations. Exit codes: 0 every budget \
held, 1 a budget broke (any error, without --max-error-rate), 2 invalid input, 3 authentication \
required, 4 server could not be started or reached.",
    args_conflicts_with_subcommands = true
)]
pub struct LoadArgs {
    #[command(subcommand)]
    pub command: Option<LoadCommand>,
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
    /// Era: legacy, modern, auto or a revision (YYYY-MM-DD); one per load run.
    #[arg(long = "era", value_name = "ERA")]
    pub era: Option<String>,
    /// A parameter available to every scenario as a template variable, `NAME=VALUE`
    /// (repeatable; `NAME=env:VAR` reads a secret from the environment).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Use only scenarios whose tags match this expression (repeatable: any of them).
    #[arg(long = "tag", value_name = "EXPR")]
    pub tags: Vec<String>,
    /// Use only scenarios whose id or `id@era` matches this glob (repeatable).
    #[arg(long = "filter", value_name = "GLOB")]
    pub filters: Vec<String>,
    /// Closed loop: this many virtual clients, each on a connection (HTTP) or a server
    /// process (stdio) of its own (1 to 10000; default 1).
    #[arg(long, value_name = "N", conflicts_with = "rate",
          value_parser = |s: &str| limits::number(s, &CLIENTS))]
    pub clients: Option<usize>,
    /// Open loop: start this many scenario iterations a second, whether or not the server
    /// keeps up (a number > 0, e.g. `50` or `0.5`).
    #[arg(long, value_name = "R", value_parser = parse_rate, allow_negative_numbers = true)]
    pub rate: Option<f64>,
    /// How long to measure after the warm-up, e.g. `30s`, `2m` (default 10s).
    #[arg(long, value_name = "DURATION", conflicts_with = "iterations", allow_hyphen_values = true,
          value_parser = |s: &str| parse_load_duration(s))]
    pub duration: Option<Duration>,
    /// Measure this many iterations (after the warm-up), then stop.
    #[arg(long, value_name = "N", value_parser = |s: &str| limits::number(s, &(1..=u64::MAX)))]
    pub iterations: Option<u64>,
    /// Run the load this long first without measuring it, e.g. `5s` (default none).
    #[arg(long, value_name = "DURATION", value_parser = |s: &str| parse_load_duration(s))]
    pub warmup: Option<Duration>,
    /// Open loop: at most this many iterations in flight at once (connections over HTTP,
    /// server processes over stdio); closed loop over stdio: at most this many server
    /// processes. Default: 256 over HTTP, CPU cores over stdio (1 to 1024).
    #[arg(long, value_name = "N", value_parser = |s: &str| limits::number(s, &limits::JOBS))]
    pub jobs: Option<usize>,
    /// Over stdio: `process`, a server process per virtual client (at most --jobs of them),
    /// or `shared`, one server process for all, their requests multiplexed on it (the
    /// server's own concurrency is what is measured).
    #[arg(long, value_name = "MODE", value_enum, default_value_t = StdioMode::Process)]
    pub stdio_mode: StdioMode,
    /// Budget: the 99th percentile of the iterations' latency is at most this, e.g. `300ms`.
    #[arg(long, value_name = "DURATION", value_parser = |s: &str| parse_load_duration(s))]
    pub p99: Option<Duration>,
    /// Budget: the 95th percentile of the iterations' latency is at most this.
    #[arg(long, value_name = "DURATION", value_parser = |s: &str| parse_load_duration(s))]
    pub p95: Option<Duration>,
    /// Budget: at most this percentage of the iterations fail (0 to 100; default 0: any
    /// error breaks it).
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    pub max_error_rate: Option<f64>,
    /// Budget: at least this many requests a second over the measured run.
    #[arg(long, value_name = "RPS", value_parser = parse_rate)]
    pub min_throughput: Option<f64>,
    /// Find the breaking point: run the open loop at `--rate`, then at twice it, four
    /// times, ... (each for `--duration`, up to 12 steps) until a budget breaks; report the
    /// last rate that held, with the step table.
    #[arg(long, requires = "rate", conflicts_with = "iterations")]
    pub find_limit: bool,
    /// Run shard K of N: this machine takes its share of the rate (R/N), of the clients
    /// or of the iterations, so N machines together run the profile; `mcpspec report
    /// merge` adds the shards' JSON reports (their histograms exactly) into one.
    #[arg(long, value_name = "K/N", value_parser = crate::face::select::Shard::parse)]
    pub shard: Option<crate::face::select::Shard>,
    /// Write the budgets as a JUnit XML report here (a testcase each).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// The JUnit report's shape: `default` (richer: GitLab, GitHub) or `jenkins` (strict:
    /// the Jenkins xUnit plugin's junit-10.xsd); default: `junitFlavor` of mcpspec.yaml.
    #[arg(long, value_enum, value_name = "FLAVOR")]
    pub junit_flavor: Option<crate::results::junit::Flavor>,
    /// Write the summary and the per-second time series as JSON here; `-`: to stdout
    /// (the console summary then goes to stderr).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a self-contained HTML report here (opens offline): the profile, the totals,
    /// the budgets, the latency percentiles per step, method and tool, latency over time.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Never touch the network: remote packs come from the cache only.
    #[arg(long)]
    pub offline: bool,
}

/// How a load run over stdio holds its server processes.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdioMode {
    /// A server process per virtual client.
    Process,
    /// One server process, the requests of every client multiplexed on it.
    Shared,
}

/// What `mcpspec load` does besides a load run.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum LoadCommand {
    /// Compare two load reports (`--json` of `mcpspec load`): per step, the percentiles and
    /// error rates, and a Mann-Whitney U test on the latency histograms. Exit 1 when the
    /// candidate regressed beyond the tolerance (slower significantly, or more errors).
    Compare(CompareArgs),
}

#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// The base report (JSON).
    pub base: PathBuf,
    /// The candidate report (JSON).
    pub candidate: PathBuf,
    /// A p50 or p99 may grow by this percentage before it is a regression (when the test
    /// says it is significant), default 10.
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    pub tolerance: Option<f64>,
    /// An error rate may grow by this many percentage points, default 0.
    #[arg(long, value_name = "POINTS", value_parser = parse_percent)]
    pub error_tolerance: Option<f64>,
    /// Write a JUnit XML report here (a test case for the run and each step).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// The JUnit report's shape: `default` (richer: GitLab, GitHub) or `jenkins` (strict:
    /// the Jenkins xUnit plugin's junit-10.xsd).
    #[arg(long, value_enum, value_name = "FLAVOR")]
    pub junit_flavor: Option<crate::results::junit::Flavor>,
    /// Write the comparison as JSON here; `-`: to stdout.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

fn parse_load_duration(s: &str) -> Result<Duration, String> {
    if s.trim_start().starts_with('-') {
        return Err("a duration cannot be negative (expected e.g. `500ms`, `30s`)".into());
    }
    limits::duration(s, &LOAD_DURATION).map_err(|e| format!("{e} (expected e.g. `500ms`, `30s`)"))
}

/// A positive, finite number (a rate or a throughput floor).
fn parse_rate(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 && r <= limits::MAX_RATE => Ok(r),
        Ok(_) => Err(format!(
            "`{s}` must be a number greater than 0 (at most 10000000)"
        )),
        Err(_) => Err(format!("`{s}` is not a number")),
    }
}

fn parse_percent(s: &str) -> Result<f64, String> {
    let text = s.trim().trim_end_matches('%');
    match text.parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p),
        Ok(_) => Err(format!("`{s}` must be a percentage from 0 to 100")),
        Err(_) => Err(format!("`{s}` is not a percentage")),
    }
}

impl LoadArgs {
    /// The `run` arguments that select the same scenarios and target, so loading and
    /// configuration are `run`'s own.
    pub fn as_run_args(&self) -> RunArgs {
        RunArgs {
            paths: self.paths.clone(),
            project_paths: Vec::new(),
            config: self.config.clone(),
            target_name: self.target_name.clone(),
            target: self.target.clone(),
            eras: self.era.iter().cloned().collect(),
            junit: None,
            junit_flavor: self.junit_flavor,
            json: None,
            html: None,
            sarif: None,
            sarif_source: None,
            tags: self.tags.clone(),
            set: self.set.clone(),
            shard: None,
            filters: self.filters.clone(),
            jobs: self.jobs,
            fresh: false,
            verbose: false,
            color: ColorChoice::Never,
            expected_failures: None,
            strict: false,
            offline: self.offline,
            wire_validate: false,
            write_baseline: None,
            force: false,
            last_failed: false,
            watch: false,
            watch_paths: Vec::new(),
            only_files: Vec::new(),
            update_snapshots: false,
            models: None,
            record_models: None,
            replay_models: None,
            max_cost: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_values_out_of_range_are_refused() {
        assert!(parse_rate("0").is_err());
        assert!(parse_rate("-5").is_err());
        assert!(parse_rate("NaN").is_err());
        assert_eq!(parse_rate("0.5"), Ok(0.5));
        assert!(parse_load_duration("-3s").unwrap_err().contains("negative"));
        assert!(parse_load_duration("0s").is_err());
        assert!(parse_percent("101").is_err());
        assert_eq!(parse_percent("1.5%"), Ok(1.5));
    }
}
