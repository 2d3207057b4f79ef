//! `mcpspec eval compare BASE.json CANDIDATE.json`: read two eval results files, compare
//! them task by task (see [`crate::run::eval::compare`]) and print / write the outcome.
//! Exit 1 on a regression, 0 clean, 2 when a file cannot be read or compared.

use std::path::Path;

use serde::Deserialize;

use crate::face::cli::{EvalCompareArgs, exit};
use crate::ground::load_error::{LoadError, read_source};
use crate::ground::source::Pos;
use crate::run::eval::compare;
use crate::run::eval::compare::thresholds::{self, Thresholds};
use crate::run::eval::compare_output::{self, Labels};
use crate::run::eval::compare_view::Spend;
use crate::run::eval::results::{EvalResults, RESULTS_FORMAT};
use crate::run::eval::runs::{EvalRuns, RUNS_FORMAT};
use crate::run::eval::{compare_html, compare_markdown};

pub fn eval_compare(args: EvalCompareArgs) -> i32 {
    let thresholds = match thresholds(&args) {
        Ok(t) => t,
        Err(e) => {
            errln!("error: {e}");
            return exit::INVALID_INPUT;
        }
    };
    let candidate_path = args.candidate.as_deref().unwrap_or(&args.base);
    let (base, cand) = match (read(&args.base), read(candidate_path)) {
        (Ok(b), Ok(c)) => (b, c),
        (Err(e), _) | (_, Err(e)) => {
            errln!("{}", e.render());
            return exit::INVALID_INPUT;
        }
    };
    let pick = |input, path: &Path, side: &str, own: &Option<String>| {
        pick_run(input, path, side, own.as_deref().or(args.model.as_deref()))
    };
    let (base, cand) = match (
        pick(base, &args.base, "base", &args.base_model),
        pick(cand, candidate_path, "candidate", &args.candidate_model),
    ) {
        (Ok(b), Ok(c)) => (b, c),
        (Err(e), _) | (_, Err(e)) => {
            errln!("error: {e}");
            return exit::INVALID_INPUT;
        }
    };
    let (b, c) = (base.label, cand.label);
    let (base, cand) = (base.run, cand.run);
    if b == c {
        errln!(
            "error: the base and the candidate are the same run ({b}): name two files, or two models of one file with --base-model and --candidate-model"
        );
        return exit::INVALID_INPUT;
    }
    // A partial side never clears the gate: said after the table (or instead of it).
    let incomplete = compare::incomplete(&base, &cand).filter(|_| !args.allow_partial);
    let refuse_partial = |why: &str| {
        errln!(
            "error: {why}\nerror: a partial run cannot clear the gate (exit 5): re-run it, or compare what ran with --allow-partial"
        );
        exit::INCOMPLETE
    };
    let mut comparison = match compare::compare(&base, &cand, &thresholds) {
        Ok(c) => c,
        Err(_) if incomplete.is_some() => {
            return refuse_partial(incomplete.as_deref().unwrap_or_default());
        }
        Err(compare::Mismatch(m)) => {
            errln!("error: cannot compare {b} with {c}: {m}");
            return exit::INVALID_INPUT;
        }
    };
    comparison.incomplete.clone_from(&incomplete);
    let labels = Labels {
        base: &b,
        candidate: &c,
    };
    let text = compare_output::to_text(&comparison, &labels, args.verbose);
    let json_to_stdout = super::report_files::is_stdout(args.json.as_deref());
    if json_to_stdout {
        err!("{text}");
    } else {
        out!("{text}");
    }
    if let Some(path) = &args.json {
        let doc = compare_output::to_json(&comparison, &labels);
        if json_to_stdout {
            out!("{doc}");
        } else if let Err(code) = super::report_files::write_reports_file(path, doc) {
            return code;
        }
    }
    if let Some(path) = &args.junit
        && let Err(code) = super::report_files::write_reports_file(
            path,
            compare_output::to_junit(&comparison, &labels, args.junit_flavor.unwrap_or_default()),
        )
    {
        return code;
    }
    let spend = Spend::of(&base, &cand);
    if let Err(code) = write_summaries(&args, &comparison, &labels, &spend) {
        return code;
    }
    if let Some(why) = &incomplete {
        refuse_partial(why)
    } else if comparison.regression {
        exit::FAILED
    } else {
        exit::OK
    }
}

