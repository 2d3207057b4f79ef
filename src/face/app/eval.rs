//! `mcpspec eval run`: eval set → (affected-by selection) → model profile and key → MCP
//! connection and its tools → the run → results JSON, JUnit, console → exit code.

use std::path::Path;
use std::time::Instant;

use crate::face::cli::{EvalCommand, EvalRunArgs, UsageError, exit};
use crate::protocol::era::Era;
use crate::run::eval::affected::{Affected, AffectedScope};
use crate::run::eval::conversation::ApiError;
use crate::run::eval::llm::ModelClient;
use crate::run::eval::profile::Profile;
use crate::run::eval::results::{EvalResults, SetKind};
use crate::run::eval::run::{Ended, RunPlan};
use crate::run::eval::set::EvalSet;

use super::eval_judge::{no_such_profile, profile_key};

pub fn main(command: EvalCommand) -> i32 {
    match command {
        EvalCommand::Run(args) => {
            let jobs = args.jobs;
            super::runtime::runtime_for(jobs).block_on(run(*args))
        }
        EvalCommand::Compare(args) => super::eval_compare::eval_compare(*args),
        EvalCommand::Expect(args) => super::eval_expect::eval_expect(args),
        EvalCommand::Report(args) => super::eval_report::eval_report(args),
    }
}

async fn run(args: EvalRunArgs) -> i32 {
    let set = match EvalSet::load(&args.set) {
        Ok(s) => s,
        Err(errors) => {
            errln!("{}", errors.render());
            return exit::INVALID_INPUT;
        }
    };
    let profiles = match profiles(&set, &args) {
        Ok(p) => p,
        Err(e) => return super::inputs::usage(e),
    };
    // The keys, all read before anything runs (a replay needs none): never printed,
    // redacted everywhere.
    let mut keys = Vec::new();
    for profile in &profiles {
        if args.replay.is_some() {
            keys.push(None);
            continue;
        }
        match profile_key(profile) {
            Ok(k) => keys.push(k),
            Err(code) => return code,
        }
    }
    let selected: Vec<usize> = match &args.affected_by {
        None => (0..set.tasks.len()).collect(),
        Some(diff) => match Affected::read(diff) {
            Ok(affected) => {
                let mut keep = Vec::new();
                if args.affected_scope == AffectedScope::Wide
                    && let Some(what) = &affected.wording_changed
                {
                    errln!(
                        "--affected-by: {what}, and a model chooses among all the descriptions it is shown: every tool-calling and noToolCall task is at risk (--affected-scope direct keeps only the tasks that name a changed tool)"
                    );
                }
                for (i, task) in set.tasks.iter().enumerate() {
                    if let Some(why) = affected.reason(task, args.affected_scope) {
                        errln!("affected: {} ({why})", task.id);
                        keep.push(i);
                    }
                }
                errln!(
                    "--affected-by: {} of {} task(s) selected",
                    keep.len(),
                    set.tasks.len()
                );
                keep
            }
            Err(e) => return super::inputs::usage(UsageError(e)),
        },
    };
    if args.max_cost.is_some()
        && args.replay.is_none()
        && let Some(p) = profiles.iter().find(|p| p.price.is_none())
    {
        return super::inputs::usage(UsageError(format!(
            "--max-cost needs the model's prices: add `price: {{input: USD, output: USD}}` (per million tokens) to profile `{}`",
            p.name
        )));
    }
    if let Some(dir) = &args.record
        && let Err(e) = crate::run::eval::record::Recorder::check_dir(dir)
    {
        return super::inputs::usage(UsageError(e));
    }
    // The judge is checked (and its key read) before anything runs too.
    let judge = match super::eval_judge::setup(&set, &selected, &args) {
        Ok(j) => j,
        Err(code) => return code,
    };
    let (target, secrets) = match args.target.to_target() {
        Ok(t) => t,
        Err(e) => return super::inputs::usage(e),
    };
    let era = match Era::parse(&args.era) {
        Ok(e) => e,
        Err(e) => return super::inputs::usage(UsageError(format!("--era: {e}"))),
    };
    crate::ground::signals::install();
    crate::ground::signals::defer_exit();
    let several = profiles.len() > 1;
    let deadline = args.max_duration.0.map(|d| Instant::now() + d);
    let mut runs: Vec<EvalResults> = Vec::new();
    // Several models share one `--max-cost`: each run gets what the ones before left.
    let mut budget = args.max_cost;
    let mut stop: Option<i32> = None;
    for (profile, key) in profiles.into_iter().zip(keys) {
        if several {
            errln!("model {} ({}):", profile.name, profile.model);
        }
        let one = One {
            args: &args,
            set: &set,
            selected: &selected,
            target: &target,
            secrets: &secrets,
            era: &era,
            judge: judge.as_ref(),
            deadline,
        };
        match one.run(profile, key, budget).await {
            Step::Setup(code) => {
                stop = Some(code);
                break;
            }
            Step::Ran(results, end) => {
                // The judge's spend (grading this model's answers) counts too.
                let judged = results.judge_usage.as_ref().and_then(|u| u.cost_usd);
                if let (Some(b), Some(spent)) = (&mut budget, results.usage.cost_usd) {
                    *b = (*b - spent - judged.unwrap_or(0.0)).max(0.0);
                }
                runs.push(*results);
                if let Some(code) = end {
                    stop = Some(code);
                    break;
                }
            }
        }
    }
    if several && !runs.is_empty() {
        outln!("{}", crate::run::eval::runs::side_by_side(&runs).trim_end());
    }
    let junit = args
        .junit
        .as_deref()
        .map(|p| (p, args.junit_flavor.unwrap_or_default()));
    if let Err(code) = write(&runs, several, args.json.as_deref(), junit) {
        return code;
    }
    if let Some(path) = args.html.as_ref().filter(|_| !runs.is_empty()) {
        let secrets = crate::ground::redact::known().values().to_vec();
        let page = crate::run::eval::report_html::to_html(&runs, &secrets);
        if let Err(code) = super::report_files::write_reports_file(path, page) {
            return code;
        }
    }
    match stop {
        Some(code) => code,
        None => runs.iter().map(exit_code).max().unwrap_or(exit::OK),
    }
}

