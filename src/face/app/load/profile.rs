//! The run's profile and budgets: from the command line, the scenarios' `load:` blocks and
//! the packs' workloads, and a shard's part of them.

use std::time::Duration;

use super::HTTP_IN_FLIGHT;
use crate::face::cli::{LoadArgs, UsageError};
use crate::language::dsl::workload::Pace;
use crate::language::dsl::workload::{Budget, BudgetScope, Limit};
use crate::language::dsl::workload::{PackWorkload, ProfileParts};
use crate::run::load::Work;
use crate::run::load::profile::{DEFAULT_DURATION, Length, Profile};

/// Shard `shard`'s part of the profile: the rate divided by N, the clients and the
/// iterations shared out (the first shards take one more of what does not divide evenly).
/// A shard left with no client or iteration is a usage error.
pub(super) fn shard_parts(
    parts: &mut ProfileParts,
    shard: crate::face::select::Shard,
) -> Result<(), UsageError> {
    let n = shard.count;
    let share = |total: u64| total / n as u64 + u64::from((shard.index as u64) < total % n as u64);
    let slice = |pace: Pace| match pace {
        Pace::Rate(r) => Ok(Pace::Rate(r / n as f64)),
        Pace::Clients(c) => match share(c as u64) {
            0 => Err(UsageError(format!(
                "--shard {}/{n}: {c} client(s) leave this shard none (give at least {n} clients)",
                shard.index + 1
            ))),
            mine => Ok(Pace::Clients(mine as usize)),
        },
    };
    if parts.stages.is_empty() {
        parts.pace = Some(slice(parts.pace.unwrap_or(Pace::Clients(1)))?);
    }
    for stage in &mut parts.stages {
        stage.pace = slice(stage.pace)?;
    }
    if let Some(total) = parts.iterations {
        match share(total) {
            0 => {
                return Err(UsageError(format!(
                    "--shard {}/{n}: {total} iteration(s) leave this shard none",
                    shard.index + 1
                )));
            }
            mine => parts.iterations = Some(mine),
        }
    }
    Ok(())
}

/// The parts of the profile the flags set (clap refused values out of range, `--clients`
/// with `--rate` and `--duration` with `--iterations`).
pub(super) fn command_line(args: &LoadArgs) -> ProfileParts {
    ProfileParts {
        pace: match (args.rate, args.clients) {
            (Some(r), _) => Some(Pace::Rate(r)),
            (None, n) => n.map(Pace::Clients),
        },
        duration: args.duration,
        iterations: args.iterations,
        warmup: args.warmup,
        ..ProfileParts::default()
    }
}