/// The reports meant for people: the HTML page, the Markdown summary (to a file, and
/// appended to `$GITHUB_STEP_SUMMARY` with `--step-summary`).
fn write_summaries(
    args: &EvalCompareArgs,
    c: &compare::Comparison,
    labels: &Labels,
    spend: &Spend,
) -> Result<(), i32> {
    let secrets = crate::ground::redact::known().values().to_vec();
    if let Some(path) = &args.html {
        super::report_files::write_reports_file(
            path,
            compare_html::to_html(c, labels, spend, &secrets),
        )?;
    }
    if args.markdown.is_none() && !args.step_summary {
        return Ok(());
    }
    let md = compare_markdown::to_markdown(c, labels, spend, &secrets);
    if let Some(path) = &args.markdown {
        super::report_files::write_reports_file(path, md.clone())?;
    }
    if args.step_summary {
        append_step_summary(&md)?;
    }
    Ok(())
}

/// Append to the file `$GITHUB_STEP_SUMMARY` names; a warning when it is not set (not on
/// GitHub Actions), an error when it cannot be written.
fn append_step_summary(md: &str) -> Result<(), i32> {
    use std::io::Write as _;
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        errln!(
            "warning: --step-summary: GITHUB_STEP_SUMMARY is not set (not on GitHub Actions): no step summary written"
        );
        return Ok(());
    };
    let path = std::path::PathBuf::from(path);
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| writeln!(f, "{md}"))
        .map_err(|e| {
            errln!(
                "error: cannot append to GITHUB_STEP_SUMMARY ({}): {e}",
                path.display()
            );
            exit::INVALID_INPUT
        })
}

fn thresholds(args: &EvalCompareArgs) -> Result<Thresholds, String> {
    let flag =
        |name: &str, v: &str| thresholds::parse_percent(v).map_err(|e| format!("--{name} {e}"));
    Ok(Thresholds {
        pass_rate: thresholds::parse_rate(&args.pass_rate)
            .map_err(|e| format!("--pass-rate {e}"))?,
        max_calls_increase: flag("max-calls-increase", &args.max_calls_increase)?,
        max_tokens_increase: flag("max-tokens-increase", &args.max_tokens_increase)?,
        max_tool_errors_increase: flag("max-tool-errors-increase", &args.max_tool_errors_increase)?,
        max_judge_drop: thresholds::parse_score_limit(&args.max_judge_drop)
            .map_err(|e| format!("--max-judge-drop {e}"))?,
    })
}

/// A results file: one run, or several models' runs (`mcpspec-eval-runs/1`).
pub(super) enum Input {
    One(Box<EvalResults>),
    Several(Vec<EvalResults>),
}

/// One side of the comparison, and how the console names it.
pub(super) struct Picked {
    pub(super) run: EvalResults,
    pub(super) label: String,
}

/// The run a side compares: the file's only run, or its run of `profile`. A several-models
/// file without a profile is ambiguous and refused.
pub(super) fn pick_run(
    input: Input,
    path: &Path,
    side: &str,
    profile: Option<&str>,
) -> Result<Picked, String> {
    let file = path.display();
    match input {
        Input::One(run) => match profile {
            Some(p) if p != run.model.profile => Err(format!(
                "{file} is a run of model profile `{}`, not `{p}` (the {side}'s profile)",
                run.model.profile
            )),
            _ => Ok(Picked {
                run: *run,
                label: file.to_string(),
            }),
        },
        Input::Several(runs) => {
            let names: Vec<String> = runs.iter().map(|r| r.model.profile.clone()).collect();
            let Some(p) = profile else {
                return Err(format!(
                    "{file} holds the runs of {} models ({}): say which one the {side} is with --{side}-model PROFILE (or --model PROFILE for both sides)",
                    runs.len(),
                    names.join(", ")
                ));
            };
            let run = runs
                .into_iter()
                .find(|r| r.model.profile == p)
                .ok_or_else(|| {
                    format!(
                        "{file} has no run of model profile `{p}` (it has: {})",
                        names.join(", ")
                    )
                })?;
            Ok(Picked {
                run,
                label: format!("{file} [{p}]"),
            })
        }
    }
}

