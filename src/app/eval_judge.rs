//! The judge of `mcpspec eval run`: which model profile grades `answer: {judge: …}`
//! (`--judge`, else the set's `judge:`), its key, and its client, which spends from the
//! model's `--max-cost` budget. Only when a selected task has a judged answer.

use crate::cli::{EvalRunArgs, UsageError, exit};
use crate::eval::judge::Judge;
use crate::eval::model::ModelClient;
use crate::eval::set::EvalSet;

pub(super) fn judge(
    set: &EvalSet,
    selected: &[usize],
    args: &EvalRunArgs,
    model: &ModelClient,
) -> Result<Option<Judge>, i32> {
    let Some(first) = selected.iter().map(|&i| &set.tasks[i]).find(|t| t.judged()) else {
        return Ok(None);
    };
    let Some(name) = args.judge.as_ref().or(set.judge.as_ref()) else {
        return Err(super::usage(UsageError(format!(
            "task `{}` has a judged answer (`answer: {{judge: …}}`) and no judge is named: add `judge: PROFILE` to the eval set (a key of its `models:`) or pass --judge PROFILE",
            first.id
        ))));
    };
    let Some(profile) = set.profiles.get(name) else {
        return Err(super::usage(super::eval::no_such_profile(
            "--judge", name, set,
        )));
    };
    let mut profile = profile.clone();
    if let Some(u) = &args.judge_base_url {
        profile.base_url = u.trim_end_matches('/').to_string();
    }
    if args.max_cost.is_some() && profile.price.is_none() {
        return Err(super::usage(UsageError(format!(
            "--max-cost counts the judge's requests too, and needs its prices: add `price: {{input: USD, output: USD}}` (per million tokens) to profile `{name}`"
        ))));
    }
    let key = super::eval::profile_key(name, &profile)?;
    let client = match ModelClient::new(profile.clone(), key) {
        Ok(c) => c.sharing_budget_of(model),
        Err(e) => {
            errln!("error: the judge (profile `{name}`): {e}");
            return Err(exit::UNREACHABLE);
        }
    };
    Ok(Some(Judge {
        profile_name: name.clone(),
        profile,
        client,
    }))
}