/// The profile of the scenarios' `load:` blocks: one, or the same in each; two that differ
/// are a usage error naming both.
pub(super) fn scenario_profile(work: &[Work<'_>]) -> Result<ProfileParts, UsageError> {
    let mut found: Option<(&str, &ProfileParts)> = None;
    for w in work {
        let Some(load) = &w.scenario.load else {
            continue;
        };
        if load.profile.is_empty() {
            continue;
        }
        match found {
            None => found = Some((&w.scenario.id, &load.profile)),
            Some((first, p)) if *p != load.profile => {
                return Err(UsageError(format!(
                    "the scenarios `{first}` and `{}` ask for different load profiles: give the profile in one of them (or mcpspec.yaml, or on the command line), and only `weight` and `each` in the others",
                    w.scenario.id
                )));
            }
            Some(_) => {}
        }
    }
    Ok(found.map(|(_, p)| p.clone()).unwrap_or_default())
}

/// The profile of the packs' `load:` blocks: of the packs nearest the command line (an
/// importing pack's wins over those it imports); two of them that differ are a usage
/// error naming both.
pub(super) fn pack_profile(work: &[Work<'_>]) -> Result<ProfileParts, UsageError> {
    let packs: Vec<&PackWorkload> = packs_of(work).filter(|p| !p.profile.is_empty()).collect();
    let Some(depth) = packs.iter().map(|p| p.depth).min() else {
        return Ok(ProfileParts::default());
    };
    let mut nearest = packs.iter().filter(|p| p.depth == depth);
    let first = nearest.next().expect("a pack at the least depth");
    if let Some(other) = nearest.find(|p| p.profile != first.profile) {
        return Err(UsageError(format!(
            "the packs `{}` and `{}` ask for different load profiles: give the profile in one of them (or mcpspec.yaml, or on the command line)",
            first.pack, other.pack
        )));
    }
    Ok(first.profile.clone())
}

/// The `load:` blocks of the packs of the workload's scenarios, each once.
fn packs_of<'a>(work: &'a [Work<'_>]) -> impl Iterator<Item = &'a PackWorkload> + Clone {
    let mut seen = std::collections::HashSet::new();
    let packs: Vec<&'a PackWorkload> = work
        .iter()
        .filter_map(|w| w.scenario.pack_load.as_deref())
        .filter(|p| seen.insert(p.pack.clone()))
        .collect();
    packs.into_iter()
}

/// The weights of the mix leave something to run: told at the first weight written.
pub(super) fn weights_hold(work: &[Work<'_>]) -> Result<(), crate::ground::load_error::LoadErrors> {
    if work.iter().map(|w| w.weight).sum::<f64>() > 0.0 {
        return Ok(());
    }
    let pos = work
        .iter()
        .find_map(|w| w.scenario.load.as_ref().map(|l| l.weight_pos.clone()))
        .unwrap_or_else(|| work[0].scenario.pos.clone());
    Err(crate::ground::load_error::LoadError::at(
        pos,
        "the weights of the workload's scenarios sum to 0: nothing would run",
    )
    .with_help("give at least one scenario of the run a weight above 0 (the default is 1)")
    .into())
}

/// The profile: `parts` completed with the defaults, its connections bounded as the
/// transport needs.
pub(super) fn profile(args: &LoadArgs, http: bool, shared: bool, parts: ProfileParts) -> Profile {
    let pace = parts
        .stages
        .first()
        .map(|s| s.pace)
        .or(parts.pace)
        .unwrap_or(Pace::Clients(1));
    let length = if parts.stages.is_empty() {
        match (parts.iterations, parts.duration) {
            (Some(n), _) => Length::Iterations(n),
            (None, d) => Length::Duration(d.unwrap_or(DEFAULT_DURATION)),
        }
    } else {
        Length::Duration(parts.stages.iter().map(|s| s.duration).sum())
    };
    let mut profile = Profile {
        pace,
        length,
        warmup: parts.warmup.unwrap_or(Duration::ZERO),
        connections: 1,
        ramp: parts.ramp,
        stages: parts.stages,
        think: parts.think.unwrap_or(Duration::ZERO),
        shared_process: shared,
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    profile.connections = match (pace, http) {
        // Over HTTP a client is a connection: every client has its own; so on a shared
        // stdio process, where a client is a connection on it.
        (Pace::Clients(_), true) => profile.most_clients().unwrap_or(1),
        (Pace::Clients(_), false) if shared => profile.most_clients().unwrap_or(1),
        (Pace::Rate(_), true) => args.jobs.unwrap_or(HTTP_IN_FLIGHT),
        (Pace::Rate(_), false) if shared => args.jobs.unwrap_or(HTTP_IN_FLIGHT),
        (_, false) => args.jobs.unwrap_or(cores),
    };
    profile
}

/// The budgets: the flags' (of the run), `mcpspec.yaml`'s, the packs', the scenarios'.
/// The run's error rate always has one (default 0%: any error breaks it, as any failure
/// fails a run) unless a file gives it.
pub(super) fn budgets(args: &LoadArgs, config: &[Budget], work: &[Work<'_>]) -> Vec<Budget> {
    let run = |limit| Budget {
        scope: BudgetScope::Run,
        limit,
    };
    let mut budgets = Vec::new();
    for (quantile, limit) in [(0.95, args.p95), (0.99, args.p99)] {
        if let Some(at_most) = limit {
            budgets.push(run(Limit::Percentile { quantile, at_most }));
        }
    }
    let in_files = config
        .iter()
        .chain(packs_of(work).flat_map(|p| &p.budgets))
        .chain(
            work.iter()
                .filter_map(|w| w.scenario.load.as_ref())
                .flat_map(|l| &l.budgets),
        );
    let run_error_rate =
        |b: &Budget| b.scope == BudgetScope::Run && matches!(b.limit, Limit::ErrorRate(_));
    match args.max_error_rate {
        Some(pct) => budgets.push(run(Limit::ErrorRate(pct))),
        None if !in_files.clone().any(run_error_rate) => budgets.push(run(Limit::ErrorRate(0.0))),
        None => {}
    }
    if let Some(rps) = args.min_throughput {
        budgets.push(run(Limit::MinThroughput(rps)));
    }
    budgets.extend(in_files.cloned());
    budgets
}

#[cfg(test)]
mod tests {
    use super::shard_parts;
    use crate::language::dsl::workload::Pace;
    use crate::language::dsl::workload::ProfileParts;

    #[test]
    fn a_shard_takes_its_share_of_the_profile() {
        let shard = |k: usize, n: usize| crate::face::select::Shard {
            index: k - 1,
            count: n,
        };
        let mut parts = ProfileParts {
            pace: Some(Pace::Rate(30.0)),
            iterations: Some(10),
            ..ProfileParts::default()
        };
        shard_parts(&mut parts, shard(1, 3)).unwrap();
        assert_eq!(
            (parts.pace, parts.iterations),
            (Some(Pace::Rate(10.0)), Some(4))
        );
        let clients = |k| {
            let mut parts = ProfileParts {
                pace: Some(Pace::Clients(5)),
                ..ProfileParts::default()
            };
            shard_parts(&mut parts, shard(k, 3)).map(|()| parts.pace)
        };
        assert_eq!(clients(2).unwrap(), Some(Pace::Clients(2)));
        assert_eq!(clients(3).unwrap(), Some(Pace::Clients(1)));
        let mut one = ProfileParts::default();
        assert!(
            shard_parts(&mut one, shard(2, 2))
                .unwrap_err()
                .0
                .contains("leave this shard none")
        );
    }
}