/// Read one results file: JSON errors at `file:line:col` with the snippet; a `format` of
/// another major version is refused whatever the shape (its shape may differ). One parse
/// when the file is good; the `format` key alone is looked at only to explain a failure.
pub(super) fn read(path: &Path) -> Result<Input, LoadError> {
    let file = read_source(path)?;
    let at = |line: usize, col: usize, msg: String| {
        LoadError::at(Pos::new(&file, line as u32, col as u32), msg)
    };
    let help = format!(
        "an eval results file (`mcpspec eval run --json`) has \"format\": \"{RESULTS_FORMAT}\""
    );
    let wrong_format = |shown: String| {
        let (line, col) = value_position(&file.text, "format").unwrap_or((1, 1));
        at(
            line,
            col,
            format!("unsupported results format `{shown}`: this mcpspec reads {RESULTS_FORMAT}"),
        )
        .with_help(help.clone())
    };
    let supported = |f: &str| major(f).is_some() && major(f) == major(RESULTS_FORMAT);
    let shape_error = match serde_json::from_str::<EvalResults>(&file.text) {
        Ok(results) if supported(&results.format) => return Ok(Input::One(Box::new(results))),
        Ok(results) => return Err(wrong_format(results.format)),
        Err(e) => e,
    };
    /// The `format` key alone (serde skips the rest without building it).
    #[derive(Deserialize)]
    struct Head {
        format: Option<serde_json::Value>,
    }
    match serde_json::from_str::<Head>(&file.text) {
        Err(e) => Err(at(
            e.line(),
            e.column(),
            format!("not valid JSON: {}", strip_pos(&e)),
        )),
        Ok(Head { format: None }) => Err(LoadError::file(
            file.name.clone(),
            "not an eval results file: no `format` key",
        )
        .with_help(help.clone())),
        Ok(Head {
            format: Some(serde_json::Value::String(f)),
        }) if supported(&f) => Err(at(
            shape_error.line(),
            shape_error.column(),
            format!("not an eval results file: {}", strip_pos(&shape_error)),
        )),
        Ok(Head {
            format: Some(serde_json::Value::String(f)),
        }) if major_of(&f, RUNS_FORMAT).is_some()
            && major_of(&f, RUNS_FORMAT) == major_of(RUNS_FORMAT, RUNS_FORMAT) =>
        {
            let runs: EvalRuns = serde_json::from_str(&file.text).map_err(|e| {
                at(
                    e.line(),
                    e.column(),
                    format!("not an eval runs file: {}", strip_pos(&e)),
                )
            })?;
            match runs.runs.iter().find(|r| !supported(&r.format)) {
                Some(r) => Err(wrong_format(r.format.clone())),
                None => Ok(Input::Several(runs.runs)),
            }
        }
        Ok(Head {
            format: Some(other),
        }) => Err(wrong_format(match other {
            serde_json::Value::String(s) => s,
            v => v.to_string(),
        })),
    }
}

/// `mcpspec-eval-results/1` or `…/1.2` → `1`, for the `mcpspec-eval-results` name only.
fn major(format: &str) -> Option<&str> {
    major_of(format, RESULTS_FORMAT)
}

/// The major version of `format` when it has the name of `of` (`NAME/MAJOR[.MINOR]`).
fn major_of<'a>(format: &'a str, of: &str) -> Option<&'a str> {
    let (name, version) = format.split_once('/')?;
    let expected = of.split_once('/').map(|(n, _)| n)?;
    (name == expected).then(|| version.split('.').next().unwrap_or(version))
}

/// serde_json appends " at line L column C"; the snippet shows the position.
fn strip_pos(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// 1-based line and column of the value of the first `"key":` in the text.
fn value_position(text: &str, key: &str) -> Option<(usize, usize)> {
    let needle = format!("\"{key}\"");
    let start = text.find(&needle)? + needle.len();
    let rest = &text[start..];
    let colon = rest.find(':')?;
    let after = &rest[colon + 1..];
    let value = start + colon + 1 + (after.len() - after.trim_start().len());
    let before = &text[..value];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rsplit('\n')
        .next()
        .map(|l| l.chars().count())
        .unwrap_or(0)
        + 1;
    Some((line, col))
}
