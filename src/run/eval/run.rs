//! `eval run`: the tasks × trials of a set, spread over `jobs` workers, each with its own
//! MCP connection (stdio: its own server process), through one model client. Stops early
//! on Ctrl-C (what finished is kept, the results marked `partial`) and on a model API that
//! cannot be reached or refuses the key (exit 4 / 3).

use std::sync::Mutex;
use std::time::Instant;

use serde_json::Value;

use super::agent::{Agent, Cut};
use super::conversation::{ApiError, tool_specs};
use super::llm::ModelClient;
use super::names::Names;
use super::profile::{Profile, public_url};
use super::results::{
    CutTrials, EvalResults, ModelInfo, RESULTS_FORMAT, ServerInfo, SetInfo, TaskResult,
    TrialResult, Usage,
};
use super::set::{EvalSet, Task};
use crate::protocol::era::Era;
use crate::run::client::{Connection, Target};

/// Everything a run needs besides the set.
pub struct RunPlan<'a> {
    pub set: &'a EvalSet,
    /// The tasks to run (indexes into `set.tasks`, in set order).
    pub tasks: Vec<usize>,
    pub profile_name: String,
    pub profile: Profile,
    pub client: &'a ModelClient,
    pub target: Target,
    pub era: Era,
    pub jobs: usize,
    pub set_file: String,
    pub affected_by: Option<String>,
    /// Grades judged answers, when the selected tasks have any.
    pub judge: Option<super::judge::Judge>,
    /// `--max-duration`: the whole run stops when it passes (trials in flight are cut).
    pub deadline: Option<Deadline>,
}

/// What is left of `--max-duration` (the whole command's), and the flag's value.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    pub left: std::time::Duration,
    pub limit: std::time::Duration,
}

/// How a run ended.
pub enum Ended {
    Done(EvalResults),
    /// Ctrl-C: the results so far, marked partial.
    Interrupted(EvalResults),
    /// The model API could not be used at all: why, and the results of what finished
    /// (marked partial, with `aborted` saying why).
    Fatal(ApiError, EvalResults),
}