/// The profiles of every `--model`, with the command line's overrides applied.
fn profiles(set: &EvalSet, args: &EvalRunArgs) -> Result<Vec<Profile>, UsageError> {
    if args.model.len() > 1 && args.model_name.is_some() {
        return Err(UsageError(
            "--model-name overrides one profile's model: it cannot go with several --model (give each model its own profile)".into(),
        ));
    }
    let mut out: Vec<Profile> = Vec::new();
    for name in &args.model {
        if out.iter().any(|p| &p.name == name) {
            return Err(UsageError(format!("--model {name} is given twice")));
        }
        let Some(profile) = set.profiles.get(name) else {
            return Err(no_such_profile("--model", name, set));
        };
        let mut profile = profile.clone();
        if let Some(u) = &args.base_url {
            profile.base_url = u.trim_end_matches('/').to_string();
        }
        if let Some(m) = &args.model_name {
            profile.model = m.clone();
        }
        if let Some(v) = &args.api_key_env {
            profile.key_env = Some(v.clone());
        }
        if let Some(t) = args.model_timeout {
            profile.timeout = t;
        }
        out.push(profile);
    }
    Ok(out)
}

/// What one profile's run needs from the command.
struct One<'a> {
    args: &'a EvalRunArgs,
    set: &'a EvalSet,
    selected: &'a [usize],
    target: &'a crate::run::client::Target,
    secrets: &'a [String],
    era: &'a Era,
    /// The judge's profile and key, when a selected task has a judged answer.
    judge: Option<&'a super::eval_judge::JudgeSetup>,
    /// When `--max-duration` runs out (for every model's run together).
    deadline: Option<Instant>,
}

/// How one profile's run ended.
enum Step {
    /// It never started (exit code): a connection, a tool list, a recording that does not fit.
    Setup(i32),
    /// Its results (printed), and the exit code that stops the whole command, if any
    /// (interrupted, or a fatal model API error).
    Ran(Box<EvalResults>, Option<i32>),
}

