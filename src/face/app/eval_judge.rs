//! The judge of `mcpspec eval run`: which model profile grades `answer: {judge: …}`
//! (`--judge`, else the set's `judge:`), its key, and its client — one per model run,
//! spending from that run's `--max-cost` budget and recorded on (replayed from) its tape.
//! Only when a selected task has a judged answer or a `judge` critic.

use crate::face::cli::{EvalRunArgs, UsageError, exit};
use crate::run::eval::judge::Judge;
use crate::run::eval::llm::ModelClient;
use crate::run::eval::profile::Profile;
use crate::run::eval::set::EvalSet;

/// The judge's profile and key, checked before anything runs.
pub(super) struct JudgeSetup {
    name: String,
    profile: Profile,
    key: Option<String>,
}

pub(super) fn setup(
    set: &EvalSet,
    selected: &[usize],
    args: &EvalRunArgs,
) -> Result<Option<JudgeSetup>, i32> {
    let Some(first) = selected.iter().map(|&i| &set.tasks[i]).find(|t| t.judged()) else {
        return Ok(None);
    };
    let Some(name) = args.judge.as_ref().or(set.judge.as_ref()) else {
        return Err(super::inputs::usage(UsageError(format!(
            "task `{}` has a judged answer (`answer: {{judge: …}}`) or a judged argument (a critic's `judge: …`) and no judge is named: add `judge: PROFILE` to the eval set (a key of its `models:`) or pass --judge PROFILE",
            first.id
        ))));
    };
    let Some(profile) = set.profiles.get(name) else {
        return Err(super::inputs::usage(no_such_profile("--judge", name, set)));
    };
    let mut profile = profile.clone();
    if let Some(u) = &args.judge_base_url {
        profile.base_url = u.trim_end_matches('/').to_string();
    }
    if args.max_cost.is_some() && args.replay.is_none() && profile.price.is_none() {
        return Err(super::inputs::usage(UsageError(format!(
            "--max-cost counts the judge's requests too, and needs its prices: add `price: {{input: USD, output: USD}}` (per million tokens) to profile `{name}`"
        ))));
    }
    if let Err(e) = crate::run::eval::llm::endpoint(profile.api, &profile.base_url) {
        errln!("error: the judge (profile `{name}`): {e}");
        return Err(exit::UNREACHABLE);
    }
    // A replay answers the judge from the recording too: no key.
    let key = match &args.replay {
        Some(_) => None,
        None => profile_key(&profile)?,
    };
    Ok(Some(JudgeSetup {
        name: name.clone(),
        profile,
        key,
    }))
}

impl JudgeSetup {
    /// The judge of one model's run: its requests spend from `model`'s budget.
    pub(super) fn client(&self, model: &ModelClient) -> Result<Judge, i32> {
        match ModelClient::new(self.profile.clone(), self.key.clone()) {
            Ok(c) => Ok(Judge {
                profile_name: self.name.clone(),
                profile: self.profile.clone(),
                client: c.sharing_budget_of(model).as_judge(),
            }),
            Err(e) => {
                errln!("error: the judge (profile `{}`): {e}", self.name);
                Err(exit::UNREACHABLE)
            }
        }
    }
}

// The model profiles of a set, as `--model` and `--judge` name them (here, below `eval.rs`,
// which sets up the judge through this file).

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
pub(super) fn profile_key(profile: &Profile) -> Result<Option<String>, i32> {
    crate::run::eval::profile::key_from_env(profile).map_err(|why| {
        errln!("error: {why}");
        exit::AUTH_REQUIRED
    })
}