/// Run the plan on an open first connection (more are opened for `jobs > 1`).
pub async fn run(plan: RunPlan<'_>, first: Connection, tools: Vec<Value>) -> Ended {
    let started_at = chrono::Utc::now().to_rfc3339();
    let started = Instant::now();
    let names = Names::new(
        tools
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str)),
    );
    let (specs, tools_hash) = tool_specs(&tools, &names);
    let n = &first.negotiated;
    let server_info = n.server_info.clone().unwrap_or(Value::Null);
    let server = ServerInfo {
        name: server_info
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        version: server_info
            .get("version")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        era: n.kind.as_str().to_string(),
        revision: n.revision.clone(),
        tools_hash,
        tool_count: specs.len() as u32,
    };
    let agent = Agent {
        client: plan.client,
        tools: &specs,
        names: &names,
        system: plan.set.system.as_deref(),
        max_turns: plan.profile.max_turns,
        max_calls_per_turn: plan.profile.max_calls_per_turn,
        judge: plan.judge.as_ref(),
    };
    let tasks: Vec<&Task> = plan.tasks.iter().map(|&i| &plan.set.tasks[i]).collect();
    let items: Vec<(usize, u32)> = tasks
        .iter()
        .enumerate()
        .flat_map(|(t, task)| (0..task.trials).map(move |k| (t, k)))
        .collect();
    let slots: Mutex<Vec<Vec<Option<TrialResult>>>> = Mutex::new(
        tasks
            .iter()
            .map(|t| vec![None; t.trials as usize])
            .collect(),
    );
    // Trials the run's stop cut short: their spend is kept.
    let cut: Mutex<Vec<Vec<TrialResult>>> = Mutex::new(vec![Vec::new(); tasks.len()]);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let fatal: Mutex<Option<ApiError>> = Mutex::new(None);
    let jobs = plan.jobs.clamp(1, items.len().max(1));
    let worker = |conn: Option<Connection>| {
        let (agent, tasks, items, slots, next, fatal, cut) =
            (&agent, &tasks, &items, &slots, &next, &fatal, &cut);
        let (target, era) = (&plan.target, &plan.era);
        async move {
            let mut conn = match conn {
                Some(c) => c,
                None => match Connection::open(target, &era.label, &era.request).await {
                    Ok(c) => c,
                    Err(e) => {
                        errln!(
                            "warning: an extra connection for --jobs failed: {}",
                            crate::ground::redact::shorten(&e.message, 300)
                        );
                        return;
                    }
                },
            };
            loop {
                if crate::ground::signals::received().is_some() || fatal.lock().unwrap().is_some() {
                    break;
                }
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some(&(t, k)) = items.get(i) else { break };
                match agent.trial(&mut conn, tasks[t], k).await {
                    Ok(r) => slots.lock().unwrap()[t][k as usize] = Some(r),
                    Err(Cut { error, trial }) => {
                        cut.lock().unwrap()[t].push(trial);
                        fatal.lock().unwrap().get_or_insert(error);
                        break;
                    }
                }
            }
            conn.close().await;
        }
    };
    let mut workers = vec![worker(Some(first))];
    workers.extend((1..jobs).map(|_| worker(None)));
    let all = futures::future::join_all(workers);
    let deadline = async {
        match plan.deadline {
            Some(d) => tokio::time::sleep(d.left).await,
            None => std::future::pending().await,
        }
    };
    let (interrupted, out_of_time) = tokio::select! {
        _ = all => (false, false),
        _ = crate::ground::signals::interrupted() => (true, false),
        _ = deadline => (false, true),
    };
    let mut fatal = fatal.into_inner().unwrap();
    if out_of_time && fatal.is_none() {
        fatal = Some(ApiError::Limit(format!(
            "the run stopped at --max-duration {}: the trials in flight were cut, the tasks not reached never ran",
            humantime::format_duration(plan.deadline.map(|d| d.limit).unwrap_or_default())
        )));
    }
    let cut = cut.into_inner().unwrap();
    let slots = slots.into_inner().unwrap();
    let partial = interrupted || fatal.is_some() || slots.iter().flatten().any(Option::is_none);
    let judge_price = plan.judge.as_ref().and_then(|j| j.profile.price);
    let task_results: Vec<TaskResult> = tasks
        .iter()
        .zip(slots)
        .zip(&cut)
        .map(|((task, trials), cut)| {
            let trials: Vec<TrialResult> = trials.into_iter().flatten().collect();
            TaskResult {
                id: task.id.clone(),
                tags: task.tags.clone(),
                no_tool_call: task.no_tool_call(),
                expected_tools: task.expected_tools(),
                usage: Usage::of(trials.iter().chain(cut), plan.profile.price),
                judge_usage: Usage::of_judge(trials.iter().chain(cut), judge_price),
                cut: (!cut.is_empty()).then(|| CutTrials {
                    trials: cut.iter().map(|t| t.index).collect(),
                    usage: Usage::of(cut, plan.profile.price),
                    judge_usage: Usage::of_judge(cut, judge_price),
                }),
                pass: task.pass,
                trials,
            }
        })
        .collect();
    let p = &plan.profile;
    let every = || {
        task_results
            .iter()
            .flat_map(|t| &t.trials)
            .chain(cut.iter().flatten())
    };
    let usage = Usage::of(every(), p.price);
    let judge_usage = Usage::of_judge(every(), judge_price);
    let results = EvalResults {
        format: RESULTS_FORMAT.to_string(),
        partial,
        aborted: fatal
            .as_ref()
            .map(|e| crate::ground::redact::known().redact(&e.to_string())),
        set: SetInfo {
            name: plan.set.name.clone(),
            kind: plan.set.kind,
            file: plan.set_file.clone(),
            trials: plan.set.trials,
            affected_by: plan.affected_by.clone(),
        },
        model: model_info(&plan.profile_name, p),
        server,
        started: started_at,
        duration_ms: started.elapsed().as_millis() as u64,
        tasks: task_results,
        usage,
        judge: plan
            .judge
            .as_ref()
            .map(|j| model_info(&j.profile_name, &j.profile)),
        judge_usage,
        tool_selection: Vec::new(),
    };
    let results = EvalResults {
        tool_selection: super::results::selection::tool_selection(&results.tasks),
        ..results
    };
    if let Some(e) = fatal {
        Ended::Fatal(e, results)
    } else if interrupted {
        Ended::Interrupted(results)
    } else {
        Ended::Done(results)
    }
}

/// How the results name a model profile (no credentials).
pub fn model_info(name: &str, p: &Profile) -> ModelInfo {
    ModelInfo {
        profile: name.to_string(),
        api: p.api,
        model: p.model.clone(),
        base_url: public_url(&p.base_url),
        temperature: p.temperature,
        seed: p.seed,
        price: p.price,
        replayed_from: None,
    }
}
