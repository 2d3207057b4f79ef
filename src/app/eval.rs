//! `mcpspec eval run`: eval set → (affected-by selection) → model profile and key → MCP
//! connection and its tools → the run → results JSON, JUnit, console → exit code.

use std::path::Path;

use crate::cli::{EvalCommand, EvalRunArgs, UsageError, exit};
use crate::era::Era;
use crate::eval::affected::{Affected, Scope};
use crate::eval::model::{ApiError, ModelClient};
use crate::eval::results::{EvalResults, SetKind};
use crate::eval::run::{Ended, RunPlan};
use crate::eval::set::EvalSet;

pub fn main(command: EvalCommand) -> i32 {
    match command {
        EvalCommand::Run(args) => {
            let jobs = args.jobs;
            super::runtime_for(jobs).block_on(run(*args))
        }
        EvalCommand::Compare(args) => super::eval_compare::eval_compare(args),
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
    let Some(profile) = set.profiles.get(&args.model) else {
        return super::usage(no_such_profile("--model", &args.model, &set));
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
    let key = match profile_key(&args.model, &profile) {
        Ok(k) => k,
        Err(code) => return code,
    };
    let selected: Vec<usize> = match &args.affected_by {
        None => (0..set.tasks.len()).collect(),
        Some(diff) => match Affected::read(diff) {
            Ok(affected) => {
                let mut keep = Vec::new();
                if args.affected_scope == Scope::Wide
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
            Err(e) => return super::usage(UsageError(e)),
        },
    };
    if args.max_cost.is_some() && profile.price.is_none() {
        return super::usage(UsageError(format!(
            "--max-cost needs the model's prices: add `price: {{input: USD, output: USD}}` (per million tokens) to profile `{}`",
            args.model
        )));
    }
    let client = match ModelClient::new(profile.clone(), key) {
        Ok(c) => c.with_max_cost(args.max_cost),
        Err(e) => {
            errln!("error: {e}");
            return exit::UNREACHABLE;
        }
    };
    let judge = match super::eval_judge::judge(&set, &selected, &args, &client) {
        Ok(j) => j,
        Err(code) => return code,
    };
    let (target, secrets) = match args.target.to_target() {
        Ok(t) => t,
        Err(e) => return super::usage(e),
    };
    let era = match Era::parse(&args.era) {
        Ok(e) => e,
        Err(e) => return super::usage(UsageError(format!("--era: {e}"))),
    };
    crate::signals::install();
    crate::signals::defer_exit();
    let mut conn = match crate::client::Connection::open(&target, &era.label, &era.request).await {
        Ok(c) => c,
        Err(e) => return super::connect_failed(&e, &secrets),
    };
    let tools = match conn.tools().await {
        Ok(t) => t,
        Err(e) => {
            errln!(
                "error: tools/list failed: {}",
                crate::redact::shorten(&e, 500)
            );
            conn.close().await;
            return exit::FAILED;
        }
    };
    warn_unlisted_tools(&set, &selected, &tools);
    let plan = RunPlan {
        set: &set,
        tasks: selected,
        profile_name: args.model.clone(),
        profile,
        client,
        target,
        era,
        jobs: args.jobs,
        set_file: args.set.display().to_string(),
        affected_by: args.affected_by.as_ref().map(|p| p.display().to_string()),
        judge,
    };
    let (results, interrupted) = match crate::eval::run::run(plan, conn, tools).await {
        Ended::Done(r) => (r, false),
        Ended::Interrupted(r) => (r, true),
        Ended::Fatal(e, results) => {
            errln!("error: {}", crate::redact::known().redact(&e.to_string()));
            // What finished is written too, marked `partial` with the reason in `aborted`.
            if let Err(code) = write(&results, args.json.as_deref(), args.junit.as_deref()) {
                return code;
            }
            return match e {
                ApiError::Auth(_) => exit::AUTH_REQUIRED,
                ApiError::Unreachable(_) => exit::UNREACHABLE,
                ApiError::Failed(_) | ApiError::Budget(_) => exit::FAILED,
            };
        }
    };
    outln!("{}", crate::eval::report::console(&results).trim_end());
    if let Err(code) = write(&results, args.json.as_deref(), args.junit.as_deref()) {
        return code;
    }
    if interrupted {
        return crate::signals::received().unwrap_or(130);
    }
    exit_code(&results)
}

/// `FLAG NAME` names no profile of the set: the usage error, with the profiles it has.
pub(super) fn no_such_profile(flag: &str, name: &str, set: &EvalSet) -> UsageError {
    let known: Vec<&str> = set.profiles.keys().map(String::as_str).collect();
    UsageError(format!(
        "{flag} {name}: the eval set has no such model profile ({})",
        if known.is_empty() {
            "it declares none under `models:`".to_string()
        } else {
            format!("it has: {}", known.join(", "))
        }
    ))
}

/// A profile's API key, read from the variable it names (`None`: it names none); never
/// printed, redacted everywhere. Unset or empty: exit 3, naming the variable.
pub(super) fn profile_key(
    name: &str,
    profile: &crate::eval::set::Profile,
) -> Result<Option<String>, i32> {
    let Some(var) = &profile.key_env else {
        return Ok(None);
    };
    match std::env::var(var) {
        Ok(k) if !k.is_empty() => {
            crate::redact::remember(std::slice::from_ref(&k));
            Ok(Some(k))
        }
        _ => {
            errln!(
                "error: model profile `{name}` takes its API key from the environment variable {var}, which is not set (or empty)"
            );
            Err(exit::AUTH_REQUIRED)
        }
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
    let failed = results
        .tasks
        .iter()
        .any(|t| t.trials.iter().any(|r| !r.success));
    if failed && results.set.kind == SetKind::Regression {
        exit::FAILED
    } else {
        exit::OK
    }
}

fn write(results: &EvalResults, json: Option<&Path>, junit: Option<&Path>) -> Result<(), i32> {
    if let Some(path) = json {
        let mut value = serde_json::to_value(results).expect("results serialize");
        crate::redact::known().redact_json(&mut value);
        let mut text = serde_json::to_string_pretty(&value).expect("JSON serializes");
        text.push('\n');
        super::write_reports_file(path, text)?;
    }
    if let Some(path) = junit {
        super::write_reports_file(path, crate::eval::report::junit(results))?;
    }
    Ok(())
}