impl One<'_> {
    async fn run(&self, profile: Profile, key: Option<String>, budget: Option<f64>) -> Step {
        let args = self.args;
        let client = match ModelClient::new(profile.clone(), key) {
            Ok(c) => c
                .with_max_cost(budget.filter(|_| args.replay.is_none()))
                .with_breaker(args.max_api_failures.0),
            Err(e) => {
                errln!("error: {e}");
                return Step::Setup(exit::UNREACHABLE);
            }
        };
        let mut conn = match crate::run::client::Connection::open(
            self.target,
            &self.era.label,
            &self.era.request,
        )
        .await
        {
            Ok(c) => c,
            Err(e) => return Step::Setup(super::connect::connect_failed(&e, self.secrets)),
        };
        let tools = match conn.tools().await {
            Ok(t) => t,
            Err(e) => {
                errln!(
                    "error: tools/list failed: {}",
                    crate::ground::redact::shorten(&e, 500)
                );
                conn.close().await;
                return Step::Setup(exit::FAILED);
            }
        };
        warn_unlisted_tools(self.set, self.selected, &tools);
        let tape = match crate::run::eval::tape::open(
            args.record.as_deref(),
            args.replay.as_deref(),
            &self.set.name,
            &self.set.sanitizers,
            &profile,
            conn.negotiated.server_info.as_ref(),
            &tools,
        ) {
            Ok(t) => t,
            Err(e) => {
                errln!("error: {e}");
                conn.close().await;
                return Step::Setup(exit::INVALID_INPUT);
            }
        };
        let client = client.with_tape(tape);
        // Each model's answers are graded by a client of its own, spending from its budget.
        let judge = match self.judge.map(|j| j.client(&client)).transpose() {
            Ok(j) => j,
            Err(code) => return Step::Setup(code),
        };
        let plan = RunPlan {
            set: self.set,
            tasks: self.selected.to_vec(),
            profile_name: profile.name.clone(),
            profile,
            client: &client,
            target: self.target.clone(),
            era: self.era.clone(),
            jobs: args.jobs,
            set_file: args.set.display().to_string(),
            affected_by: args.affected_by.as_ref().map(|p| p.display().to_string()),
            judge,
            deadline: self.deadline.zip(args.max_duration.0).map(|(at, limit)| {
                crate::run::eval::run::Deadline {
                    left: at.saturating_duration_since(Instant::now()),
                    limit,
                }
            }),
        };
        let (mut results, code) = match crate::run::eval::run::run(plan, conn, tools).await {
            Ended::Done(r) => (r, None),
            Ended::Interrupted(r) => (r, Some(crate::ground::signals::received().unwrap_or(130))),
            Ended::Fatal(e, r) => {
                errln!(
                    "error: {}",
                    crate::ground::redact::known().redact(&e.to_string())
                );
                let code = match e {
                    ApiError::Auth(_) => exit::AUTH_REQUIRED,
                    ApiError::Unreachable(_) => exit::UNREACHABLE,
                    ApiError::Replay(_) => exit::INVALID_INPUT,
                    ApiError::Failed(_) => exit::FAILED,
                    ApiError::Budget(_) | ApiError::Limit(_) => exit::INCOMPLETE,
                };
                (r, Some(code))
            }
        };
        if let Some(dir) = &args.replay {
            results.model.replayed_from = Some(dir.display().to_string());
        }
        if let Err(e) = crate::run::eval::tape::finish(client.tape(), &results) {
            errln!("error: {e}");
            return Step::Ran(Box::new(results), Some(exit::FAILED));
        }
        outln!("{}", crate::run::eval::report::console(&results).trim_end());
        Step::Ran(Box::new(results), code)
    }
}

/// A task that expects a tool the server does not list cannot pass: most likely a typo in
/// the set or a tool the server dropped. Said before the model is paid for it.
fn warn_unlisted_tools(set: &EvalSet, selected: &[usize], tools: &[serde_json::Value]) {
    let listed: Vec<&str> = tools
        .iter()
        .filter_map(|t| t.get("name").and_then(serde_json::Value::as_str))
        .collect();
    for task in selected.iter().map(|&i| &set.tasks[i]) {
        for tool in task.expected_tools() {
            if !listed.contains(&tool.as_str()) {
                errln!(
                    "warning: task `{}` expects tool `{tool}`, which the server does not list (its tools: {})",
                    task.id,
                    if listed.is_empty() {
                        "none".to_string()
                    } else {
                        listed.join(", ")
                    }
                );
            }
        }
    }
}

/// 1 when a trial of a regression set failed; a capability set is tracked, not gated.
fn exit_code(results: &EvalResults) -> i32 {
    let failed = results.tasks.iter().any(|t| t.failed());
    if failed && results.set.kind == SetKind::Regression {
        exit::FAILED
    } else {
        exit::OK
    }
}

/// The results: one run as `mcpspec-eval-results/1`, several as `mcpspec-eval-runs/1`.
fn write(
    runs: &[EvalResults],
    several: bool,
    json: Option<&Path>,
    junit: Option<(&Path, crate::results::junit::Flavor)>,
) -> Result<(), i32> {
    if runs.is_empty() {
        return Ok(());
    }
    if let Some(path) = json {
        let mut value = if several {
            serde_json::to_value(crate::run::eval::runs::EvalRuns {
                format: crate::run::eval::runs::RUNS_FORMAT.to_string(),
                runs: runs.to_vec(),
            })
        } else {
            serde_json::to_value(&runs[0])
        }
        .expect("results serialize");
        crate::ground::redact::known().redact_json(&mut value);
        let mut text = serde_json::to_string_pretty(&value).expect("JSON serializes");
        text.push('\n');
        super::report_files::write_reports_file(path, text)?;
    }
    if let Some((path, flavor)) = junit {
        let xml = if several {
            crate::run::eval::runs::junit(runs, flavor)
        } else {
            crate::run::eval::report::junit(&runs[0], flavor)
        };
        super::report_files::write_reports_file(path, xml)?;
    }
    Ok(())
}
